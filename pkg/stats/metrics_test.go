package stats

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// /metrics/resource has upstream's names, help, labels and a timestamp on every usage sample
// (metrics-server reads them); container_start_time_seconds has none, as upstream.
func TestResourceMetricsText(t *testing.T) {
	at := metav1.NewTime(time.UnixMilli(1_700_000_000_123))
	summary := &statsapi.Summary{
		Node: statsapi.NodeStats{NodeName: "n1",
			CPU:    &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: ptr.To[uint64](12_500_000_000)},
			Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: ptr.To[uint64](1 << 30)}},
		Pods: []statsapi.PodStats{{
			PodRef: statsapi.PodReference{Name: "web", Namespace: "ns", UID: "u1"},
			CPU:    &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: ptr.To[uint64](2_000_000_000)},
			Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: ptr.To[uint64](300 << 20)},
			Containers: []statsapi.ContainerStats{{Name: "app", StartTime: metav1.NewTime(time.Unix(1_699_999_000, 0)),
				CPU:    &statsapi.CPUStats{Time: at, UsageCoreNanoSeconds: ptr.To[uint64](1_500_000_000)},
				Memory: &statsapi.MemoryStats{Time: at, WorkingSetBytes: ptr.To[uint64](200 << 20)}}},
		}},
	}
	logger, _ := ktesting.NewTestContext(t)
	reg := NewResourceMetricsRegistry(func(context.Context) (*statsapi.Summary, error) { return summary, nil }, logger)
	want := `
# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="ns",pod="web"} 1.5 1700000000123
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 2.097152e+08 1700000000123
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="app",namespace="ns",pod="web"} 1.699999e+09
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 12.5 1700000000123
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.073741824e+09 1700000000123
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 2 1700000000123
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="ns",pod="web"} 3.145728e+08 1700000000123
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	failing := NewResourceMetricsRegistry(func(context.Context) (*statsapi.Summary, error) { return nil, errors.New("runtime down") }, logger)
	if err := testutil.GatherAndCompare(failing, strings.NewReader(`
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 1
`)); err != nil {
		t.Error(err)
	}
}
