package podmanager

import (
	"cmp"
	"errors"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/pkg/podsource"
)

// Config configures the Manager.
type Config struct {
	// Client creates and deletes mirror pods. Required.
	Client kubernetes.Interface
	// NodeName owns the mirror pods (their owner reference). Required.
	NodeName string
	// Clock is optional. The manager keeps no timers today (it is a store, not a loop); the field
	// is here so every component is configured the same way.
	Clock clock.Clock
}

// Manager stores the pods the kubelet should run and the mirror pods of its static pods. It
// embeds the MirrorClient, so m.CreateMirrorPod / m.DeleteMirrorPod talk to the API server.
type Manager struct {
	*MirrorClient

	lock sync.RWMutex
	// Regular and static pods.
	podByUID      map[types.UID]*corev1.Pod
	podByFullName map[types.NamespacedName]*corev1.Pod
	// Mirror pods (API copies of static pods), keyed by their own UID and by name.
	mirrorPodByUID      map[types.UID]*corev1.Pod
	mirrorPodByFullName map[types.NamespacedName]*corev1.Pod
}

// New validates cfg and returns an empty Manager.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil || cfg.NodeName == "" {
		return nil, errors.New("podmanager: Client and NodeName are required")
	}
	m := &Manager{MirrorClient: NewMirrorClient(cfg.Client, cfg.NodeName)}
	m.SetPods(nil)
	return m, nil
}

// IsMirrorPod tells whether pod is a mirror pod: it has the kubernetes.io/config.mirror annotation.
func IsMirrorPod(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[podsource.ConfigMirrorAnnotationKey]
	return ok
}

// IsMirrorPod is the package function IsMirrorPod, for callers that hold a Manager.
func (m *Manager) IsMirrorPod(pod *corev1.Pod) bool {
	return IsMirrorPod(pod)
}

func fullName(pod *corev1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// SetPods replaces everything the manager knows with pods (mirror pods sorted out by annotation).
func (m *Manager) SetPods(pods []*corev1.Pod) {
	m.lock.Lock()
	defer m.lock.Unlock()
	m.podByUID = map[types.UID]*corev1.Pod{}
	m.podByFullName = map[types.NamespacedName]*corev1.Pod{}
	m.mirrorPodByUID = map[types.UID]*corev1.Pod{}
	m.mirrorPodByFullName = map[types.NamespacedName]*corev1.Pod{}
	for _, pod := range pods {
		m.storeLocked(pod)
	}
}

// AddPod stores a new pod; it is UpdatePod, as upstream.
func (m *Manager) AddPod(pod *corev1.Pod) {
	m.UpdatePod(pod)
}

// UpdatePod stores pod, replacing the pod with the same UID, into the mirror maps if it is a
// mirror pod and into the pod maps otherwise.
func (m *Manager) UpdatePod(pod *corev1.Pod) {
	m.lock.Lock()
	defer m.lock.Unlock()
	m.storeLocked(pod)
}

func (m *Manager) storeLocked(pod *corev1.Pod) {
	if IsMirrorPod(pod) {
		m.mirrorPodByUID[pod.UID] = pod
		m.mirrorPodByFullName[fullName(pod)] = pod
		return
	}
	m.podByUID[pod.UID] = pod
	m.podByFullName[fullName(pod)] = pod
}

// RemovePod forgets pod (a regular, static or mirror pod). The name entry is dropped only if it
// still holds this UID, so removing an old pod never hides a newer one with the same name.
func (m *Manager) RemovePod(pod *corev1.Pod) {
	m.lock.Lock()
	defer m.lock.Unlock()
	byUID, byName := m.podByUID, m.podByFullName
	if IsMirrorPod(pod) {
		byUID, byName = m.mirrorPodByUID, m.mirrorPodByFullName
	}
	delete(byUID, pod.UID)
	if cur, ok := byName[fullName(pod)]; ok && cur.UID == pod.UID {
		delete(byName, fullName(pod))
	}
}

// GetPods returns the regular and static pods (never mirror pods), in no particular order.
func (m *Manager) GetPods() []*corev1.Pod {
	m.lock.RLock()
	defer m.lock.RUnlock()
	pods := make([]*corev1.Pod, 0, len(m.podByUID))
	for _, pod := range m.podByUID {
		pods = append(pods, pod)
	}
	return pods
}

// GetPodByUID finds a regular or static pod by its UID (a mirror pod's UID finds nothing).
func (m *Manager) GetPodByUID(uid types.UID) (*corev1.Pod, bool) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	pod, ok := m.podByUID[uid]
	return pod, ok
}

// GetPodByFullName finds a regular or static pod by namespace and name.
func (m *Manager) GetPodByFullName(namespace, name string) (*corev1.Pod, bool) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	pod, ok := m.podByFullName[types.NamespacedName{Namespace: namespace, Name: name}]
	return pod, ok
}

// GetMirrorPodByPod finds the mirror pod of a static pod: the mirror with its namespace and name.
// The mirror may be stale; check it with MirrorPodMatches.
func (m *Manager) GetMirrorPodByPod(pod *corev1.Pod) (*corev1.Pod, bool) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	mirror, ok := m.mirrorPodByFullName[fullName(pod)]
	return mirror, ok
}

// GetPodByMirrorPod finds the static pod a mirror pod stands for (same namespace and name).
func (m *Manager) GetPodByMirrorPod(mirror *corev1.Pod) (*corev1.Pod, bool) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	pod, ok := m.podByFullName[fullName(mirror)]
	return pod, ok
}

// GetOrphanedMirrorPods returns the mirror pods whose static pod is gone, sorted by
// namespace/name; the kubelet deletes them (with their UID as a precondition).
func (m *Manager) GetOrphanedMirrorPods() []*corev1.Pod {
	m.lock.RLock()
	defer m.lock.RUnlock()
	var orphans []*corev1.Pod
	for name, mirror := range m.mirrorPodByFullName {
		if _, ok := m.podByFullName[name]; !ok {
			orphans = append(orphans, mirror)
		}
	}
	slices.SortFunc(orphans, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return orphans
}
