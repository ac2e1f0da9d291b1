package kubelet

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/pkg/stats"
	"github.com/minikubelet/minikubelet/pkg/volumemanager"
)

// makeStats builds the stats provider behind /stats/summary and /metrics/resource (and the
// eviction manager's signals): the pods' figures from CRI, the node's from the machine, or, on
// the built-in fake runtime, made up from its pods and the node's reported capacity. It runs the
// volume stats loop (upstream's fsResourceAnalyzer): every volumeStatsAggPeriod the pods' set-up
// volumes are measured for the Summary, emptyDir sizeLimit evictions and kubelet_volume_stats_*.
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
	var run component
	if period := o.Config.VolumeStatsAggPeriod.Duration; period > 0 {
		vs, err := stats.NewVolumeStats(stats.VolumeStatsConfig{Pods: k.GetPods, Volumes: k.measurableVolumes, Period: period, Clock: k.clock})
		if err != nil {
			return nil, err
		}
		cfg.VolumeStats = vs
		k.metrics.MustRegister(stats.NewVolumeMetrics(vs))
		run = loop(vs.Run)
	}
	p, err := stats.New(cfg)
	if err != nil {
		return nil, err
	}
	k.stats = p
	return run, nil
}

// measurableVolumes are the pod's set-up volumes that have a usage to measure (upstream: the
// stats provider's ListVolumesForPod, each volume with its MetricsProvider).
func (k *Kubelet) measurableVolumes(uid types.UID) map[string]stats.MountedVolume {
	out := map[string]stats.MountedVolume{}
	for name, v := range k.volumeManager.GetMountedVolumesForPod(uid) {
		switch v.Metrics {
		case volumemanager.MetricsDu:
			out[name] = stats.MountedVolume{Path: v.HostPath}
		case volumemanager.MetricsStatFS:
			out[name] = stats.MountedVolume{Path: v.HostPath, WholeFS: true}
		case volumemanager.MetricsNone:
		}
	}
	return out
}
