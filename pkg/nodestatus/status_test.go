package nodestatus

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func inputsAt(now time.Time, notReady ...string) statusInputs {
	return statusInputs{
		machine: Machine{Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		}},
		allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8092Mi"),
		},
		addresses:      []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
		kubeletVersion: "v1.36.3",
		kubeletPort:    10250,
		notReady:       notReady,
		now:            now,
	}
}

// Upstream setters: heartbeat time is always "now"; transition time only moves on a status change.
func TestComputeStatusConditionTimes(t *testing.T) {
	first := computeStatus(corev1.NodeStatus{}, inputsAt(t0))
	ready := findCondition(first, corev1.NodeReady)
	if ready.Status != corev1.ConditionTrue || ready.Reason != "KubeletReady" || !ready.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("first Ready condition = %+v", ready)
	}
	for _, typ := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if c := findCondition(first, typ); c == nil || c.Status != corev1.ConditionFalse {
			t.Errorf("%s = %+v, want False", typ, c)
		}
	}
	if first.DaemonEndpoints.KubeletEndpoint.Port != 10250 || first.NodeInfo.KubeletVersion != "v1.36.3" {
		t.Errorf("daemon endpoint / kubelet version not reported: %+v %+v", first.DaemonEndpoints, first.NodeInfo)
	}
	if first.Allocatable.Cpu().String() != "4" || first.Allocatable.Memory().String() != "8092Mi" {
		t.Errorf("allocatable = %v, want the inputs' cpu 4, memory 8092Mi", first.Allocatable)
	}

	t1 := t0.Add(10 * time.Second)
	same := computeStatus(first, inputsAt(t1))
	ready = findCondition(same, corev1.NodeReady)
	if !ready.LastHeartbeatTime.Time.Equal(t1) || !ready.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("unchanged Ready: heartbeat %s transition %s, want %s and %s", ready.LastHeartbeatTime, ready.LastTransitionTime, t1, t0)
	}

	t2 := t1.Add(10 * time.Second)
	down := computeStatus(same, inputsAt(t2, "container runtime: connection refused", "PLEG: not healthy"))
	ready = findCondition(down, corev1.NodeReady)
	if ready.Status != corev1.ConditionFalse || ready.Reason != "KubeletNotReady" || !ready.LastTransitionTime.Time.Equal(t2) ||
		ready.Message != "container runtime: connection refused; PLEG: not healthy" {
		t.Errorf("Ready after failed checks = %+v", ready)
	}
}

// Upstream nodeStatusHasChanged + nodeStatusReportFrequency: report on change, or every 5 min.
func TestNeedsReport(t *testing.T) {
	base := computeStatus(corev1.NodeStatus{}, inputsAt(t0))
	tests := []struct {
		name       string
		computed   corev1.NodeStatus
		lastReport time.Time
		now        time.Time
		want       bool
	}{
		{"only heartbeat moved", computeStatus(base, inputsAt(t0.Add(10*time.Second))), t0, t0.Add(10 * time.Second), false},
		{"report frequency passed", computeStatus(base, inputsAt(t0.Add(5*time.Minute))), t0, t0.Add(5 * time.Minute), true},
		{"ready flipped", computeStatus(base, inputsAt(t0.Add(10*time.Second), "runtime: down")), t0, t0.Add(10 * time.Second), true},
		{"runtime version appeared", func() corev1.NodeStatus {
			in := inputsAt(t0.Add(10 * time.Second))
			in.runtimeVersion = "fake://0.1.0"
			return computeStatus(base, in)
		}(), t0, t0.Add(10 * time.Second), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsReport(base, tc.computed, tc.lastReport, tc.now, 5*time.Minute); got != tc.want {
				t.Errorf("needsReport = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConditionEvents(t *testing.T) {
	first := computeStatus(corev1.NodeStatus{}, inputsAt(t0))
	want := []string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"}
	if got := conditionEvents(corev1.NodeStatus{}, first); !reflect.DeepEqual(got, want) {
		t.Errorf("events at registration = %v, want %v", got, want)
	}
	if got := conditionEvents(first, computeStatus(first, inputsAt(t0.Add(time.Minute)))); len(got) != 0 {
		t.Errorf("events without change = %v, want none", got)
	}
	down := computeStatus(first, inputsAt(t0.Add(time.Minute), "runtime: down"))
	if got := conditionEvents(first, down); !reflect.DeepEqual(got, []string{"NodeNotReady"}) {
		t.Errorf("events on NotReady = %v", got)
	}
	if got := conditionEvents(down, computeStatus(down, inputsAt(t0.Add(2*time.Minute)))); !reflect.DeepEqual(got, []string{"NodeReady"}) {
		t.Errorf("events on recovery = %v", got)
	}
}

// Upstream's MemoryPressureCondition, DiskPressureCondition and PIDPressureCondition setters: the
// eviction manager's pressure turns a condition True with its reason and message, and each flip
// records NodeHas… (both ways).
func TestPressureConditions(t *testing.T) {
	first := computeStatus(corev1.NodeStatus{}, inputsAt(t0))
	in := inputsAt(t0.Add(10 * time.Second))
	in.pressure = map[corev1.NodeConditionType]bool{corev1.NodeMemoryPressure: true, corev1.NodeDiskPressure: true, corev1.NodePIDPressure: true}
	pressed := computeStatus(first, in)
	for _, want := range []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Reason: "KubeletHasInsufficientMemory", Message: "kubelet has insufficient memory available"},
		{Type: corev1.NodeDiskPressure, Reason: "KubeletHasDiskPressure", Message: "kubelet has disk pressure"},
		{Type: corev1.NodePIDPressure, Reason: "KubeletHasInsufficientPID", Message: "kubelet has insufficient PID available"},
	} {
		c := findCondition(pressed, want.Type)
		if c == nil || c.Status != corev1.ConditionTrue || c.Reason != want.Reason || c.Message != want.Message || !c.LastTransitionTime.Time.Equal(in.now) {
			t.Errorf("%s = %+v, want True %s %q since %s", want.Type, c, want.Reason, want.Message, in.now)
		}
	}
	if got, want := conditionEvents(first, pressed), []string{"NodeHasInsufficientMemory", "NodeHasDiskPressure", "NodeHasInsufficientPID"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events on pressure = %v, want %v", got, want)
	}
	relieved := computeStatus(pressed, inputsAt(t0.Add(time.Minute)))
	if c := findCondition(relieved, corev1.NodeMemoryPressure); c.Status != corev1.ConditionFalse || c.Reason != "KubeletHasSufficientMemory" {
		t.Errorf("MemoryPressure after relief = %+v", c)
	}
	if got, want := conditionEvents(pressed, relieved), []string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events on relief = %v, want %v", got, want)
	}
}
