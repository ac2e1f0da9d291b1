package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/pleg"
	"github.com/minikubelet/minikubelet/pkg/podsource"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/prober"
)

// The syncLoop (upstream: pkg/kubelet/kubelet.go syncLoop, syncLoopIteration): one goroutine
// waits on every channel and hands each pod to its worker.

// syncLoop is the kubelet's main loop (upstream: kubelet.go syncLoop): the syncloop step runs
// it until the kubelet stops.
func (k *Kubelet) syncLoop(ctx context.Context) {
	syncTicker := k.clock.NewTicker(time.Second)
	defer syncTicker.Stop()
	housekeeping := k.clock.NewTicker(2 * time.Second)
	defer housekeeping.Stop()
	for k.syncLoopIteration(ctx, k.podSources.Updates(), k.pleg.Watch(), syncTicker.C(), housekeeping.C()) {
	}
}

// syncLoopIteration is one turn of the syncLoop: wait on every channel, act on the first that
// fires (upstream: kubelet.go syncLoopIteration). It returns false when the loop should end.
func (k *Kubelet) syncLoopIteration(ctx context.Context, configCh <-chan podsource.PodUpdate, plegCh <-chan *pleg.PodLifecycleEvent,
	syncCh, housekeepingCh <-chan time.Time) bool {
	logger := klog.FromContext(ctx)
	select {
	case <-ctx.Done():
		return false
	case u, ok := <-configCh:
		if !ok {
			return false
		}
		logger.V(2).Info("SyncLoop pod update", "op", u.Op, "source", u.Source, "pods", klog.KObjSlice(u.Pods))
		for _, pod := range u.Pods {
			k.syncLoopJournal.Record("configCh "+u.Op.String(), journal.Pod(pod), map[string]string{"source": u.Source})
		}
		switch u.Op {
		case podsource.ADD:
			k.HandlePodAdditions(u.Pods)
		case podsource.UPDATE, podsource.DELETE:
			k.HandlePodUpdates(u.Pods)
		case podsource.REMOVE:
			k.HandlePodRemoves(u.Pods)
		case podsource.RECONCILE:
			k.HandlePodReconcile(u.Pods)
		}
	case e := <-plegCh:
		logger.V(4).Info("SyncLoop PLEG event", "podUID", e.ID, "type", e.Type, "data", e.Data)
		pod, _ := k.podManager.GetPodByUID(e.ID)
		k.syncLoopJournal.Record("plegCh", journal.Pod(pod), map[string]string{"event": string(e.Type), "id": fmt.Sprint(e.Data)})
		if e.Type == pleg.ContainerRemoved {
			break
		}
		if pod, ok := k.podManager.GetPodByUID(e.ID); ok {
			k.HandlePodSyncs([]*corev1.Pod{pod})
		}
	case <-syncCh:
		// Pods whose resync or retry is due, and pods past their activeDeadlineSeconds
		// (upstream getPodsToSync with the PodSyncLoopHandlers).
		due := map[types.UID]bool{}
		for _, pod := range k.podWorkers.DuePods() {
			due[pod.UID] = true
		}
		var podsToSync []*corev1.Pod
		for _, pod := range k.podManager.GetPods() {
			if due[pod.UID] || (!isTerminal(pod) && k.pastDeadline(pod)) {
				k.syncLoopJournal.Record("syncCh", journal.Pod(pod), nil)
				podsToSync = append(podsToSync, pod)
			}
		}
		k.HandlePodSyncs(podsToSync)
	case u := <-k.probes.liveness.Updates():
		k.handleProbeUpdate(ctx, prober.Liveness, u) // a failure: kuberuntime kills the container
	case u := <-k.probes.readiness.Updates():
		k.handleProbeUpdate(ctx, prober.Readiness, u) // into the status: Ready follows
	case u := <-k.probes.startup.Updates():
		k.handleProbeUpdate(ctx, prober.Startup, u) // into the status: Started follows
	case <-housekeepingCh:
		var fields map[string]string
		if err := k.HandlePodCleanups(ctx); err != nil && ctx.Err() == nil { // not the calls cut by our own stop
			logger.Error(err, "Failed cleaning up pods")
			fields = map[string]string{"error": err.Error()}
		}
		k.syncLoopJournal.Record("housekeepingCh", journal.Pod(nil), fields)
	}
	return true
}

// dispatch hands a pod to its worker, with its mirror pod (upstream: kubelet.go dispatchWork).
func (k *Kubelet) dispatch(pod *corev1.Pod, t podworkers.UpdateType) {
	mirror, _ := k.podManager.GetMirrorPodByPod(pod)
	k.podWorkers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: t, Pod: pod, MirrorPod: mirror})
}
