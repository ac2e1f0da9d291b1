package kubelet

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// The syncLoop's handlers of configCh (upstream: pkg/kubelet/kubelet.go HandlePodAdditions,
// HandlePodUpdates, HandlePodRemoves, and lifecycle/predicate.go for admission).

func (p *pods) handlePodAdditions(added []*corev1.Pod) {
	sort.Slice(added, func(i, j int) bool { return added[i].CreationTimestamp.Before(&added[j].CreationTimestamp) })
	for _, pod := range added {
		p.manager.AddPod(pod)
		if p.manager.IsMirrorPod(pod) {
			if static, ok := p.manager.GetPodByMirrorPod(pod); ok {
				p.dispatch(static, podworkers.SyncPodUpdate)
			}
			continue
		}
		// Pods already terminal or being deleted are not admitted again: they only need to stop.
		if pod.DeletionTimestamp == nil && !isTerminal(pod) {
			if msg, ok := p.admit(pod); !ok {
				p.reject(pod, "OutOfpods", msg)
				continue
			}
		}
		p.cfg.Secrets.RegisterPod(pod)
		p.dispatch(pod, podworkers.SyncPodCreate)
	}
}

func (p *pods) handlePodUpdates(updated []*corev1.Pod) {
	for _, pod := range updated {
		p.manager.UpdatePod(pod)
		if p.manager.IsMirrorPod(pod) {
			if static, ok := p.manager.GetPodByMirrorPod(pod); ok {
				p.dispatch(static, podworkers.SyncPodUpdate)
			}
			continue
		}
		if st, ok := p.workers.State(pod.UID); !ok || st == podworkers.Syncing {
			p.cfg.Secrets.RegisterPod(pod) // a terminated pod reads no Secrets any more
		}
		p.dispatch(pod, podworkers.SyncPodUpdate)
	}
}

func (p *pods) handlePodRemoves(removed []*corev1.Pod) {
	for _, pod := range removed {
		p.manager.RemovePod(pod)
		if p.manager.IsMirrorPod(pod) {
			if static, ok := p.manager.GetPodByMirrorPod(pod); ok {
				p.dispatch(static, podworkers.SyncPodUpdate) // recreates the mirror pod
			}
			continue
		}
		p.cfg.Secrets.UnregisterPod(pod)
		p.probes.manager.RemovePod(pod)
		p.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	}
}

// admit is the kubelet's admission: minikubelet checks only the pod count (maxPods), as the
// first of upstream's admit handlers does.
func (p *pods) admit(pod *corev1.Pod) (string, bool) {
	if p.cfg.MaxPods <= 0 {
		return "", true
	}
	active := 0
	for _, other := range p.manager.GetPods() {
		if other.UID == pod.UID || other.Status.Phase == corev1.PodSucceeded || other.Status.Phase == corev1.PodFailed {
			continue
		}
		if st, ok := p.workers.State(other.UID); ok && st == podworkers.Syncing {
			active++
		}
	}
	if active >= p.cfg.MaxPods {
		return fmt.Sprintf("Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", active, p.cfg.MaxPods), false
	}
	return "", true
}

// reject marks a pod the node will not run as Failed, as upstream's rejectPod.
func (p *pods) reject(pod *corev1.Pod, reason, message string) {
	st := pod.Status.DeepCopy()
	st.Phase, st.Reason, st.Message = corev1.PodFailed, reason, "Pod was rejected: "+message
	p.status.SetPodStatus(pod, *st)
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
