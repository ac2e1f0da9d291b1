package stats

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// /metrics/resource: the Summary's CPU and memory figures as Prometheus metrics, with upstream's
// names, help texts (component-base puts the stability level in front) and explicit sample
// timestamps, which metrics-server reads (upstream:
// pkg/kubelet/metrics/collectors/resource_metrics.go).
var (
	nodeCPUUsageDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryUsageDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"[STABLE] Current working set of the node in bytes", nil, nil)
	containerCPUUsageDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemoryUsageDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"[STABLE] Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	containerStartTimeDesc = prometheus.NewDesc("container_start_time_seconds",
		"[STABLE] Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	podCPUUsageDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryUsageDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"[STABLE] Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// SummaryFunc returns the current Summary; Provider.Summary is one.
type SummaryFunc func(ctx context.Context) (*statsapi.Summary, error)

// ResourceMetrics is the /metrics/resource collector: each scrape reads the (cached) Summary, so
// only live containers and pods are reported.
type ResourceMetrics struct {
	summary SummaryFunc
	logger  klog.Logger
}

var _ prometheus.Collector = (*ResourceMetrics)(nil)

// NewResourceMetrics returns a collector of summary's CPU and memory figures; errors are logged
// to logger and reported as resource_scrape_error 1.
func NewResourceMetrics(summary SummaryFunc, logger klog.Logger) *ResourceMetrics {
	return &ResourceMetrics{summary: summary, logger: logger}
}

// NewResourceMetricsRegistry is a registry with only the resource metrics, for /metrics/resource.
func NewResourceMetricsRegistry(summary SummaryFunc, logger klog.Logger) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(NewResourceMetrics(summary, logger))
	return r
}

// Describe sends every metric's description.
func (m *ResourceMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUUsageDesc, nodeMemoryUsageDesc, containerCPUUsageDesc, containerMemoryUsageDesc,
		containerStartTimeDesc, podCPUUsageDesc, podMemoryUsageDesc, resourceScrapeErrorDesc} {
		ch <- d
	}
}

// Collect sends the current figures.
func (m *ResourceMetrics) Collect(ch chan<- prometheus.Metric) {
	s, err := m.summary(context.Background())
	if err != nil {
		m.logger.Error(err, "Error getting summary for resourceMetric prometheus endpoint")
		ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, 1)
		return
	}
	for _, metric := range resourceMetrics(s) {
		ch <- metric
	}
	ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, 0)
}

// resourceMetrics converts a Summary into samples, each stamped with its figure's time (not the
// start time, which has none, as upstream). Pure.
func resourceMetrics(s *statsapi.Summary) []prometheus.Metric {
	var out []prometheus.Metric
	at := func(t time.Time, desc *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) {
		out = append(out, prometheus.NewMetricWithTimestamp(t, prometheus.MustNewConstMetric(desc, typ, v, labels...)))
	}
	seconds := func(ns *uint64) float64 { return float64(*ns) / float64(time.Second) }
	if c := s.Node.CPU; c != nil && c.UsageCoreNanoSeconds != nil {
		at(c.Time.Time, nodeCPUUsageDesc, prometheus.CounterValue, seconds(c.UsageCoreNanoSeconds))
	}
	if m := s.Node.Memory; m != nil && m.WorkingSetBytes != nil {
		at(m.Time.Time, nodeMemoryUsageDesc, prometheus.GaugeValue, float64(*m.WorkingSetBytes))
	}
	for _, pod := range s.Pods {
		for _, c := range pod.Containers {
			if c.StartTime.Unix() > 0 {
				out = append(out, prometheus.MustNewConstMetric(containerStartTimeDesc, prometheus.GaugeValue,
					float64(c.StartTime.UnixNano())/float64(time.Second), c.Name, pod.PodRef.Name, pod.PodRef.Namespace))
			}
			if c.CPU != nil && c.CPU.UsageCoreNanoSeconds != nil {
				at(c.CPU.Time.Time, containerCPUUsageDesc, prometheus.CounterValue, seconds(c.CPU.UsageCoreNanoSeconds), c.Name, pod.PodRef.Name, pod.PodRef.Namespace)
			}
			if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
				at(c.Memory.Time.Time, containerMemoryUsageDesc, prometheus.GaugeValue, float64(*c.Memory.WorkingSetBytes), c.Name, pod.PodRef.Name, pod.PodRef.Namespace)
			}
		}
		if c := pod.CPU; c != nil && c.UsageCoreNanoSeconds != nil {
			at(c.Time.Time, podCPUUsageDesc, prometheus.CounterValue, seconds(c.UsageCoreNanoSeconds), pod.PodRef.Name, pod.PodRef.Namespace)
		}
		if m := pod.Memory; m != nil && m.WorkingSetBytes != nil {
			at(m.Time.Time, podMemoryUsageDesc, prometheus.GaugeValue, float64(*m.WorkingSetBytes), pod.PodRef.Name, pod.PodRef.Namespace)
		}
	}
	return out
}
