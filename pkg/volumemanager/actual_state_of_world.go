package volumemanager

// The actual state of world (upstream: pkg/kubelet/volumemanager/cache/actual_state_of_world.go):
// the volumes that are set up on disk, per pod, written only by the reconciler's operations.

import (
	"maps"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// mountedVolume is a volume that is set up: the host path the runtime bind-mounts.
type mountedVolume struct {
	volumeToMount
	dir string
	pod journal.PodRef // whose volume, for the journal's tearDown after the pod is gone
	// remountRequired: set up again (ReprocessPod on a pod sync, for a plugin whose content
	// follows API objects); the volume stays usable meanwhile.
	remountRequired bool
}

// actualStateOfWorld is safe for concurrent use.
type actualStateOfWorld struct {
	mu   sync.Mutex
	pods map[types.UID]map[string]mountedVolume // pod → outer volume name → volume
}

func newActualStateOfWorld() *actualStateOfWorld {
	return &actualStateOfWorld{pods: map[types.UID]map[string]mountedVolume{}}
}

func (a *actualStateOfWorld) markMounted(uid types.UID, v mountedVolume) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pods[uid] == nil {
		a.pods[uid] = map[string]mountedVolume{}
	}
	a.pods[uid][v.outerName] = v
}

func (a *actualStateOfWorld) markUnmounted(uid types.UID, outerName string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pods[uid], outerName)
	if len(a.pods[uid]) == 0 {
		delete(a.pods, uid)
	}
}

// markRemountRequired asks for the pod's volumes whose plugin needs it to be set up again
// (upstream MarkRemountRequired).
func (a *actualStateOfWorld) markRemountRequired(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name, v := range a.pods[uid] {
		if v.plugin.requiresRemount(v.spec) {
			v.remountRequired = true
			a.pods[uid][name] = v
		}
	}
}

// mountedVolumes returns the pod's set-up volumes by outer name, a copy.
func (a *actualStateOfWorld) mountedVolumes(uid types.UID) map[string]mountedVolume {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.pods[uid])
}

// podsWithVolumes returns every pod that has a volume set up, a copy.
func (a *actualStateOfWorld) podsWithVolumes() map[types.UID]map[string]mountedVolume {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[types.UID]map[string]mountedVolume, len(a.pods))
	for uid, vols := range a.pods {
		out[uid] = maps.Clone(vols)
	}
	return out
}
