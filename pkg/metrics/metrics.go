package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry is the kubelet's metrics and the Prometheus registry that serves them.
type Registry struct {
	*prometheus.Registry

	PLEGRelistDuration    prometheus.Histogram
	PodWorkerDuration     *prometheus.HistogramVec // label operation: create|update|sync|kill
	RunningPods           prometheus.Gauge
	RunningContainers     prometheus.Gauge
	PodWorkers            prometheus.Gauge // pod workers alive, finished ones included until housekeeping
	StatusManagerEntries  prometheus.Gauge // pod statuses the status manager holds
	LeaseRenewFailures    prometheus.Counter
	LeaseRenewLatency     prometheus.Histogram
	ObjectManagerRequests *prometheus.CounterVec // labels kind (secrets|configmaps), verb (get|list|watch)
	Evictions             *prometheus.CounterVec // label eviction_signal: memory.available, …, ephemeralpodfs.limit
}

// New creates the metrics and registers them, with the Go runtime and process collectors.
func New() *Registry {
	r := &Registry{
		Registry: prometheus.NewRegistry(),
		PLEGRelistDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pleg_relist_duration_seconds",
			Help: "Duration in seconds for relisting pods in PLEG.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		PodWorkerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_worker_duration_seconds",
			Help: "Duration in seconds to sync a single pod, by operation.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}, []string{"operation"}),
		RunningPods: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "running_pods", Help: "Number of pods that have a running pod sandbox.",
		}),
		RunningContainers: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "running_containers", Help: "Number of running containers.",
		}),
		PodWorkers: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "pod_workers", Help: "Number of pod workers, as of the last housekeeping.",
		}),
		StatusManagerEntries: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "status_manager_entries", Help: "Number of pod statuses the status manager holds, as of the last housekeeping.",
		}),
		LeaseRenewFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "lease_renew_failures_total", Help: "Failed renewals of the node Lease.",
		}),
		LeaseRenewLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "lease_renew_duration_seconds",
			Help: "Duration in seconds of node Lease renewals.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		ObjectManagerRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "object_manager_api_requests_total",
			Help: "API requests sent by the secret and configmap managers.",
		}, []string{"kind", "verb"}),
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "evictions",
			Help: "Cumulative number of pod evictions by eviction signal",
		}, []string{"eviction_signal"}),
	}
	r.MustRegister(r.PLEGRelistDuration, r.PodWorkerDuration, r.RunningPods, r.RunningContainers, r.PodWorkers, r.StatusManagerEntries,
		r.LeaseRenewFailures, r.LeaseRenewLatency, r.ObjectManagerRequests, r.Evictions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// ObserveRelist is PLEG's OnRelist hook.
func (r *Registry) ObserveRelist(d time.Duration) { r.PLEGRelistDuration.Observe(d.Seconds()) }

// ObserveLeaseRenew is the lease controller's OnRenew hook.
func (r *Registry) ObserveLeaseRenew(d time.Duration, err error) {
	r.LeaseRenewLatency.Observe(d.Seconds())
	if err != nil {
		r.LeaseRenewFailures.Inc()
	}
}

// CountObjectRequest is the secret manager's Metrics hook.
func (r *Registry) CountObjectRequest(kind, verb string) {
	r.ObjectManagerRequests.WithLabelValues(kind, verb).Inc()
}
