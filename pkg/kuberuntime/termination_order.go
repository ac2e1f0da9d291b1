package kuberuntime

// The order in which a pod's containers stop (upstream: kuberuntime_termination_order.go,
// KEP-753 sidecar containers).

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// minGracePeriod is the least a container gets to stop after waiting for its turn (upstream
// minimumGracePeriodInSeconds).
const minGracePeriod = 2

// stopOrder says which running containers must have stopped before each one begins to stop:
// regular containers stop at once and together; a sidecar waits for every regular container and
// for the sidecars after it in the spec, so sidecars stop last, in reverse order. A nil stopOrder
// (no pod spec) lets every container stop at once.
type stopOrder struct {
	prereqs map[string][]string // by container name
	mu      sync.Mutex
	done    map[string]chan struct{} // closed (and deleted) when that running container has stopped
}

// terminationOrder builds the order for the running containers of pod.
func terminationOrder(pod *corev1.Pod, running []*kubecontainer.ContainerStatus) *stopOrder {
	if pod == nil {
		return nil
	}
	o := &stopOrder{prereqs: map[string][]string{}, done: map[string]chan struct{}{}}
	for _, c := range running {
		o.done[c.Name] = make(chan struct{})
	}
	var regular []string
	for i := range pod.Spec.Containers {
		regular = append(regular, pod.Spec.Containers[i].Name)
	}
	later := "" // the next sidecar in spec order, which stops before this one
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		if !kubecontainer.IsRestartableInitContainer(c) {
			continue
		}
		o.prereqs[c.Name] = append([]string(nil), regular...)
		if later != "" {
			o.prereqs[c.Name] = append(o.prereqs[c.Name], later)
		}
		later = c.Name
	}
	return o
}

// waitForTurn waits until every container name must wait for has stopped, or gracePeriod has
// passed, or ctx ends, and returns how long it waited. With no grace period nobody waits.
func (o *stopOrder) waitForTurn(ctx context.Context, clk clock.Clock, name string, gracePeriod int64) time.Duration {
	if o == nil || gracePeriod <= 0 || len(o.prereqs[name]) == 0 {
		return 0
	}
	start := clk.Now()
	deadline := clk.NewTimer(time.Duration(gracePeriod) * time.Second)
	defer deadline.Stop()
	for _, before := range o.prereqs[name] {
		o.mu.Lock()
		done, ok := o.done[before]
		o.mu.Unlock()
		if !ok {
			continue // not running, or already stopped: nothing to wait for
		}
		select {
		case <-done:
		case <-deadline.C():
			return clk.Since(start)
		case <-ctx.Done():
			return clk.Since(start)
		}
	}
	return clk.Since(start)
}

// stopped marks name as stopped, letting the containers that wait for it go.
func (o *stopOrder) stopped(name string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if done, ok := o.done[name]; ok { // two instances of one name: the first to stop lets them go
		close(done)
		delete(o.done, name)
	}
}

// remainingGrace is what is left of gracePeriod after waiting, but at least minGracePeriod.
func remainingGrace(gracePeriod int64, waited time.Duration) int64 {
	if waited <= 0 {
		return gracePeriod
	}
	return max(gracePeriod-int64(waited/time.Second), minGracePeriod)
}

// killGracePeriod is the grace period of a container killed in a sync (upstream
// setTerminationGracePeriod): a deleted pod's deletion grace period; else, for a liveness or
// startup probe failure, the probe's terminationGracePeriodSeconds when it sets one (it may be
// longer than the pod's); else the pod's terminationGracePeriodSeconds (30 by API default), or
// the 2 s minimum when the spec has none.
func killGracePeriod(pod *corev1.Pod, why KillReason) int64 {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds == nil:
		return minGracePeriod
	}
	if c := containerSpec(pod, why.Name); c != nil {
		var probe *corev1.Probe
		switch why.Reason {
		case "LivenessProbe":
			probe = c.LivenessProbe
		case "StartupProbe":
			probe = c.StartupProbe
		}
		if probe != nil && probe.TerminationGracePeriodSeconds != nil {
			return *probe.TerminationGracePeriodSeconds
		}
	}
	return *pod.Spec.TerminationGracePeriodSeconds
}

// containerSpec finds a container or init container of pod by name.
func containerSpec(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
