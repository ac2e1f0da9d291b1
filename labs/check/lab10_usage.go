package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Lab 10's checks of what the pods use: /stats/summary, kubectl top (the metrics API), the OOM
// kill and the eviction under MemoryPressure.

// usageThrottled: the Summary has the pod's container with its alloc (≥ 200Mi working set) and
// its burn 800m cut to its cpu limit, 500m. Pure.
func usageThrottled(ref string, s *statsapi.Summary) result {
	namespace, name, _ := strings.Cut(ref, "/")
	for _, p := range s.Pods {
		if p.PodRef.Namespace != namespace || p.PodRef.Name != name || len(p.Containers) != 1 {
			continue
		}
		c := p.Containers[0]
		if c.CPU == nil || c.CPU.UsageNanoCores == nil || c.Memory == nil || c.Memory.WorkingSetBytes == nil {
			return missing("/stats/summary has "+ref+" without cpu usageNanoCores or a memory working set yet",
				"the cpu rate needs two stats rounds: wait a few seconds and run the check again")
		}
		cores, ws := *c.CPU.UsageNanoCores, *c.Memory.WorkingSetBytes
		switch {
		case ws < 200<<20:
			return missing(fmt.Sprintf("%s's working set is %d bytes, less than its alloc 200Mi", ref, ws),
				"was it created from the lab's manifest? "+lab10ApplyQoS)
		case cores > 500_000_000:
			return missing(fmt.Sprintf("%s uses %dm cpu, more than its limit 500m", ref, cores/1_000_000), "the runtime should throttle it to its CFS quota: see the minikubelet log")
		case cores < 400_000_000:
			return missing(fmt.Sprintf("%s uses %dm cpu; its program burns 800m, so it should be at its 500m limit", ref, cores/1_000_000),
				"the rate is measured between two stats rounds: wait a few seconds and run the check again")
		}
		return passed("%s in /stats/summary: working set %dMi (alloc 200Mi), cpu %dm (burn 800m, throttled to its 500m limit)", ref, ws>>20, cores/1_000_000)
	}
	return missing("/stats/summary has no pod "+ref+" with one container", "is it running? "+lab10ApplyQoS+"; `kubelet_api /stats/summary` shows what the check reads")
}

// topShows: the PodMetrics (JSON, what kubectl top pod prints) has the container with its
// alloc and its throttled burn, as metrics-server computed them from two scrapes of
// /metrics/resource. Pure.
func topShows(ref string, body []byte) result {
	var m struct {
		Window     string `json:"window"`
		Containers []struct {
			Name  string              `json:"name"`
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return missing("the metrics API's answer for "+ref+" is not PodMetrics: "+err.Error(), "see `kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods`")
	}
	if len(m.Containers) != 1 {
		return missing(fmt.Sprintf("metrics-server has %d containers of %s (window %q)", len(m.Containers), ref, m.Window),
			"it needs two scrapes 15 s apart of a running container: wait half a minute and run the check again; its log says why it skips one")
	}
	cpu, memory := m.Containers[0].Usage[corev1.ResourceCPU], m.Containers[0].Usage[corev1.ResourceMemory]
	if cpu.MilliValue() < 400 || cpu.MilliValue() > 510 || memory.Value() < 200<<20 {
		return missing(fmt.Sprintf("kubectl top pod shows %s at %dm cpu and %dMi: want its 500m limit and at least its alloc 200Mi", ref, cpu.MilliValue(), memory.Value()>>20),
			"metrics-server averages over its window: wait 15 s and run the check again")
	}
	return passed("kubectl top pod: %s %dm cpu, %dMi (metrics-server, window %s)", ref, cpu.MilliValue(), memory.Value()>>20, m.Window)
}

// oomKilled: the pod's container went over its memory limit and was ended as the OOM killer
// ends it: terminated, reason OOMKilled, exit code 137; under restartPolicy Never the pod is
// Failed. Pure.
func oomKilled(ref string, pod *corev1.Pod, nodeName string) result {
	if r := onNode(ref, pod, nodeName, lab10ApplyOOM); r != nil {
		return *r
	}
	cs := firstContainer(pod)
	if cs == nil || cs.State.Terminated == nil {
		return missing(fmt.Sprintf("the container of %s has not ended (pod %s%s)", ref, pod.Status.Phase, waitingReason(pod)),
			"its program allocates 100Mi, then 200Mi more 10 s later: wait and run the check again")
	}
	term := cs.State.Terminated
	if term.Reason != "OOMKilled" || term.ExitCode != 137 {
		return missing(fmt.Sprintf("the container of %s ended with %s, exit code %d, not OOMKilled with 137", ref, term.Reason, term.ExitCode),
			"was it created from the lab's manifest (a 256Mi limit)? Delete it and create it again: "+lab10ApplyOOM)
	}
	return passed("%s: %s, its container terminated %s, exit code %d, at %s", ref, pod.Status.Phase, term.Reason, term.ExitCode, term.FinishedAt.UTC().Format("15:04:05"))
}

// nodeEvents are the Events about the node, in every namespace.
func (e *env) nodeEvents(ctx context.Context) ([]corev1.Event, error) {
	list, err := e.client.CoreV1().Events("").List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + e.cfg.nodeName,
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// evictedUnderPressure: the eviction manager evicted the pod for memory — phase Failed, reason
// Evicted, upstream's message, a Warning Event Evicted — and the kubelet reported the node's
// MemoryPressure (an Event NodeHasInsufficientMemory). The Guaranteed pod still running is
// lab10-guaranteed's own check. Pure.
func evictedUnderPressure(ref string, pod *corev1.Pod, nodeName string, podEvents, nodeEvents []corev1.Event) result {
	if r := onNode(ref, pod, nodeName, lab10ApplyHog); r != nil {
		return *r
	}
	const says = "The node was low on resource: memory."
	if pod.Status.Phase != corev1.PodFailed || pod.Status.Reason != "Evicted" {
		return missing(fmt.Sprintf("pod %s is %s (reason %q), not Failed with reason Evicted", ref, pod.Status.Phase, pod.Status.Reason),
			"the eviction manager looks every 10 s: wait and run the check again; was the node started with the lab's config (evictionHard memory.available: 256Mi, --node-capacity memory=4Gi)?")
	}
	if !strings.HasPrefix(pod.Status.Message, says) {
		return missing(fmt.Sprintf("pod %s was evicted, but not for memory: %q", ref, pod.Status.Message), "see `kubectl describe pod "+pod.Name+"`")
	}
	if len(kubeletEvents(podEvents, "Evicted", says)) == 0 {
		return missing("there is no Evicted Event from the kubelet for "+ref, "Events are kept for an hour: delete the pod and create it again, "+lab10ApplyHog)
	}
	pressure := kubeletEvents(nodeEvents, "NodeHasInsufficientMemory", "")
	if len(pressure) == 0 {
		return missing("node "+nodeName+" never reported MemoryPressure (no NodeHasInsufficientMemory Event from the kubelet)",
			"the condition is reported at the next node status update (10 s): wait and run the check again; `kubectl describe node "+nodeName+"`")
	}
	return passed("%s: Evicted %q; node %s reported MemoryPressure at %s", ref, strings.TrimSpace(pod.Status.Message), nodeName,
		firstTime(&pressure[len(pressure)-1]).UTC().Format("15:04:05"))
}
