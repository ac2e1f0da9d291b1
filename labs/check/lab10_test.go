package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// cpuMemory is the ResourceList "cpu,memory" ("2,4Gi"); "" is none.
func cpuMemory(s string) corev1.ResourceList {
	if s == "" {
		return nil
	}
	cpu, mem, _ := strings.Cut(s, ",")
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
}

// Lab 10: the node's allocatable must be the lab's capacity less the lab's reservations.
func TestAllocatableReserved(t *testing.T) {
	node := func(capacity, allocatable string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Capacity: cpuMemory(capacity), Allocatable: cpuMemory(allocatable)}}
	}
	tests := []struct {
		name                  string
		capacity, allocatable string
		ok                    bool
		says                  string
	}{
		{"the machine's capacity", "8,32Gi", "8,32668Mi", false, "cpu capacity 8, not the lab's 2"},
		{"exercise 1 skipped: the default reservations", "2,4Gi", "2,3996Mi", false, "cpu allocatable 2: 0 reserved, not the lab's 300m"},
		{"memory reserved wrong", "2,4Gi", "1700m,3840Mi", false, "memory allocatable 3840Mi: 256Mi reserved, not the lab's 1Gi"},
		{"the lab's", "2,4Gi", "1700m,3Gi", true, "cpu 2 − 300m = 1700m, memory 4Gi − 1Gi = 3Gi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := allocatableReserved(node(tc.capacity, tc.allocatable))
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) || !tc.ok && !strings.Contains(r.String(), "kubelet-resources.yaml") {
				t.Errorf("got %q, want ok=%v containing %q (and the restart command when missing)", r, tc.ok, tc.says)
			}
		})
	}
}

// lab10Pod is a running pod of one container with these requests and limits ("cpu,memory",
// "" for none) and the QoS class the API server gives it.
func lab10Pod(requests, limits string, class corev1.PodQOSClass) *corev1.Pod {
	pod := running("p", "n")
	pod.UID = types.UID("u1")
	pod.Spec.Containers = []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: cpuMemory(requests), Limits: cpuMemory(limits)}}}
	pod.Status.QOSClass = class
	return pod
}

// The values the runtime must hold are worked out independently of the kubelet's code, from the
// formulas the README gives; the kubelet's values for the lab's pods are these.
func TestResourcesInRuntime(t *testing.T) {
	const capacity = 4 << 30
	tests := []struct {
		name string
		pod  *corev1.Pod
		want runtimeResources
	}{
		{"guaranteed", lab10Pod("500m,512Mi", "500m,512Mi", corev1.PodQOSGuaranteed),
			runtimeResources{512, 50000, 100000, 512 << 20, -997, "/kubepods/podu1"}},
		{"burstable", lab10Pod("250m,256Mi", "500m,1Gi", corev1.PodQOSBurstable),
			runtimeResources{256, 50000, 100000, 1 << 30, 938, "/kubepods/burstable/podu1"}},
		{"besteffort", lab10Pod("", "", corev1.PodQOSBestEffort),
			runtimeResources{2, 0, 100000, 0, 1000, "/kubepods/besteffort/podu1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := resourcesInRuntime("default/p", tc.pod, capacity, tc.want); !r.ok {
				t.Errorf("the kubelet's values: %s", r)
			}
			wrong := tc.want
			wrong.oomScoreAdj++
			if r := resourcesInRuntime("default/p", tc.pod, capacity, wrong); r.ok || !strings.Contains(r.String(), "its spec asks for") {
				t.Errorf("oom_score_adj off by one: %s, want missing", r)
			}
			wrong = tc.want
			wrong.cgroupParent = "/kubepods/podu2"
			if r := resourcesInRuntime("default/p", tc.pod, capacity, wrong); r.ok {
				t.Errorf("another pod's cgroup parent: %s, want missing", r)
			}
		})
	}
}

func TestRejectedOutOfCPU(t *testing.T) {
	const msg = "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 750, capacity: 1700"
	rejected := running(lab10TooBig, "n")
	rejected.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfcpu", Message: msg}
	event := corev1.Event{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 1000, used: 750, capacity: 1700",
		Source: corev1.EventSource{Component: kubeletSource}}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		events    []corev1.Event
		sandboxes []fakeSandbox
		ok        bool
		says      string
	}{
		{"exercise 3 skipped: no pod", nil, nil, nil, false, "does not exist → create it: sed"},
		{"it fit", running(lab10TooBig, "n"), nil, nil, false, "Running (reason \"\"), not Failed with reason OutOfcpu"},
		{"no Event", rejected, nil, nil, false, "no OutOfcpu Event"},
		{"a sandbox", rejected, []corev1.Event{event}, []fakeSandbox{{ID: "s1"}}, false, "1 sandboxes of the rejected pod"},
		{"rejected", rejected, []corev1.Event{event}, nil, true, "requested: 1000, used: 750, capacity: 1700"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rejectedOutOfCPU("default/"+lab10TooBig, tc.pod, "n", tc.events, tc.sandboxes)
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

func TestUsageThrottled(t *testing.T) {
	summary := func(workingSet, nanoCores uint64) *statsapi.Summary {
		return &statsapi.Summary{Pods: []statsapi.PodStats{{
			PodRef: statsapi.PodReference{Namespace: "default", Name: lab10Burstable},
			Containers: []statsapi.ContainerStats{{Name: "app",
				CPU:    &statsapi.CPUStats{UsageNanoCores: ptr.To(nanoCores)},
				Memory: &statsapi.MemoryStats{WorkingSetBytes: ptr.To(workingSet)}}},
		}}}
	}
	tests := []struct {
		name string
		s    *statsapi.Summary
		ok   bool
		says string
	}{
		{"no pod", &statsapi.Summary{}, false, "has no pod default/lab10-burstable"},
		{"no alloc", summary(30<<20, 500_000_000), false, "less than its alloc 200Mi"},
		{"not throttled", summary(230<<20, 820_000_000), false, "820m cpu, more than its limit 500m"},
		{"idle", summary(230<<20, 20_000_000), false, "uses 20m cpu"},
		{"throttled", summary(230<<20, 500_000_000), true, "working set 230Mi (alloc 200Mi), cpu 500m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := usageThrottled("default/"+lab10Burstable, tc.s)
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

func TestOOMKilled(t *testing.T) {
	ended := func(reason string, code int32) *corev1.Pod {
		pod := running(lab10OOM, "n")
		pod.Status.Phase = corev1.PodFailed
		pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}}
		return pod
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		ok   bool
		says string
	}{
		{"exercise 5 skipped: no pod", nil, false, "create it: kubectl apply -f labs/10-resource-management/oom.yaml"},
		{"still running", running(lab10OOM, "n"), false, "has not ended"},
		{"killed otherwise", ended("Error", 137), false, "ended with Error, exit code 137, not OOMKilled"},
		{"oom killed", ended("OOMKilled", 137), true, "terminated OOMKilled, exit code 137"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := oomKilled("default/"+lab10OOM, tc.pod, "n")
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

func TestTopShows(t *testing.T) {
	podMetrics := func(cpu, memory string) string {
		return `{"kind":"PodMetrics","apiVersion":"metrics.k8s.io/v1beta1","metadata":{"name":"lab10-burstable","namespace":"default"},` +
			`"timestamp":"2026-11-25T13:28:11Z","window":"15.009s","containers":[{"name":"app","usage":{"cpu":"` + cpu + `","memory":"` + memory + `"}}]}`
	}
	tests := []struct {
		name, body string
		ok         bool
		says       string
	}{
		{"not JSON", "<html>", false, "is not PodMetrics"},
		{"no scrape yet", `{"kind":"PodMetrics","window":"0s","containers":[]}`, false, `0 containers of default/lab10-burstable (window "0s")`},
		{"not throttled", podMetrics("800000000n", "247Mi"), false, "800m cpu and 247Mi"},
		{"no alloc", podMetrics("500022348n", "40Mi"), false, "501m cpu and 40Mi"},
		{"throttled", podMetrics("500022348n", "247Mi"), true, "default/lab10-burstable 501m cpu, 247Mi (metrics-server, window 15.009s)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := topShows("default/"+lab10Burstable, []byte(tc.body))
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

func TestEvictedUnderPressure(t *testing.T) {
	const msg = "The node was low on resource: memory. Threshold quantity: 256Mi, available: 76Mi. Container app was using 3624Mi, request is 0, has larger consumption of memory. "
	evicted := running(lab10Hog, "n")
	evicted.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: msg}
	otherwise := running(lab10Hog, "n")
	otherwise.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: ephemeral-storage. "}
	kubeletEvent := func(reason, message string) corev1.Event {
		return corev1.Event{Reason: reason, Message: message, Source: corev1.EventSource{Component: kubeletSource}}
	}
	podEvents := []corev1.Event{kubeletEvent("Evicted", msg)}
	nodeEvents := []corev1.Event{kubeletEvent("EvictionThresholdMet", "Attempting to reclaim memory"), kubeletEvent("NodeHasInsufficientMemory", "Node n status is now: NodeHasInsufficientMemory")}
	tests := []struct {
		name                  string
		pod                   *corev1.Pod
		podEvents, nodeEvents []corev1.Event
		ok                    bool
		says                  string
	}{
		{"exercise 6 skipped: no pod", nil, nil, nil, false, "create it: kubectl apply -f labs/10-resource-management/hog.yaml"},
		{"still running", running(lab10Hog, "n"), nil, nil, false, "Running (reason \"\"), not Failed with reason Evicted"},
		{"evicted for disk", otherwise, podEvents, nodeEvents, false, "was evicted, but not for memory"},
		{"no Event", evicted, nil, nodeEvents, false, "no Evicted Event"},
		{"no pressure reported", evicted, podEvents, nodeEvents[:1], false, "never reported MemoryPressure"},
		{"evicted", evicted, podEvents, nodeEvents, true, "Evicted \"The node was low on resource: memory. Threshold quantity: 256Mi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := evictedUnderPressure("default/"+lab10Hog, tc.pod, "n", tc.podEvents, tc.nodeEvents)
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}
