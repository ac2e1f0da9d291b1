package kubelet

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/podmanager"
	"github.com/minikubelet/minikubelet/pkg/podsource"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
)

// The pod workers' three sync functions (upstream: pkg/kubelet/kubelet.go SyncPod,
// SyncTerminatingPod, SyncTerminatedPod): what one pod's worker does at each stage.

// setReasons records why the pod's containers wait and reports whether that changed.
func (p *pods) setReasons(uid types.UID, errs map[string]kuberuntime.ContainerError) bool {
	p.reasonsMu.Lock()
	defer p.reasonsMu.Unlock()
	old := p.reasons[uid]
	p.reasons[uid] = errs
	return !reflect.DeepEqual(old, errs) && (len(old) > 0 || len(errs) > 0)
}

func (p *pods) statusInputs(pod *corev1.Pod) statusInputs {
	evict := p.evictedBy(pod) // the eviction manager's decision wins over the deadline's
	if evict == nil {
		evict = p.shouldEvict(pod) // outside the lock: it records an Event
	}
	p.reasonsMu.Lock()
	defer p.reasonsMu.Unlock()
	return statusInputs{nodeIP: p.cfg.NodeIP, runtimeName: p.cfg.RuntimeName, reasons: p.reasons[pod.UID], now: p.cfg.Clock.Now(),
		probes: p.probes.manager, evict: evict}
}

// SyncPod is a pod worker's sync of a running pod (upstream: kubelet.go SyncPod): publish the
// status the runtime shows, keep a static pod's mirror pod, and let kuberuntime start what
// should run.
func (p *pods) SyncPod(ctx context.Context, _ podworkers.UpdateType, pod, mirror *corev1.Pod, rs *kubecontainer.PodStatus) (bool, error) {
	apiStatus := generateAPIPodStatus(pod, rs, p.statusInputs(pod))
	p.status.SetPodStatus(pod, apiStatus)
	if apiStatus.Phase == corev1.PodSucceeded || apiStatus.Phase == corev1.PodFailed {
		return true, nil
	}
	if podsource.IsStaticPod(pod) {
		p.ensureMirrorPod(ctx, pod, mirror)
	}
	p.probes.manager.AddPod(pod) // probe its containers (a newer pod reaches existing workers)
	// Volumes before containers: write (or refresh) every Secret/ConfigMap/projected volume.
	if err := p.helper.setUpVolumes(ctx, pod); err != nil {
		// upstream's volume manager says the same in a FailedMount Event on the pod
		p.recorder.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "%v", err)
		return false, err
	}
	result := p.cfg.Runtime.SyncPod(ctx, pod, rs)
	if result.Changed {
		p.pleg.RelistSoon() // the next sync sees the started containers now, not at the next tick
	}
	if p.setReasons(pod.UID, result.ContainerErrors) { // show changed waiting reasons now, not at the next sync
		p.status.SetPodStatus(pod, generateAPIPodStatus(pod, rs, p.statusInputs(pod)))
	}
	return false, result.Err()
}

// ensureMirrorPod makes the API show a static pod: create its mirror pod, or replace an outdated one.
func (p *pods) ensureMirrorPod(ctx context.Context, pod, mirror *corev1.Pod) {
	logger := klog.FromContext(ctx)
	if mirror != nil && (mirror.DeletionTimestamp != nil || !podmanager.MirrorPodMatches(pod, mirror)) {
		uid := mirror.UID
		if _, err := p.manager.DeleteMirrorPod(ctx, mirror.Namespace, mirror.Name, &uid); err != nil {
			logger.Error(err, "Failed to delete an outdated mirror pod")
		}
		mirror = nil
	}
	if mirror == nil {
		if err := p.manager.CreateMirrorPod(ctx, pod); err != nil {
			logger.Error(err, "Failed to create the mirror pod")
		}
	}
}

// SyncTerminatingPod stops every container of the pod within its grace period, then publishes
// the terminal status (upstream: kubelet.go SyncTerminatingPod).
func (p *pods) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, rs *kubecontainer.PodStatus, grace int64) error {
	klog.FromContext(ctx).V(2).Info("Stopping pod", "pod", klog.KObj(pod), "gracePeriod", grace)
	p.probes.manager.StopLivenessAndStartup(pod) // a stopping pod is not restarted; readiness goes on
	if err := p.cfg.Runtime.KillPod(ctx, pod, rs, grace); err != nil {
		return err
	}
	after, err := p.cfg.Runtime.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return err
	}
	for _, c := range after.Containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return fmt.Errorf("container %s of pod %s/%s is still running after being stopped", c.Name, pod.Namespace, pod.Name)
		}
	}
	p.status.SetPodStatus(pod, terminalStatus(pod, generateAPIPodStatus(pod, after, p.statusInputs(pod))))
	return nil
}

// SyncTerminatedPod publishes the final status of a pod whose containers all stopped; the status
// manager then finishes a pending deletion in the API (upstream: kubelet.go SyncTerminatedPod).
func (p *pods) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, rs *kubecontainer.PodStatus) error {
	p.status.SetPodStatus(pod, terminalStatus(pod, generateAPIPodStatus(pod, rs, p.statusInputs(pod))))
	p.cfg.Secrets.UnregisterPod(pod) // its containers are gone: nothing reads its Secrets any more
	p.probes.manager.RemovePod(pod)
	klog.FromContext(ctx).V(2).Info("Pod terminated", "pod", klog.KObj(pod))
	return nil
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
