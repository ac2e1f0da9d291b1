package kubelet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/cm"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// Housekeeping (upstream: pkg/kubelet/kubelet_pods.go HandlePodCleanups): every 2 s the
// syncLoop removes what no desired pod needs any more.

// handlePodCleanups is housekeeping (upstream: kubelet_pods.go HandlePodCleanups): stop workers
// of pods no longer desired, forget their statuses, and remove from the runtime every pod that is
// neither desired nor handled by a worker.
func (p *pods) handlePodCleanups(ctx context.Context) error {
	if !p.sources.AllSourcesReady() {
		return nil // until every source has spoken, a running pod may just not have arrived yet
	}
	desired := map[types.UID]bool{}
	for _, pod := range p.manager.GetPods() {
		desired[pod.UID] = true
	}
	states, restart := p.workers.SyncKnownPods(desired)
	for _, uid := range restart {
		if pod, ok := p.manager.GetPodByUID(uid); ok {
			p.dispatch(pod, podworkers.SyncPodCreate)
		}
	}
	keep := map[types.UID]bool{}
	for uid := range desired {
		keep[uid] = true
	}
	for uid := range states {
		keep[uid] = true
	}
	p.status.RemoveOrphanedStatuses(keep)
	p.probes.manager.CleanupPods(desired)
	if m := p.cfg.Metrics; m != nil {
		m.PodWorkers.Set(float64(p.workers.Count()))
		m.StatusManagerEntries.Set(float64(p.status.Len()))
	}
	p.reasonsMu.Lock()
	for uid := range p.reasons {
		if !keep[uid] {
			delete(p.reasons, uid)
		}
	}
	for uid := range p.evicted {
		if !keep[uid] {
			delete(p.evicted, uid)
		}
	}
	p.reasonsMu.Unlock()

	runtimePods, err := p.cfg.Runtime.GetPods(ctx, true)
	if err != nil {
		return err
	}
	var errs []error
	for _, rp := range runtimePods {
		if keep[rp.ID] {
			continue
		}
		klog.FromContext(ctx).V(2).Info("Removing a pod that is no longer desired from the runtime", "pod", klog.KRef(rp.Namespace, rp.Name), "podUID", rp.ID)
		status, err := p.cfg.Runtime.GetPodStatus(ctx, rp.ID, rp.Name, rp.Namespace)
		if err == nil {
			err = p.cfg.Runtime.KillPod(ctx, nil, status, 0)
		}
		if err == nil {
			err = p.cfg.Runtime.RemovePod(ctx, rp)
		}
		errs = append(errs, err)
	}
	if err := p.helper.cleanupVolumes(p.cfg.RootDir, keep); err != nil {
		errs = append(errs, err)
	}
	if err := cleanupPodLogDirs(p.cfg.PodLogsDir, keep); err != nil {
		errs = append(errs, err)
	}
	if p.cfg.CgroupRoot != "" { // upstream cleanupOrphanedPodCgroups
		n, err := cm.RemoveOrphanedPodCgroups(p.cfg.CgroupRoot, keep)
		if n > 0 {
			klog.FromContext(ctx).V(2).Info("Removed the cgroups of pods that are gone", "count", n)
		}
		errs = append(errs, err)
	}
	p.cfg.Runtime.GCBackoffs()
	for _, mirror := range p.manager.GetOrphanedMirrorPods() {
		uid := mirror.UID
		if _, err := p.manager.DeleteMirrorPod(ctx, mirror.Namespace, mirror.Name, &uid); err != nil {
			errs = append(errs, err)
		}
	}
	if m := p.cfg.Metrics; m != nil {
		m.RunningPods.Set(float64(countReadySandboxes(runtimePods)))
		m.RunningContainers.Set(float64(countRunningContainers(runtimePods)))
	}
	klog.FromContext(ctx).V(3).Info("Housekeeping", "podWorkers", p.workers.Count(), "statuses", p.status.Len(), "runtimePods", len(runtimePods))
	return errors.Join(errs...)
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
