package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Lab 04, PLEG: a container killed behind the kubelet's back (fake-runtime kill-container) is
// noticed by the relist and restarted; a sandbox that goes NOTREADY (fake-runtime
// sandbox-not-ready) is replaced by a new one, with a new IP. Exercise 3's slow runtime
// (fake-runtime latency ListContainers 2s) leaves relists of seconds in the kubelet's
// kubelet_pleg_relist_duration_seconds histogram, where a relist otherwise takes milliseconds.
const (
	lab04Kill          = "lab04-kill"
	lab04Sandbox       = "lab04-sandbox"
	lab04CreateKill    = "kubectl run " + lab04Kill + " --image=busybox:1.36 -- sleep infinity"
	lab04CreateSandbox = "kubectl run " + lab04Sandbox + " --image=busybox:1.36 -- sleep infinity"
	// killedMessage is the message the fake runtime gives a container it killed on request.
	killedMessage = "fault injection"
	// relistMetric is PLEG's relist histogram; a relist over relistSlowLe seconds was slowed down.
	relistMetric = "kubelet_pleg_relist_duration_seconds"
	relistSlowLe = "1.024"
	lab04Latency = "exercise 3: minikubelet fake-runtime latency ListContainers 2s --socket \"$SOCK\"; wait a few seconds; then undo it with latency ListContainers 0s"
)

func lab04() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		podRunning(lab04Kill, lab04CreateKill),
		{name: "the killed container was restarted", needs: []string{podRuns(lab04Kill)}, run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab04Kill)
			if err != nil || pod == nil {
				return missing("pod "+e.podRef(lab04Kill)+" cannot be read", "see the line above")
			}
			return killedAndRestarted(pod)
		}},
		{name: "a relist was slowed down by the runtime", run: func(ctx context.Context, e *env) result {
			body, err := e.kubeletGet(ctx, "/metrics")
			if err != nil {
				return missing("the kubelet's /metrics cannot be read: "+err.Error(), "is the kubelet API up? The check uses the admin client certificate of "+e.cfg.kubeconfig)
			}
			count, fast, ok := parseRelistHistogram(string(body))
			return slowRelists(count, fast, ok)
		}},
		podRunning(lab04Sandbox, lab04CreateSandbox),
		{name: "the NOTREADY sandbox was replaced", needs: []string{podRuns(lab04Sandbox)}, run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab04Sandbox)
			if err != nil || pod == nil {
				return missing("pod "+e.podRef(lab04Sandbox)+" cannot be read", "see the line above")
			}
			st, err := e.fakeState(ctx)
			if err != nil {
				return missing("the fake runtime cannot be read", err.Error())
			}
			return sandboxReplaced(pod, sandboxesOf(st.Sandboxes, pod.Namespace, pod.Name))
		}},
	}
}

// killedAndRestarted: the container's last state is the kill, and it runs again. Pure.
func killedAndRestarted(pod *corev1.Pod) result {
	cs := firstContainer(pod)
	kill := "kill its container: minikubelet fake-runtime kill-container <id> --socket _output/run/fake-runtime.sock " +
		"(the id: kubectl get pod " + pod.Name + " -o jsonpath='{.status.containerStatuses[0].containerID}', without minikubelet-fake://)"
	if cs == nil || cs.RestartCount == 0 {
		return missing("the container of "+pod.Name+" was never restarted (restartCount 0)", kill)
	}
	last := cs.LastTerminationState.Terminated
	if last == nil || !strings.Contains(last.Message, killedMessage) && last.ExitCode != 137 {
		what := "no last state"
		if last != nil {
			what = fmt.Sprintf("exit code %d, %q", last.ExitCode, last.Message)
		}
		return missing(fmt.Sprintf("restartCount is %d, but the last exit was not a kill-container (%s)", cs.RestartCount, what),
			"did minikubelet restart meanwhile (its in-process fake runtime starts empty)? Do the exercise again: "+kill)
	}
	return passed("restartCount %d; last state: exit code %d, reason %s, %q — PLEG saw ContainerDied and the pod worker started it again",
		cs.RestartCount, last.ExitCode, last.Reason, last.Message)
}

// sandboxReplaced: the runtime keeps the NOTREADY sandbox and has exactly one READY sandbox for the
// pod, whose IP the API shows. Pure.
func sandboxReplaced(pod *corev1.Pod, sandboxes []fakeSandbox) result {
	var ready, notReady []fakeSandbox
	for _, s := range sandboxes {
		if s.State == runtimeapi.PodSandboxState_SANDBOX_READY.String() {
			ready = append(ready, s)
		} else {
			notReady = append(notReady, s)
		}
	}
	if len(notReady) == 0 {
		return missing(fmt.Sprintf("the runtime has no NOTREADY sandbox of %s (%d READY)", pod.Name, len(ready)),
			"flip its sandbox: minikubelet fake-runtime sandbox-not-ready <sandbox-id> --socket _output/run/fake-runtime.sock "+
				"(the id: minikubelet fake-runtime state --socket … | grep -B1 '\"name\": \""+pod.Name+"\"')")
	}
	if len(ready) != 1 {
		return missing(fmt.Sprintf("the runtime has %d READY sandboxes of %s (want exactly 1)", len(ready), pod.Name),
			"wait a second: the pod worker creates the new sandbox at its next sync, then run the check again")
	}
	if pod.Status.PodIP != ready[0].IP {
		return missing(fmt.Sprintf("the API shows pod IP %s, the new sandbox has %s", pod.Status.PodIP, ready[0].IP),
			"wait a second for the status manager's PATCH, then run the check again")
	}
	restarts := int32(0)
	if cs := firstContainer(pod); cs != nil {
		restarts = cs.RestartCount
	}
	return passed("sandbox %s is %s (IP %s); the new sandbox %s is READY with IP %s, which the API shows; restartCount %d",
		short(notReady[len(notReady)-1].ID), notReady[len(notReady)-1].State, notReady[len(notReady)-1].IP, short(ready[0].ID), ready[0].IP, restarts)
}

// parseRelistHistogram reads from Prometheus text how many relists there were and how many took at
// most relistSlowLe seconds; ok is false when the histogram is not there. Pure.
func parseRelistHistogram(text string) (count, fast float64, ok bool) {
	var haveCount, haveFast bool
	for _, line := range strings.Split(text, "\n") {
		name, value, found := strings.Cut(line, " ")
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		switch name {
		case relistMetric + "_count":
			count, haveCount = v, true
		case relistMetric + `_bucket{le="` + relistSlowLe + `"}`:
			fast, haveFast = v, true
		}
	}
	return count, fast, haveCount && haveFast
}

// slowRelists: at least one relist took longer than relistSlowLe seconds. Pure.
func slowRelists(count, fast float64, ok bool) result {
	switch {
	case !ok:
		return missing("the kubelet's /metrics has no "+relistMetric+" histogram", "is this minikubelet? kubelet_api /metrics | grep "+relistMetric)
	case count <= fast:
		return missing(fmt.Sprintf("all %.0f relists since minikubelet started took at most %s s: the runtime was never slow", count, relistSlowLe), lab04Latency)
	}
	return passed("%.0f of %.0f relists took longer than %s s (%s): the runtime's slow ListContainers held PLEG back", count-fast, count, relistSlowLe, relistMetric)
}
