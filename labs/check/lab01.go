package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Lab 01, quick start: the node joined and is Ready, and a pod runs on it — in the API and in the
// runtime; and exercise 4's restart of the kubelet left its mark on hello: the built-in fake
// runtime died with the kubelet, so the new one created hello's container again (RESTARTS 1).
// Nothing else restarts a `sleep infinity` container.
const (
	lab01Hello   = "hello"
	lab01Create  = "kubectl run hello --image=busybox:1.36 -- sleep infinity"
	lab01Restart = "exercise 4: stop minikubelet (Ctrl-C in terminal 1) and start it again (make run); hello's RESTARTS becomes 1"
)

func lab01() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		{name: "a pod is Running on the node", run: func(ctx context.Context, e *env) result {
			_, r := runningPodOnNode(ctx, e)
			return r
		}},
		{name: "the runtime runs that pod", needs: []string{"a pod is Running on the node"}, run: func(ctx context.Context, e *env) result {
			pod, r := runningPodOnNode(ctx, e)
			if !r.ok {
				return r
			}
			st, err := e.fakeState(ctx)
			if err != nil {
				return missing("the fake runtime cannot be read", err.Error())
			}
			return runtimeRunsPod(pod, st.Sandboxes, st.Containers)
		}},
		{name: "hello outlived a restart of the kubelet", run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab01Hello)
			if err != nil {
				return missing("pod "+e.podRef(lab01Hello)+": "+err.Error(), "see the error")
			}
			return restartedWithKubelet(e.podRef(lab01Hello), pod, e.cfg.nodeName)
		}},
	}
}

// restartedWithKubelet: hello runs on the node and its container was created again at least once
// (restartCount ≥ 1): what a restart of minikubelet with its built-in runtime does. Pure.
func restartedWithKubelet(ref string, pod *corev1.Pod, nodeName string) result {
	if r := podRunningResult(ref, pod, nodeName, lab01Create); !r.ok {
		return r
	}
	cs := firstContainer(pod)
	if cs == nil || cs.RestartCount == 0 {
		return missing("pod "+ref+" has RESTARTS 0: the kubelet has not restarted since it started hello", lab01Restart)
	}
	return passed("pod %s has RESTARTS %d: the restarted kubelet found an empty runtime and created its container again", ref, cs.RestartCount)
}

// runningPodOnNode finds a Running and Ready pod on the node, preferring default/hello.
func runningPodOnNode(ctx context.Context, e *env) (*corev1.Pod, result) {
	list, err := e.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + e.cfg.nodeName})
	if err != nil {
		return nil, missing("pods on node "+e.cfg.nodeName+": "+err.Error(), "see the error")
	}
	var running []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if p.Status.Phase == corev1.PodRunning && podReady(p) && p.DeletionTimestamp == nil {
			running = append(running, p)
		}
	}
	if len(running) == 0 {
		return nil, missing(fmt.Sprintf("no pod is Running and Ready on node %s (%d pods are bound to it)", e.cfg.nodeName, len(list.Items)),
			"create one: "+lab01Create+", and watch it: kubectl get pods -o wide -w")
	}
	sort.Slice(running, func(i, j int) bool { return running[i].Name == "hello" && running[j].Name != "hello" })
	p := running[0]
	others := ""
	if len(running) > 1 {
		others = fmt.Sprintf(" (and %d more)", len(running)-1)
	}
	return p, passed("pod %s/%s is Running and Ready on node %s, IP %s%s", p.Namespace, p.Name, e.cfg.nodeName, p.Status.PodIP, others)
}

// runtimeRunsPod: the fake runtime has a READY sandbox for the pod, with the pod's IP, and runs the
// container whose ID the API status shows. Pure.
func runtimeRunsPod(pod *corev1.Pod, sandboxes []fakeSandbox, containers []fakeContainer) result {
	ref := pod.Namespace + "/" + pod.Name
	var ready *fakeSandbox
	for _, s := range sandboxesOf(sandboxes, pod.Namespace, pod.Name) {
		if s.State == runtimeapi.PodSandboxState_SANDBOX_READY.String() {
			ready = &s
		}
	}
	if ready == nil {
		return missing("the runtime has no READY sandbox for pod "+ref,
			"is minikubelet using the built-in fake runtime of this --root-dir? `minikubelet fake-runtime state --socket <root>/fake-runtime.sock` lists what it has")
	}
	cs := firstContainer(pod)
	if cs == nil || cs.ContainerID == "" {
		return missing("pod "+ref+" has no containerID in its status yet", "wait a second and run the check again")
	}
	_, id, _ := strings.Cut(cs.ContainerID, "://")
	for _, c := range containers {
		if c.ID == id && c.SandboxID == ready.ID && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING.String() {
			return passed("the runtime runs it: sandbox %s (%s, IP %s), container %s %s", short(ready.ID), ready.State, ready.IP, short(c.ID), c.State)
		}
	}
	return missing(fmt.Sprintf("the runtime does not run container %s of pod %s in sandbox %s", short(id), ref, short(ready.ID)),
		"compare `kubectl get pod "+pod.Name+" -o yaml` with `minikubelet fake-runtime state`; the minikubelet log says what happened")
}

// short is the 13-character prefix of an ID, as crictl shows it.
func short(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}
