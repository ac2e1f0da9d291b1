package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/journal"
	"github.com/minikubelet/minikubelet/pkg/pleg"
	"github.com/minikubelet/minikubelet/pkg/podsource"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/prober"
)

// The syncLoop (upstream: pkg/kubelet/kubelet.go syncLoop, syncLoopIteration): one goroutine
// waits on every channel and hands each pod to its worker.

// syncLoop is the kubelet's main loop (upstream: kubelet.go syncLoop).
func (p *pods) syncLoop(ctx context.Context) {
	syncTicker := p.cfg.Clock.NewTicker(time.Second)
	defer syncTicker.Stop()
	housekeeping := p.cfg.Clock.NewTicker(2 * time.Second)
	defer housekeeping.Stop()
	for p.syncLoopIteration(ctx, p.sources.Updates(), p.pleg.Watch(), syncTicker.C(), housekeeping.C()) {
	}
}

// syncLoopIteration is one turn of the syncLoop: wait on every channel, act on the first that
// fires (upstream: kubelet.go syncLoopIteration). It returns false when the loop should end.
func (p *pods) syncLoopIteration(ctx context.Context, configCh <-chan podsource.PodUpdate, plegCh <-chan *pleg.PodLifecycleEvent,
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
			p.syncLoopJournal.Record("configCh "+u.Op.String(), journal.Pod(pod), map[string]string{"source": u.Source})
		}
		switch u.Op {
		case podsource.ADD:
			p.handlePodAdditions(u.Pods)
		case podsource.UPDATE, podsource.DELETE:
			p.handlePodUpdates(u.Pods)
		case podsource.REMOVE:
			p.handlePodRemoves(u.Pods)
		case podsource.RECONCILE:
			p.handlePodReconcile(u.Pods)
		}
	case e := <-plegCh:
		logger.V(4).Info("SyncLoop PLEG event", "podUID", e.ID, "type", e.Type, "data", e.Data)
		pod, _ := p.manager.GetPodByUID(e.ID)
		p.syncLoopJournal.Record("plegCh", journal.Pod(pod), map[string]string{"event": string(e.Type), "id": fmt.Sprint(e.Data)})
		if e.Type == pleg.ContainerRemoved {
			break
		}
		if pod, ok := p.manager.GetPodByUID(e.ID); ok {
			p.dispatch(pod, podworkers.SyncPodSync)
		}
	case <-syncCh:
		// Pods whose resync or retry is due, and pods past their activeDeadlineSeconds
		// (upstream getPodsToSync with the PodSyncLoopHandlers).
		due := map[types.UID]bool{}
		for _, pod := range p.workers.DuePods() {
			due[pod.UID] = true
		}
		for _, pod := range p.manager.GetPods() {
			if due[pod.UID] || (!isTerminal(pod) && p.pastDeadline(pod)) {
				p.syncLoopJournal.Record("syncCh", journal.Pod(pod), nil)
				p.dispatch(pod, podworkers.SyncPodSync)
			}
		}
	case u := <-p.probes.liveness.Updates():
		p.handleProbeUpdate(ctx, prober.Liveness, u) // a failure: kuberuntime kills the container
	case u := <-p.probes.readiness.Updates():
		p.handleProbeUpdate(ctx, prober.Readiness, u) // into the status: Ready follows
	case u := <-p.probes.startup.Updates():
		p.handleProbeUpdate(ctx, prober.Startup, u) // into the status: Started follows
	case <-housekeepingCh:
		var fields map[string]string
		if err := p.handlePodCleanups(ctx); err != nil && ctx.Err() == nil { // not the calls cut by our own stop
			logger.Error(err, "Failed cleaning up pods")
			fields = map[string]string{"error": err.Error()}
		}
		p.syncLoopJournal.Record("housekeepingCh", journal.Pod(nil), fields)
	}
	return true
}

// dispatch hands a pod to its worker, with its mirror pod.
func (p *pods) dispatch(pod *corev1.Pod, t podworkers.UpdateType) {
	mirror, _ := p.manager.GetMirrorPodByPod(pod)
	p.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: t, Pod: pod, MirrorPod: mirror})
}
