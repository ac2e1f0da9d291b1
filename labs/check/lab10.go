package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/minikubelet/minikubelet/pkg/cri/remote"
)

// Lab 10, resource management: the node started with the lab's reservations reports allocatable
// = capacity − kubeReserved − systemReserved − evictionHard; one pod per QoS class, whose
// requests and limits reach the runtime as cpu shares, CFS quota, memory limit, oom_score_adj
// and a cgroup parent; a pod bound past the scheduler that does not fit is rejected OutOfcpu;
// /stats/summary shows what a container uses, its cpu throttled to its limit; a container over
// its memory limit is OOMKilled; a BestEffort pod that leaves less than evictionHard's
// memory.available is evicted under MemoryPressure, and the Guaranteed pod keeps running.
const (
	lab10Guaranteed = "lab10-guaranteed"
	lab10Burstable  = "lab10-burstable"
	lab10BestEffort = "lab10-besteffort"
	lab10TooBig     = "lab10-too-big"
	lab10OOM        = "lab10-oom"
	lab10Hog        = "lab10-hog"

	lab10Dir      = "labs/10-resource-management/"
	lab10Restart  = "make run ARGS='--config " + lab10Dir + "kubelet-resources.yaml --node-capacity cpu=2,memory=4Gi'"
	lab10ApplyQoS = "kubectl apply -f " + lab10Dir + "qos.yaml"
	lab10ApplyBig = "sed \"s/NODE_NAME/$NODE/\" " + lab10Dir + "too-big.yaml | kubectl apply -f -"
	lab10ApplyOOM = "kubectl apply -f " + lab10Dir + "oom.yaml"
	lab10ApplyHog = "kubectl apply -f " + lab10Dir + "hog.yaml"
)

// What the lab's node has and keeps back (kubelet-resources.yaml and --node-capacity).
var (
	lab10Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	// lab10Reserved: kubeReserved + systemReserved (+ evictionHard memory.available).
	lab10Reserved = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m"), corev1.ResourceMemory: resource.MustParse("1Gi")}
)

func lab10() []check {
	const allocatable = "the node's allocatable is its capacity less what is reserved"
	return []check{
		apiServerAnswers(),
		nodeReady(),
		{name: allocatable, run: func(ctx context.Context, e *env) result {
			node, err := e.node(ctx)
			if err != nil {
				return missing("node "+e.cfg.nodeName+": "+err.Error(), "see the error")
			}
			return allocatableReserved(node)
		}},
		qosCheck(lab10Guaranteed, corev1.PodQOSGuaranteed),
		qosCheck(lab10Burstable, corev1.PodQOSBurstable),
		qosCheck(lab10BestEffort, corev1.PodQOSBestEffort),
		{name: "pod " + lab10TooBig + " was rejected OutOfcpu", run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab10TooBig)
			if err != nil {
				return missing("pod "+e.podRef(lab10TooBig)+": "+err.Error(), "see the error")
			}
			var events []corev1.Event
			var sandboxes []fakeSandbox
			if pod != nil {
				if events, err = e.podEvents(ctx, pod); err != nil {
					return missing("events of "+e.podRef(lab10TooBig)+": "+err.Error(), "see the error")
				}
				st, err := e.fakeState(ctx)
				if err != nil {
					return missing("the fake runtime cannot be read", err.Error())
				}
				sandboxes = sandboxesOf(st.Sandboxes, pod.Namespace, pod.Name)
			}
			return rejectedOutOfCPU(e.podRef(lab10TooBig), pod, e.cfg.nodeName, events, sandboxes)
		}},
		{name: "/stats/summary shows what " + lab10Burstable + " uses", needs: []string{qosCheckName(lab10Burstable)}, run: func(ctx context.Context, e *env) result {
			body, err := e.kubeletGet(ctx, "/stats/summary?only_cpu_and_memory=true")
			if err != nil {
				return missing("GET /stats/summary on the kubelet API: "+err.Error(), "is minikubelet running? `kubelet_api /stats/summary` shows what the check reads")
			}
			var s statsapi.Summary
			if err := json.Unmarshal(body, &s); err != nil {
				return missing("/stats/summary is not a Summary: "+err.Error(), "see the minikubelet log")
			}
			return usageThrottled(e.podRef(lab10Burstable), &s)
		}},
		{name: "kubectl top pod shows " + lab10Burstable, needs: []string{qosCheckName(lab10Burstable)}, run: func(ctx context.Context, e *env) result {
			// What kubectl top pod reads: the PodMetrics of the metrics.k8s.io API (metrics-server).
			body, err := e.client.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", e.cfg.namespace, "pods", lab10Burstable).DoRaw(ctx)
			if err != nil {
				return missing("the metrics API has no figures for "+e.podRef(lab10Burstable)+": "+err.Error(),
					"is metrics-server running? `make run` starts it (not with METRICS_SERVER=0); it scrapes every 15 s and needs two scrapes for cpu: wait half a minute and run the check again")
			}
			return topShows(e.podRef(lab10Burstable), body)
		}},
		{name: "the container of " + lab10OOM + " was OOMKilled", run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab10OOM)
			if err != nil {
				return missing("pod "+e.podRef(lab10OOM)+": "+err.Error(), "see the error")
			}
			return oomKilled(e.podRef(lab10OOM), pod, e.cfg.nodeName)
		}},
		{name: "pod " + lab10Hog + " was evicted under MemoryPressure", needs: []string{qosCheckName(lab10Guaranteed)}, run: func(ctx context.Context, e *env) result {
			hog, err := e.pod(ctx, lab10Hog)
			if err != nil {
				return missing("pod "+e.podRef(lab10Hog)+": "+err.Error(), "see the error")
			}
			var podEvents, nodeEvents []corev1.Event
			if hog != nil {
				if podEvents, err = e.podEvents(ctx, hog); err != nil {
					return missing("events of "+e.podRef(lab10Hog)+": "+err.Error(), "see the error")
				}
				if nodeEvents, err = e.nodeEvents(ctx); err != nil {
					return missing("events of node "+e.cfg.nodeName+": "+err.Error(), "see the error")
				}
			}
			return evictedUnderPressure(e.podRef(lab10Hog), hog, e.cfg.nodeName, podEvents, nodeEvents)
		}},
	}
}

// allocatableReserved: the node reports the lab's capacity, and its allocatable is that less
// the lab's reservations, resource by resource. Pure.
func allocatableReserved(node *corev1.Node) result {
	var got, problems []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		capacity, allocatable := node.Status.Capacity[name], node.Status.Allocatable[name]
		want := lab10Capacity[name]
		if capacity.Cmp(want) != 0 {
			problems = append(problems, fmt.Sprintf("%s capacity %s, not the lab's %s", name, capacity.String(), want.String()))
			continue
		}
		reserved := capacity.DeepCopy()
		reserved.Sub(allocatable)
		if wantReserved := lab10Reserved[name]; reserved.Cmp(wantReserved) != 0 {
			problems = append(problems, fmt.Sprintf("%s allocatable %s: %s reserved, not the lab's %s", name, allocatable.String(), reserved.String(), wantReserved.String()))
			continue
		}
		got = append(got, fmt.Sprintf("%s %s − %s = %s", name, capacity.String(), reserved.String(), allocatable.String()))
	}
	if len(problems) > 0 {
		return missing("node "+node.Name+" has "+strings.Join(problems, "; "),
			"restart minikubelet with the lab's reservations and capacity (Ctrl-C, then): "+lab10Restart)
	}
	return passed("node %s allocatable: %s (kubeReserved + systemReserved + evictionHard memory.available)", node.Name, strings.Join(got, ", "))
}

// qosCheckName is the name of qosCheck's check, for needs.
func qosCheckName(name string) string {
	return "pod " + name + " runs with its resources in the runtime"
}

// qosCheck: the pod runs, is of its QoS class, and its container and sandbox carry in the runtime
// what its requests and limits say.
func qosCheck(name string, class corev1.PodQOSClass) check {
	return check{name: qosCheckName(name), run: func(ctx context.Context, e *env) result {
		pod, err := e.pod(ctx, name)
		if err != nil {
			return missing("pod "+e.podRef(name)+": "+err.Error(), "see the error")
		}
		if r := podRunningResult(e.podRef(name), pod, e.cfg.nodeName, lab10ApplyQoS); !r.ok {
			return r
		}
		if pod.Status.QOSClass != class {
			return missing(fmt.Sprintf("pod %s is %s, not %s", e.podRef(name), pod.Status.QOSClass, class),
				"delete it and create it from the lab's manifest: "+lab10ApplyQoS)
		}
		node, err := e.node(ctx)
		if err != nil {
			return missing("node "+e.cfg.nodeName+": "+err.Error(), "see the error")
		}
		got, err := e.runtimeResources(ctx, pod)
		if err != nil {
			return missing("the runtime's view of "+e.podRef(name)+": "+err.Error(), "is minikubelet running with the built-in fake runtime? (`crictl inspect` shows the same)")
		}
		return resourcesInRuntime(e.podRef(name), pod, node.Status.Capacity.Memory().Value(), got)
	}}
}

// runtimeResources is what the runtime holds of a pod's resources: its running container's
// LinuxContainerResources and its sandbox's cgroup parent.
type runtimeResources struct {
	cpuShares, cpuQuota, cpuPeriod, memoryLimit, oomScoreAdj int64
	cgroupParent                                             string
}

func (r runtimeResources) String() string {
	return fmt.Sprintf("cpu shares %d, CFS quota %d per %d µs, memory limit %d, oom_score_adj %d, cgroup parent %s",
		r.cpuShares, r.cpuQuota, r.cpuPeriod, r.memoryLimit, r.oomScoreAdj, r.cgroupParent)
}

// runtimeResources asks the node's runtime over CRI, as `crictl inspect` and `crictl inspectp`
// do: ContainerStatus of the pod's running container, PodSandboxStatus (verbose: the sandbox's
// config) of its ready sandbox.
func (e *env) runtimeResources(ctx context.Context, pod *corev1.Pod) (runtimeResources, error) {
	var got runtimeResources
	c, err := remote.Dial(ctx, e.path("fake-runtime.sock"), 10*time.Second)
	if err != nil {
		return got, err
	}
	defer func() { _ = c.Close() }()
	byUID := map[string]string{"io.kubernetes.pod.uid": string(pod.UID)}
	containers, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: byUID, State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}})
	if err != nil {
		return got, err
	}
	sandboxes, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: byUID, State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}})
	if err != nil {
		return got, err
	}
	if len(containers.GetContainers()) != 1 || len(sandboxes.GetItems()) != 1 {
		return got, fmt.Errorf("%d running containers and %d ready sandboxes of pod UID %s, want one of each", len(containers.GetContainers()), len(sandboxes.GetItems()), pod.UID)
	}
	cs, err := c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: containers.GetContainers()[0].GetId()})
	if err != nil {
		return got, err
	}
	lin := cs.GetStatus().GetResources().GetLinux()
	got = runtimeResources{cpuShares: lin.GetCpuShares(), cpuQuota: lin.GetCpuQuota(), cpuPeriod: lin.GetCpuPeriod(),
		memoryLimit: lin.GetMemoryLimitInBytes(), oomScoreAdj: lin.GetOomScoreAdj()}
	ss, err := c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sandboxes.GetItems()[0].GetId(), Verbose: true})
	if err != nil {
		return got, err
	}
	var info struct {
		Config struct {
			Linux struct {
				CgroupParent string `json:"cgroup_parent"`
			} `json:"linux"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(ss.GetInfo()["info"]), &info); err != nil {
		return got, fmt.Errorf("the sandbox's verbose info is not JSON: %v", err)
	}
	got.cgroupParent = info.Config.Linux.CgroupParent
	return got, nil
}

// wantRuntimeResources is what the kubelet should send the runtime for a pod of one container,
// worked out as the lab's README does: cpu shares 1024 per cpu requested (2 without a request),
// a CFS quota of the cpu limit per 100 ms period, the memory limit in bytes, oom_score_adj −997
// (Guaranteed), 1000 (BestEffort) or 1000 − 1000 × memory request / memory capacity
// (Burstable, within 3 … 999), and /kubepods[/burstable|/besteffort]/pod<uid>. Pure.
func wantRuntimeResources(pod *corev1.Pod, memoryCapacity int64) runtimeResources {
	c := pod.Spec.Containers[0]
	cpuRequest, ok := c.Resources.Requests[corev1.ResourceCPU]
	if !ok {
		cpuRequest = c.Resources.Limits[corev1.ResourceCPU]
	}
	cpuLimit, memoryLimit := c.Resources.Limits[corev1.ResourceCPU], c.Resources.Limits[corev1.ResourceMemory]
	want := runtimeResources{cpuShares: max(cpuRequest.MilliValue()*1024/1000, 2), cpuQuota: cpuLimit.MilliValue() * 100, cpuPeriod: 100000,
		memoryLimit: memoryLimit.Value()}
	switch pod.Status.QOSClass {
	case corev1.PodQOSGuaranteed:
		want.oomScoreAdj, want.cgroupParent = -997, "/kubepods/pod"+string(pod.UID)
	case corev1.PodQOSBestEffort:
		want.oomScoreAdj, want.cgroupParent = 1000, "/kubepods/besteffort/pod"+string(pod.UID)
	default:
		request := c.Resources.Requests[corev1.ResourceMemory]
		want.oomScoreAdj = min(max(1000-1000*request.Value()/max(memoryCapacity, 1), 3), 999)
		want.cgroupParent = "/kubepods/burstable/pod" + string(pod.UID)
	}
	return want
}

// resourcesInRuntime compares what the runtime holds with what the pod's spec asks for. Pure.
func resourcesInRuntime(ref string, pod *corev1.Pod, memoryCapacity int64, got runtimeResources) result {
	want := wantRuntimeResources(pod, memoryCapacity)
	if got != want {
		return missing(fmt.Sprintf("%s (%s) has in the runtime %s; its spec asks for %s", ref, pod.Status.QOSClass, got, want),
			"was it created from the lab's manifest on this node? Delete it and create it again: "+lab10ApplyQoS)
	}
	return passed("%s (%s): %s", ref, pod.Status.QOSClass, got)
}

// rejectedOutOfCPU: the kubelet refused the pod at admission — phase Failed, reason OutOfcpu,
// upstream's message, a Warning Event from the kubelet — and never asked the runtime for a
// sandbox. Pure.
func rejectedOutOfCPU(ref string, pod *corev1.Pod, nodeName string, events []corev1.Event, sandboxes []fakeSandbox) result {
	if r := onNode(ref, pod, nodeName, lab10ApplyBig); r != nil {
		return *r
	}
	if pod.Status.Phase != corev1.PodFailed || pod.Status.Reason != "OutOfcpu" {
		return missing(fmt.Sprintf("pod %s is %s (reason %q), not Failed with reason OutOfcpu", ref, pod.Status.Phase, pod.Status.Reason),
			"it must not fit beside the QoS pods: create those first ("+lab10ApplyQoS+"), then delete this one and create it again: "+lab10ApplyBig)
	}
	const says = "Node didn't have enough resource: cpu"
	if !strings.Contains(pod.Status.Message, says) {
		return missing(fmt.Sprintf("pod %s is OutOfcpu, but its message %q does not say %q", ref, pod.Status.Message, says), "see `kubectl describe pod "+pod.Name+"`")
	}
	if evs := kubeletEvents(events, "OutOfcpu", says); len(evs) == 0 {
		return missing("there is no OutOfcpu Event from the kubelet for "+ref,
			"Events are kept for an hour: delete the pod and create it again, "+lab10ApplyBig)
	}
	if len(sandboxes) > 0 {
		return missing(fmt.Sprintf("the runtime has %d sandboxes of the rejected pod %s: an admission rejection runs nothing", len(sandboxes), ref), "see the minikubelet log")
	}
	return passed("%s: Failed, OutOfcpu %q; an OutOfcpu Event from the kubelet; no sandbox in the runtime", ref, pod.Status.Message)
}
