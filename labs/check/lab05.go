package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Lab 05, pod workers: a container that exits 1 under restartPolicy Always is restarted behind a
// growing back-off (CrashLoopBackOff); under restartPolicy Never the pod ends Failed and its
// worker goes terminating → terminated, stopping the sandbox. Exercise 3 deletes the crash-looping
// pod and creates it again: the kubelet's journal keeps the deleted one (another UID), its
// container starts, the DELETE that reached the sync loop and the status manager's final delete.
const (
	lab05Crash       = "lab05-crash"
	lab05Once        = "lab05-once"
	lab05CreateCrash = "kubectl run " + lab05Crash + " --image=busybox:1.36 -- sh -c \"exit 1\""
	lab05CreateOnce  = "kubectl run " + lab05Once + " --image=busybox:1.36 --restart=Never -- sh -c \"exit 1\""
)

func lab05() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		{name: "pod " + lab05Crash + " is in CrashLoopBackOff", run: func(ctx context.Context, e *env) result {
			// Between two back-offs the container runs and exits within a second (Error); look a
			// few times before deciding.
			var r result
			for range 6 {
				pod, err := e.pod(ctx, lab05Crash)
				if err != nil {
					return missing("pod "+e.podRef(lab05Crash)+": "+err.Error(), "see the error")
				}
				if r = crashLooping(e.podRef(lab05Crash), pod, e.cfg.nodeName); r.ok {
					return r
				}
				select {
				case <-ctx.Done():
					return r
				case <-time.After(time.Second):
				}
			}
			return r
		}},
		{name: "a crash-looping " + lab05Crash + " was deleted", run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab05Crash)
			if err != nil {
				return missing("pod "+e.podRef(lab05Crash)+": "+err.Error(), "see the error")
			}
			events, err := e.journal(ctx, lab05Crash)
			if err != nil {
				return missing(err.Error(), "is minikubelet running, with its kubelet API where the Node says?")
			}
			var current types.UID
			if pod != nil {
				current = pod.UID
			}
			return deletedWhileCrashLooping(e.podRef(lab05Crash), current, events)
		}},
		{name: "pod " + lab05Once + " ended Failed", run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab05Once)
			if err != nil {
				return missing("pod "+e.podRef(lab05Once)+": "+err.Error(), "see the error")
			}
			return endedFailed(e.podRef(lab05Once), pod, e.cfg.nodeName)
		}},
		{name: "its worker stopped the sandbox", needs: []string{"pod " + lab05Once + " ended Failed"}, run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab05Once)
			if err != nil || pod == nil {
				return missing("pod "+e.podRef(lab05Once)+" cannot be read", "see the line above")
			}
			st, err := e.fakeState(ctx)
			if err != nil {
				return missing("the fake runtime cannot be read", err.Error())
			}
			return sandboxStopped(pod, st.Sandboxes, st.Containers)
		}},
	}
}

// crashLooping: restartPolicy Always, exited 1 and now waiting in CrashLoopBackOff. Pure.
func crashLooping(ref string, pod *corev1.Pod, nodeName string) result {
	switch {
	case pod == nil:
		return missing("pod "+ref+" does not exist", "create it: "+lab05CreateCrash)
	case pod.Spec.NodeName != nodeName:
		return missing("pod "+ref+" is not on node "+nodeName+" (node: "+pod.Spec.NodeName+")", "delete it and create it again: "+lab05CreateCrash)
	case pod.Spec.RestartPolicy != corev1.RestartPolicyAlways:
		return missing("pod "+ref+" has restartPolicy "+string(pod.Spec.RestartPolicy)+", not Always",
			"delete it and create it again without --restart: "+lab05CreateCrash)
	}
	cs := firstContainer(pod)
	if cs == nil || cs.RestartCount == 0 {
		return missing("pod "+ref+" has not restarted its container yet", "wait a few seconds and run the check again")
	}
	last := cs.LastTerminationState.Terminated
	if last == nil || last.ExitCode != 1 {
		return missing("the last exit of "+ref+"'s container was not exit code 1", "its command must be sh -c \"exit 1\": "+lab05CreateCrash)
	}
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
		return missing(fmt.Sprintf("pod %s restarted %d times but is not waiting in CrashLoopBackOff now (state %s)", ref, cs.RestartCount, stateName(cs.State)),
			"run the check again in a few seconds")
	}
	return passed("%s: CrashLoopBackOff, restartCount %d, last exit code %d; %s", ref, cs.RestartCount, last.ExitCode, cs.State.Waiting.Message)
}

// endedFailed: restartPolicy Never, exited 1 once, phase Failed. Pure.
func endedFailed(ref string, pod *corev1.Pod, nodeName string) result {
	switch {
	case pod == nil:
		return missing("pod "+ref+" does not exist", "create it: "+lab05CreateOnce)
	case pod.Spec.NodeName != nodeName:
		return missing("pod "+ref+" is not on node "+nodeName, "delete it and create it again: "+lab05CreateOnce)
	case pod.Spec.RestartPolicy != corev1.RestartPolicyNever:
		return missing("pod "+ref+" has restartPolicy "+string(pod.Spec.RestartPolicy)+", not Never", "delete it and create it again: "+lab05CreateOnce)
	case pod.Status.Phase != corev1.PodFailed:
		return missing("pod "+ref+" is "+string(pod.Status.Phase)+", not Failed", "wait a few seconds and run the check again")
	}
	cs := firstContainer(pod)
	if cs == nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 1 || cs.RestartCount != 0 {
		return missing("pod "+ref+" is Failed, but not by one exit 1 of its container", "delete it and create it again: "+lab05CreateOnce)
	}
	return passed("%s: phase Failed, container terminated once (exit code 1, reason %s), never restarted", ref, cs.State.Terminated.Reason)
}

// sandboxStopped: nothing of the terminated pod runs in the runtime: its sandbox is NOTREADY. Pure.
func sandboxStopped(pod *corev1.Pod, sandboxes []fakeSandbox, containers []fakeContainer) result {
	mine := sandboxesOf(sandboxes, pod.Namespace, pod.Name)
	if len(mine) == 0 {
		return missing("the runtime has no sandbox of "+pod.Name, "did minikubelet restart since (its in-process fake runtime starts empty)? Delete the pod and create it again: "+lab05CreateOnce)
	}
	for _, s := range mine {
		if s.State == runtimeapi.PodSandboxState_SANDBOX_READY.String() {
			return missing("sandbox "+short(s.ID)+" of "+pod.Name+" is still READY", "the pod worker stops it when the pod turns terminal: wait a second and run the check again")
		}
		for _, c := range containers {
			if c.SandboxID == s.ID && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING.String() {
				return missing("container "+short(c.ID)+" of "+pod.Name+" still runs", "wait a second and run the check again")
			}
		}
	}
	last := mine[len(mine)-1]
	return passed("sandbox %s of %s is %s and none of its containers runs: the worker went terminating → terminated", short(last.ID), pod.Name, last.State)
}

// deletedWhileCrashLooping: the journal holds a lab05-crash other than the current one (current:
// its UID, "" if none) whose container started more than once (it crash-looped), whose deletion
// reached the sync loop (configCh DELETE) and which the status manager deleted from the API
// server. Pure.
func deletedWhileCrashLooping(ref string, current types.UID, events []journal.Event) result {
	type life struct {
		starts           int
		deleteSeen, gone time.Time
	}
	lives := map[string]*life{}
	var order []string
	for _, ev := range events {
		if ev.UID == "" || types.UID(ev.UID) == current {
			continue
		}
		l := lives[ev.UID]
		if l == nil {
			l = &life{}
			lives[ev.UID] = l
			order = append(order, ev.UID)
		}
		switch {
		case ev.Source == journal.SourceCRI && ev.Kind == "StartContainer" && ev.Fields["error"] == "":
			l.starts++
		case ev.Source == journal.SourceSyncLoop && ev.Kind == "configCh DELETE" && l.deleteSeen.IsZero():
			l.deleteSeen = ev.Time
		case ev.Source == journal.SourceStatus && ev.Kind == "delete" && ev.Fields["error"] == "":
			l.gone = ev.Time
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		uid, l := order[i], lives[order[i]]
		if l.starts >= 2 && !l.deleteSeen.IsZero() && !l.gone.IsZero() {
			return passed("%s (uid %s) was deleted after %d starts of its container: %s from the DELETE to the status manager's final delete, back-off or not",
				ref, uid, l.starts, l.gone.Sub(l.deleteSeen).Round(time.Millisecond))
		}
	}
	return missing(fmt.Sprintf("the kubelet's journal shows no %s deleted while crash-looping since minikubelet started (%d earlier pod(s) of that name)", ref, len(order)),
		"exercise 3: once "+lab05Crash+" has restarted, kubectl delete pod "+lab05Crash+"; then create it again for the other checks: "+lab05CreateCrash)
}

func stateName(s corev1.ContainerState) string {
	switch {
	case s.Waiting != nil:
		return "waiting: " + s.Waiting.Reason
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated: %s, exit code %d", s.Terminated.Reason, s.Terminated.ExitCode)
	}
	return "unknown"
}
