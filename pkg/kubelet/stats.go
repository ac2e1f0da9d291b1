package kubelet

import (
	"context"

	"github.com/minikubelet/minikubelet/pkg/stats"
)

// makeStats builds the stats provider behind /stats/summary and /metrics/resource (and the
// eviction manager's signals): the pods' figures from CRI, the node's from the machine, or, on
// the built-in fake runtime, made up from its pods and the node's reported capacity.
func (k *Kubelet) makeStats(context.Context) (component, error) {
	o := k.opts
	cfg := stats.Config{
		NodeName:   o.NodeName,
		Runtime:    k.cri.Runtime,
		Images:     k.cri.Image,
		Pods:       k.GetPods,
		PodLogsDir: o.Config.PodLogsDir,
		RootDir:    o.RootDir,
	}
	if o.ContainerRuntimeEndpoint == "" { // the fake runtime: nothing runs, the machine says nothing of its pods
		capacity, _, err := nodeResources(o, k.machine) // what the node reports (pod_lifecycle.go)
		if err != nil {
			return nil, err
		}
		cfg.FakeCapacity = capacity
	}
	p, err := stats.New(cfg)
	if err != nil {
		return nil, err
	}
	k.stats = p
	return nil, nil
}
