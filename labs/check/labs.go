package main

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// lab is one course lab: its directory under labs/ and its checks, in the order of its README.
type lab struct {
	dir    string
	checks []check
}

// allLabs are the course labs in order. Each labNN.go holds one lab's checks.
func allLabs() []lab {
	return []lab{
		{"00-one-pods-life", lab00()},
		{"01-quick-start", lab01()},
		{"02-tls-bootstrap", lab02()},
		{"03-node-registration-and-lease", lab03()},
		{"04-pleg", lab04()},
		{"05-pod-workers", lab05()},
		{"06-status-manager", lab06()},
		{"07-secret-configmap-managers", lab07()},
		{"08-kubectl-exec", lab08()},
		{"09-probes-and-init-containers", lab09()},
		{"10-resource-management", lab10()},
		{"11-kubeadm-cluster", lab11()},
		{"12-volume-manager", lab12()},
	}
}

// apiServerAnswers is every lab's first check: without the API server nothing else can be read.
func apiServerAnswers() check {
	return check{name: "the API server answers", gate: true, run: func(ctx context.Context, e *env) result {
		if e.loadErr != nil {
			if _, err := os.Stat(e.cfg.kubeconfig); err != nil {
				return missing("no admin kubeconfig at "+e.cfg.kubeconfig,
					"start the local control plane and minikubelet with `make run` (or pass --kubeconfig)")
			}
			return missing("the admin kubeconfig "+e.cfg.kubeconfig+" cannot be used: "+e.loadErr.Error(), "run `make cluster-up` to write it again")
		}
		v, err := e.client.Discovery().ServerVersion()
		if err != nil {
			return missing("the API server in "+e.cfg.kubeconfig+" does not answer: "+err.Error(),
				"is the control plane running? `make cluster-status` shows it; `make cluster-up` (or `make run`) starts it")
		}
		return passed("the API server answers (%s, %s)", v.GitVersion, e.restConfig.Host)
	}}
}

// nodeReady: minikubelet runs as the node and the node is Ready.
func nodeReady() check {
	return check{name: "the node is Ready", gate: true, run: func(ctx context.Context, e *env) result {
		node, err := e.node(ctx)
		if apierrors.IsNotFound(err) {
			return missing("node "+e.cfg.nodeName+" is not registered",
				"start minikubelet with `make run` (it registers as the hostname, lowercased; pass --node or NODE_NAME if yours has another name)")
		}
		if err != nil {
			return missing("node "+e.cfg.nodeName+": "+err.Error(), "see the error")
		}
		c := nodeCondition(node, corev1.NodeReady)
		if c == nil || c.Status != corev1.ConditionTrue {
			why := "no Ready condition yet"
			if c != nil {
				why = fmt.Sprintf("Ready=%s (%s: %s)", c.Status, c.Reason, c.Message)
			}
			return missing("node "+node.Name+" is not Ready: "+why,
				"is minikubelet running (and not stopped: a SIGSTOP or a breakpoint)? Its log says why; `kubectl describe node "+node.Name+"`")
		}
		return passed("node %s is Ready (%s: %s)", node.Name, c.Reason, c.Message)
	}}
}

// podRunning: the lab's pod exists, is on our node, Running and Ready. create is the command
// that makes it, for the fix.
func podRunning(name, create string) check {
	return check{name: podRuns(name), run: func(ctx context.Context, e *env) result {
		pod, err := e.pod(ctx, name)
		if err != nil {
			return missing("pod "+e.podRef(name)+": "+err.Error(), "see the error")
		}
		return podRunningResult(e.podRef(name), pod, e.cfg.nodeName, create)
	}}
}

// podRuns is the name of podRunning's check, for needs.
func podRuns(name string) string { return "pod " + name + " runs" }

// podRunningResult decides podRunning from the pod as read (nil: not found). Pure.
func podRunningResult(ref string, pod *corev1.Pod, nodeName, create string) result {
	switch {
	case pod == nil:
		return missing("pod "+ref+" does not exist", "create it: "+create)
	case pod.DeletionTimestamp != nil:
		return missing("pod "+ref+" is being deleted", "wait until it is gone, then create it again: "+create)
	case pod.Spec.NodeName == "":
		return missing("pod "+ref+" is not scheduled yet", "`kubectl describe pod "+pod.Name+"` says why (is the node Ready?)")
	case pod.Spec.NodeName != nodeName:
		return missing("pod "+ref+" was scheduled to node "+pod.Spec.NodeName+", not "+nodeName,
			"delete it and create it again while "+nodeName+" is the only Ready node (or check --node)")
	case pod.Status.Phase != corev1.PodRunning || !podReady(pod):
		return missing(fmt.Sprintf("pod %s on %s is %s, not Running and Ready%s", ref, nodeName, pod.Status.Phase, waitingReason(pod)),
			"wait a few seconds and run the check again; `kubectl describe pod "+pod.Name+"` and the minikubelet log say what it waits for")
	}
	return passed("pod %s is Running and Ready on node %s", ref, nodeName)
}

func nodeCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// firstContainer is the status of the pod's only (first) container, nil before the kubelet wrote one.
func firstContainer(pod *corev1.Pod) *corev1.ContainerStatus {
	if len(pod.Status.ContainerStatuses) == 0 {
		return nil
	}
	return &pod.Status.ContainerStatuses[0]
}

// waitingReason is ", waiting: <reason>" when the first container waits, for messages.
func waitingReason(pod *corev1.Pod) string {
	if cs := firstContainer(pod); cs != nil && cs.State.Waiting != nil {
		return ", its container waits: " + cs.State.Waiting.Reason
	}
	return ""
}

// sandboxesOf are the fake runtime's sandboxes of the pod namespace/name, oldest first.
func sandboxesOf(sandboxes []fakeSandbox, namespace, name string) []fakeSandbox {
	var out []fakeSandbox
	for _, s := range sandboxes {
		if s.Namespace == namespace && s.Name == name {
			out = append(out, s)
		}
	}
	return out
}
