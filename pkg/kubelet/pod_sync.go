package kubelet

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/podmanager"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
)

// The pod workers' three sync functions (upstream: pkg/kubelet/kubelet.go SyncPod,
// SyncTerminatingPod, SyncTerminatedPod): what one pod's worker does at each stage.

// setReasons records why the pod's containers wait and reports whether that changed.
func (k *Kubelet) setReasons(uid types.UID, errs map[string]kuberuntime.ContainerError) bool {
	k.reasonsMu.Lock()
	defer k.reasonsMu.Unlock()
	old := k.reasons[uid]
	k.reasons[uid] = errs
	return !reflect.DeepEqual(old, errs) && (len(old) > 0 || len(errs) > 0)
}

func (k *Kubelet) statusInputs(pod *corev1.Pod) statusInputs {
	evict := k.evictedBy(pod) // the eviction manager's decision wins over the deadline's
	if evict == nil {
		evict = k.shouldEvict(pod) // outside the lock: it records an Event
	}
	k.reasonsMu.Lock()
	defer k.reasonsMu.Unlock()
	return statusInputs{nodeIP: k.nodeIP.String(), runtimeName: k.runtimeName, reasons: k.reasons[pod.UID], now: k.clock.Now(),
		probes: k.probes.manager, evict: evict, resizePending: k.resizePending[pod.UID],
		resizeInProgress: k.resizeInProgress[pod.UID]}
}

// SyncPod is a pod worker's sync of a running pod (upstream: kubelet.go SyncPod): publish the
// status the runtime shows, keep a static pod's mirror pod, and let kuberuntime start what
// should run.
func (k *Kubelet) SyncPod(ctx context.Context, _ podworkers.UpdateType, pod, mirror *corev1.Pod, rs *kubecontainer.PodStatus) (bool, error) {
	// From here on the pod is as allocated: a resize the node cannot give yet waits (pod_resize.go).
	pod, _, err := k.handlePodResize(pod)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Cannot decide the pod's resize; it keeps its resources", "pod", klog.KObj(pod))
	}
	k.trackResizeProgress(pod, rs)
	apiStatus := generateAPIPodStatus(pod, rs, k.statusInputs(pod))
	k.statusManager.SetPodStatus(pod, apiStatus)
	if apiStatus.Phase == corev1.PodSucceeded || apiStatus.Phase == corev1.PodFailed {
		return true, nil
	}
	if kubecontainer.IsStaticPod(pod) {
		k.ensureMirrorPod(ctx, pod, mirror)
	}
	k.probes.manager.AddPod(pod) // probe its containers (a newer pod reaches existing workers)
	// Volumes before containers: wait until the volume manager has set up every volume the
	// containers mount (and asked for a refresh of Secret/ConfigMap/projected/downwardAPI files).
	if err := k.volumeManager.WaitForAttachAndMount(ctx, pod); err != nil {
		if !wait.Interrupted(err) { // a timeout or a stopping pod: the reconciler's Events told why
			k.recorder.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "Unable to attach or mount volumes: %v", err)
		}
		return false, err
	}
	result := k.containerRuntime.SyncPod(ctx, pod, rs)
	if result.Changed {
		k.pleg.RelistSoon() // the next sync sees the started containers now, not at the next tick
	}
	if result.Resized { // no state changed: read the runtime again (pod_resize.go)
		rs = k.refreshAfterResize(ctx, pod, rs)
		k.trackResizeProgress(pod, rs)
	}
	if result.ResizeError != "" {
		k.resizeFailed(pod, result.ResizeError)
	}
	if result.Resized || result.ResizeError != "" {
		k.statusManager.SetPodStatus(pod, generateAPIPodStatus(pod, rs, k.statusInputs(pod)))
	}
	if k.setReasons(pod.UID, result.ContainerErrors) { // show changed waiting reasons now, not at the next sync
		k.statusManager.SetPodStatus(pod, generateAPIPodStatus(pod, rs, k.statusInputs(pod)))
	}
	return false, result.Err()
}

// ensureMirrorPod makes the API show a static pod: create its mirror pod, or replace an outdated one.
func (k *Kubelet) ensureMirrorPod(ctx context.Context, pod, mirror *corev1.Pod) {
	logger := klog.FromContext(ctx)
	if mirror != nil && (mirror.DeletionTimestamp != nil || !podmanager.MirrorPodMatches(pod, mirror)) {
		uid := mirror.UID
		if _, err := k.podManager.DeleteMirrorPod(ctx, mirror.Namespace, mirror.Name, &uid); err != nil {
			logger.Error(err, "Failed to delete an outdated mirror pod")
		}
		mirror = nil
	}
	if mirror == nil {
		if err := k.podManager.CreateMirrorPod(ctx, pod); err != nil {
			logger.Error(err, "Failed to create the mirror pod")
		}
	}
}

// SyncTerminatingPod stops every container of the pod within its grace period, then publishes
// the terminal status (upstream: kubelet.go SyncTerminatingPod).
func (k *Kubelet) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, rs *kubecontainer.PodStatus, grace int64) error {
	klog.FromContext(ctx).V(2).Info("Stopping pod", "pod", klog.KObj(pod), "gracePeriod", grace)
	k.probes.manager.StopLivenessAndStartup(pod) // a stopping pod is not restarted; readiness goes on
	if err := k.containerRuntime.KillPod(ctx, pod, rs, grace); err != nil {
		return err
	}
	after, err := k.containerRuntime.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return err
	}
	for _, c := range after.Containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return fmt.Errorf("container %s of pod %s/%s is still running after being stopped", c.Name, pod.Namespace, pod.Name)
		}
	}
	k.statusManager.SetPodStatus(pod, terminalStatus(pod, generateAPIPodStatus(pod, after, k.statusInputs(pod))))
	return nil
}

// SyncTerminatedPod publishes the final status of a pod whose containers all stopped; the status
// manager then finishes a pending deletion in the API (upstream: kubelet.go SyncTerminatedPod).
func (k *Kubelet) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, rs *kubecontainer.PodStatus) error {
	if err := k.allocation.remove(pod.UID); err != nil { // it holds nothing any more
		klog.FromContext(ctx).Error(err, "Cannot remove the pod's allocation", "pod", klog.KObj(pod))
	}
	k.setResizePending(pod.UID, nil)
	k.clearResizeInProgress(pod.UID)
	k.statusManager.SetPodStatus(pod, terminalStatus(pod, generateAPIPodStatus(pod, rs, k.statusInputs(pod))))
	k.secretManager.UnregisterPod(pod) // its containers are gone: nothing reads its Secrets any more
	k.probes.manager.RemovePod(pod)
	klog.FromContext(ctx).V(2).Info("Pod terminated", "pod", klog.KObj(pod))
	return nil
}

// SyncTerminatingRuntimePod stops a pod found only in the runtime, which housekeeping handed to
// the pod workers (upstream: kubelet.go SyncTerminatingRuntimePod): no spec, so no grace period
// of its own — 1 s, as upstream — and no status to publish.
func (k *Kubelet) SyncTerminatingRuntimePod(ctx context.Context, runningPod *kubecontainer.RunningPod) error {
	klog.FromContext(ctx).V(2).Info("Stopping an orphaned pod found only in the runtime", "pod", klog.KRef(runningPod.Namespace, runningPod.Name), "podUID", runningPod.ID)
	rs, err := k.containerRuntime.GetPodStatus(ctx, runningPod.ID, runningPod.Name, runningPod.Namespace)
	if err != nil {
		return err
	}
	return k.containerRuntime.KillPod(ctx, nil, rs, orphanGracePeriod)
}

// terminalStatus gives a stopped pod its final phase, as the kubelet does since v1.27 (upstream:
// getPhase for a terminal pod, then status_manager.go TerminatePod): Succeeded when every regular
// container exited 0, else Failed (sidecars do not count); a pod stopped before it ran (Pending)
// is Failed. Containers that never reported an end become terminated (statusmanager.TerminatedStatus).
func terminalStatus(pod *corev1.Pod, st corev1.PodStatus) corev1.PodStatus {
	if st.Phase == corev1.PodRunning {
		st.Phase = corev1.PodSucceeded
		for _, cs := range st.ContainerStatuses {
			end := cs.State.Terminated
			if end == nil {
				end = cs.LastTerminationState.Terminated
			}
			if end == nil || end.ExitCode != 0 {
				st.Phase = corev1.PodFailed
			}
		}
	}
	return statusmanager.TerminatedStatus(pod, st)
}
