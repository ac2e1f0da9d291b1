package kubelet

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
)

// The syncLoop's pod handlers (upstream: pkg/kubelet/kubelet.go HandlePodAdditions,
// HandlePodUpdates, HandlePodRemoves, HandlePodReconcile, HandlePodSyncs; admission is in
// admission.go, HandlePodCleanups in housekeeping.go). The first four take configCh's ADD,
// UPDATE and DELETE, REMOVE and RECONCILE; HandlePodSyncs the pods PLEG, syncCh and the probes
// ask to sync.

// HandlePodAdditions admits each new pod, oldest first, and gives the admitted ones to their
// workers; a rejected pod gets a Failed status and no worker.

func (k *Kubelet) HandlePodAdditions(added []*corev1.Pod) {
	sort.Slice(added, func(i, j int) bool { return added[i].CreationTimestamp.Before(&added[j].CreationTimestamp) })
	for _, pod := range added {
		k.podManager.AddPod(pod)
		if k.podManager.IsMirrorPod(pod) {
			if static, ok := k.podManager.GetPodByMirrorPod(pod); ok {
				k.dispatch(static, podworkers.SyncPodUpdate)
			}
			continue
		}
		// Pods already terminal or being deleted are not admitted again: they only need to stop.
		if pod.DeletionTimestamp == nil && !isTerminal(pod) {
			if a := k.admit(pod); !a.admit {
				k.reject(pod, a)
				continue
			}
		}
		k.secretManager.RegisterPod(pod)
		k.dispatch(pod, podworkers.SyncPodCreate)
	}
}

// HandlePodUpdates takes a changed pod (also one the API server is deleting) to its worker.
func (k *Kubelet) HandlePodUpdates(updated []*corev1.Pod) {
	for _, pod := range updated {
		k.podManager.UpdatePod(pod)
		if k.podManager.IsMirrorPod(pod) {
			if static, ok := k.podManager.GetPodByMirrorPod(pod); ok {
				k.dispatch(static, podworkers.SyncPodUpdate)
			}
			continue
		}
		if st, ok := k.podWorkers.State(pod.UID); !ok || st == podworkers.Syncing {
			k.secretManager.RegisterPod(pod) // a terminated pod reads no Secrets any more
		}
		k.dispatch(pod, podworkers.SyncPodUpdate)
	}
}

// HandlePodRemoves kills a pod gone from its source: its worker stops it.
func (k *Kubelet) HandlePodRemoves(removed []*corev1.Pod) {
	for _, pod := range removed {
		k.podManager.RemovePod(pod)
		if k.podManager.IsMirrorPod(pod) {
			if static, ok := k.podManager.GetPodByMirrorPod(pod); ok {
				k.dispatch(static, podworkers.SyncPodUpdate) // recreates the mirror pod
			}
			continue
		}
		k.secretManager.UnregisterPod(pod)
		k.probes.manager.RemovePod(pod)
		k.podWorkers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	}
}

// HandlePodReconcile takes pods whose API status someone else changed (RECONCILE: only the
// status differs). The pod manager gets the new copy, which generateAPIPodStatus reads the
// conditions of others from; a pod whose Ready condition no longer agrees with its readiness
// gates is synced at once, so Ready follows a gate patched through pods/status (upstream
// HandlePodReconcile with NeedToReconcilePodReadiness). Only pods the workers know are synced:
// never one admission rejected. A mirror pod's static pod has no API status of its own to
// compare: it is not synced here, as upstream.
func (k *Kubelet) HandlePodReconcile(pods []*corev1.Pod) {
	for _, pod := range pods {
		k.podManager.UpdatePod(pod)
		if k.podManager.IsMirrorPod(pod) || !statusmanager.NeedToReconcilePodReadiness(pod) {
			continue
		}
		if _, known := k.podWorkers.State(pod.UID); known {
			k.dispatch(pod, podworkers.SyncPodSync)
		}
	}
}

// HandlePodSyncs asks the workers of pods to sync them again: a PLEG event, a resync or retry
// that came due, a probe result (upstream: kubelet.go HandlePodSyncs).
func (k *Kubelet) HandlePodSyncs(pods []*corev1.Pod) {
	for _, pod := range pods {
		k.dispatch(pod, podworkers.SyncPodSync)
	}
}
