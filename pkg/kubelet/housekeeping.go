package kubelet

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/cm"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// Housekeeping (upstream: pkg/kubelet/kubelet_pods.go HandlePodCleanups): every 2 s the
// syncLoop removes what no desired pod needs any more, one step after the other as upstream
// reads. It stops no container itself: a pod still running in the runtime that no worker knows
// goes to the pod workers to be stopped (SyncTerminatingRuntimePod), as every other pod does.

// orphanGracePeriod is the grace period of a pod found only in the runtime: 1 s, as upstream's
// HandlePodCleanups and SyncTerminatingRuntimePod give it.
const orphanGracePeriod int64 = 1

// HandlePodCleanups is housekeeping (upstream: kubelet_pods.go HandlePodCleanups): stop workers
// of pods no longer desired and forget their statuses, hand pods running in the runtime that
// no worker knows to the pod workers to stop, and remove from the runtime and the disk what pods
// that are gone left behind.
func (k *Kubelet) HandlePodCleanups(ctx context.Context) error {
	if !k.podSources.AllSourcesReady() {
		return nil // until every source has spoken, a running pod may just not have arrived yet
	}
	desired := map[types.UID]bool{}
	for _, pod := range k.podManager.GetPods() {
		desired[pod.UID] = true
	}
	// Stop the workers of pods no longer desired; keep what desired pods and workers use.
	keep := k.syncKnownPods(desired)
	// Forget the statuses, probes, waiting reasons and evictions of pods that are gone.
	k.removeOrphanedPodState(desired, keep)

	runtimePods, err := k.containerRuntime.GetPods(ctx, true)
	if err != nil {
		return err
	}
	// Pods the runtime runs that no worker knows: their workers stop them. Pods that are gone
	// and run nothing: removed from the runtime (upstream: the container GC).
	errs := []error{k.cleanupRuntimePods(ctx, runtimePods, keep)}
	// Remove orphaned volumes, logs and cgroups.
	// (upstream: the projected volume's TearDown forgets its pod's tokens; the manager keeps the
	// directories of pods whose volumes its reconciler has not torn down yet.)
	k.tokens.CleanupPods(keep)
	errs = append(errs, k.volumeManager.CleanupOrphanedPodDirs(ctx, keep), cleanupPodLogDirs(k.opts.Config.PodLogsDir, keep))
	if root := podCgroupRoot(k.opts); root != "" { // upstream cleanupOrphanedPodCgroups
		n, err := cm.RemoveOrphanedPodCgroups(root, keep)
		if n > 0 {
			klog.FromContext(ctx).V(2).Info("Removed the cgroups of pods that are gone", "count", n)
		}
		errs = append(errs, err)
	}
	// Clean up the containers' restart back-off entries of containers that are gone.
	k.containerRuntime.GCBackoffs()
	// Remove any orphaned mirror pods.
	for _, mirror := range k.podManager.GetOrphanedMirrorPods() {
		uid := mirror.UID
		if _, err := k.podManager.DeleteMirrorPod(ctx, mirror.Namespace, mirror.Name, &uid); err != nil {
			errs = append(errs, err)
		}
	}
	k.metrics.RunningPods.Set(float64(countReadySandboxes(runtimePods)))
	k.metrics.RunningContainers.Set(float64(countRunningContainers(runtimePods)))
	klog.FromContext(ctx).V(3).Info("Housekeeping", "podWorkers", k.podWorkers.Count(), "statuses", k.statusManager.Len(), "runtimePods", len(runtimePods))
	return errors.Join(errs...)
}

// syncKnownPods tells the pod workers which pods are desired (upstream podWorkers.SyncKnownPods):
// the others start terminating, finished ones go. A pod created again while its worker stopped it
// gets a new worker. It returns the pods to keep: desired, or still known to a worker.
func (k *Kubelet) syncKnownPods(desired map[types.UID]bool) map[types.UID]bool {
	states, restart := k.podWorkers.SyncKnownPods(desired)
	for _, uid := range restart {
		if pod, ok := k.podManager.GetPodByUID(uid); ok {
			k.dispatch(pod, podworkers.SyncPodCreate)
		}
	}
	keep := maps.Clone(desired)
	for uid := range states {
		keep[uid] = true
	}
	return keep
}

// removeOrphanedPodState forgets what the status manager, the prober and the Kubelet hold about
// pods that are gone (upstream: statusManager.RemoveOrphanedStatuses, probeManager.CleanupPods).
func (k *Kubelet) removeOrphanedPodState(desired, keep map[types.UID]bool) {
	k.statusManager.RemoveOrphanedStatuses(keep)
	k.probes.manager.CleanupPods(desired)
	k.metrics.PodWorkers.Set(float64(k.podWorkers.Count()))
	k.metrics.StatusManagerEntries.Set(float64(k.statusManager.Len()))
	k.reasonsMu.Lock()
	defer k.reasonsMu.Unlock()
	maps.DeleteFunc(k.reasons, func(uid types.UID, _ map[string]kuberuntime.ContainerError) bool { return !keep[uid] })
	maps.DeleteFunc(k.evicted, func(uid types.UID, _ *podEviction) bool { return !keep[uid] })
	gone := func(uid types.UID, _ *corev1.PodCondition) bool { return !keep[uid] }
	maps.DeleteFunc(k.resizePending, gone)
	maps.DeleteFunc(k.resizeInProgress, gone)
}

// cleanupRuntimePods handles the runtime's pods that are not kept. One that still runs (a
// running container or a ready sandbox) is an orphan: it goes to the pod workers as a SyncPodKill
// with the RunningPod, its worker stops it within orphanGracePeriod (upstream
// HandlePodCleanups' "Clean up orphaned pod containers"), and it is added to keep until then.
// One that runs nothing is removed: its containers and sandboxes (upstream: the container GC's
// removal of a deleted pod's).
func (k *Kubelet) cleanupRuntimePods(ctx context.Context, runtimePods []*kubecontainer.RunningPod, keep map[types.UID]bool) error {
	logger := klog.FromContext(ctx)
	var errs []error
	for _, rp := range runtimePods {
		if keep[rp.ID] {
			continue
		}
		if isRunning(rp) {
			logger.V(2).Info("Clean up orphaned pod containers", "pod", klog.KRef(rp.Namespace, rp.Name), "podUID", rp.ID)
			grace := orphanGracePeriod
			k.podWorkers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, RunningPod: rp, GracePeriodOverride: &grace})
			keep[rp.ID] = true // its volumes, logs and cgroup stay until its worker has stopped it
			continue
		}
		logger.V(2).Info("Removing a pod that is no longer desired from the runtime", "pod", klog.KRef(rp.Namespace, rp.Name), "podUID", rp.ID)
		errs = append(errs, k.containerRuntime.RemovePod(ctx, rp))
	}
	return errors.Join(errs...)
}

// isRunning reports whether a runtime pod has a running container or a ready sandbox.
func isRunning(rp *kubecontainer.RunningPod) bool {
	return countReadySandboxes([]*kubecontainer.RunningPod{rp}) > 0 || countRunningContainers([]*kubecontainer.RunningPod{rp}) > 0
}

// cleanupPodLogDirs removes <pod-logs-dir>/<ns>_<name>_<uid> of pods not in keep.
func cleanupPodLogDirs(dir string, keep map[types.UID]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		i := strings.LastIndexByte(e.Name(), '_')
		if i < 0 || keep[types.UID(e.Name()[i+1:])] {
			continue
		}
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

func countReadySandboxes(pods []*kubecontainer.RunningPod) int {
	n := 0
	for _, rp := range pods {
		for _, s := range rp.Sandboxes {
			if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
				n++
				break
			}
		}
	}
	return n
}

func countRunningContainers(pods []*kubecontainer.RunningPod) int {
	n := 0
	for _, rp := range pods {
		for _, c := range rp.Containers {
			if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
				n++
			}
		}
	}
	return n
}
