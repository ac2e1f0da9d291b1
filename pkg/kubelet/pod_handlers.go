package kubelet

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
)

// The syncLoop's handlers of configCh (upstream: pkg/kubelet/kubelet.go HandlePodAdditions,
// HandlePodUpdates, HandlePodRemoves, HandlePodReconcile; admission is in admission.go).

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
			if a := p.admit(pod); !a.admit {
				p.reject(pod, a)
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

// handlePodReconcile takes pods whose API status someone else changed (RECONCILE: only the
// status differs). The pod manager gets the new copy, which generateAPIPodStatus reads the
// conditions of others from; a pod whose Ready condition no longer agrees with its readiness
// gates is synced at once, so Ready follows a gate patched through pods/status (upstream
// HandlePodReconcile with NeedToReconcilePodReadiness). Only pods the workers know are synced:
// never one admission rejected. A mirror pod's static pod has no API status of its own to
// compare: it is not synced here, as upstream.
func (p *pods) handlePodReconcile(pods []*corev1.Pod) {
	for _, pod := range pods {
		p.manager.UpdatePod(pod)
		if p.manager.IsMirrorPod(pod) || !statusmanager.NeedToReconcilePodReadiness(pod) {
			continue
		}
		if _, known := p.workers.State(pod.UID); known {
			p.dispatch(pod, podworkers.SyncPodSync)
		}
	}
}
