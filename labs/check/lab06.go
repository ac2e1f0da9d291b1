package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Lab 06, the status manager: the pod status in the API is written by minikubelet (a PATCH of
// pods/status), and a deleted pod is finished by it — gone from the API server and from the node.
// Exercise 3's two patches behind the kubelet's back leave their marks on lab06-status: the
// condition of your own stays, the pod IP you wrote is overwritten by the kubelet's.
const (
	lab06Condition = "example.com/LabChecked"
	lab06FakeIP    = "10.99.99.99"
	lab06Patch     = `kubectl patch pod lab06-status --subresource=status --type=strategic -p '{"status":{"conditions":[{"type":"example.com/LabChecked","status":"True"}]}}'` +
		` and kubectl patch pod lab06-status --subresource=status --type=merge -p '{"status":{"podIP":"10.99.99.99","podIPs":[{"ip":"10.99.99.99"}]}}'`
	lab06Status       = "lab06-status"
	lab06Doomed       = "lab06-doomed"
	lab06CreateStatus = "kubectl run " + lab06Status + " --image=busybox:1.36 -- sleep infinity"
	lab06CreateDoomed = "kubectl run " + lab06Doomed + " --image=busybox:1.36 -- sleep infinity"
	// kubeletManager is the field manager of minikubelet's writes: its user agent's first word.
	kubeletManager = "minikubelet"
)

func lab06() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		podRunning(lab06Status, lab06CreateStatus),
		{name: "its status was written by minikubelet", needs: []string{podRuns(lab06Status)}, run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab06Status)
			if err != nil || pod == nil {
				return missing("pod "+e.podRef(lab06Status)+" cannot be read", "see the line above")
			}
			return statusByKubelet(pod)
		}},
		{name: "your status patches: one stayed, one was undone", needs: []string{podRuns(lab06Status)}, run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab06Status)
			if err != nil || pod == nil {
				return missing("pod "+e.podRef(lab06Status)+" cannot be read", "see the line above")
			}
			return patchedBehindBack(pod)
		}},
		{name: "pod " + lab06Doomed + " was deleted", run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab06Doomed)
			if err != nil {
				return missing("pod "+e.podRef(lab06Doomed)+": "+err.Error(), "see the error")
			}
			uid, when, err := scheduledUID(ctx, e, lab06Doomed)
			if err != nil {
				return missing("events of "+e.podRef(lab06Doomed)+": "+err.Error(), "see the error")
			}
			return podDeleted(e.podRef(lab06Doomed), pod, uid, when)
		}},
		{name: "nothing of it is left on the node", needs: []string{"pod " + lab06Doomed + " was deleted"}, run: func(ctx context.Context, e *env) result {
			uid, _, err := scheduledUID(ctx, e, lab06Doomed)
			if err != nil || uid == "" {
				return missing("pod "+e.podRef(lab06Doomed)+" left no Scheduled event", "see the line above")
			}
			st, err := e.fakeState(ctx)
			if err != nil {
				return missing("the fake runtime cannot be read", err.Error())
			}
			return nothingLeft(e, lab06Doomed, uid, sandboxesOf(st.Sandboxes, e.cfg.namespace, lab06Doomed))
		}},
	}
}

// statusByKubelet: the status subresource's fields are managed by minikubelet, and say what the
// kubelet knows: the container's runtime ID, the pod IP, Ready. Pure.
func statusByKubelet(pod *corev1.Pod) result {
	manager := ""
	for _, m := range pod.ManagedFields {
		if m.Subresource == "status" && strings.HasPrefix(m.Manager, kubeletManager) {
			manager = fmt.Sprintf("%s (%s %s)", m.Manager, m.Operation, m.Time.UTC().Format("15:04:05"))
		}
	}
	if manager == "" {
		return missing("no field manager "+kubeletManager+" wrote the status of "+pod.Name,
			"`kubectl get pod "+pod.Name+" -o yaml --show-managed-fields` shows who did; the status manager PATCHes it once the pod runs")
	}
	cs := firstContainer(pod)
	if cs == nil || cs.ContainerID == "" || pod.Status.PodIP == "" || pod.Status.StartTime == nil {
		return missing("the status of "+pod.Name+" lacks a containerID, podIP or startTime", "wait a second and run the check again")
	}
	return passed("status of %s written by %s: phase %s, podIP %s, containerID %s, Ready=%v",
		pod.Name, manager, pod.Status.Phase, pod.Status.PodIP, cs.ContainerID[:min(len(cs.ContainerID), 32)]+"…", podReady(pod))
}

// patchedBehindBack: the pod carries exercise 3's condition (mergeStatus keeps conditions the
// kubelet does not own), written by a field manager other than minikubelet, and its podIP is the
// kubelet's again, not exercise 3's. Pure.
func patchedBehindBack(pod *corev1.Pod) result {
	var cond *corev1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == lab06Condition {
			cond = &pod.Status.Conditions[i]
		}
	}
	if cond == nil {
		return missing("pod "+pod.Name+" has no condition "+lab06Condition+": exercise 3's patches were not made", "exercise 3: "+lab06Patch)
	}
	if pod.Status.PodIP == lab06FakeIP {
		return missing("pod "+pod.Name+" still shows your podIP "+lab06FakeIP, "the status manager writes its own back at its next sync (every 10 s): run the check again")
	}
	var others []string
	for _, m := range pod.ManagedFields {
		if m.Subresource == "status" && !strings.HasPrefix(m.Manager, kubeletManager) {
			others = append(others, m.Manager)
		}
	}
	if len(others) == 0 {
		return missing("the status of "+pod.Name+" has no field manager but "+kubeletManager, "patch it yourself, as exercise 3 does: "+lab06Patch)
	}
	return passed("your condition %s=%s stayed (field manager %s); your podIP %s did not: minikubelet wrote %s back",
		lab06Condition, cond.Status, strings.Join(others, ", "), lab06FakeIP, pod.Status.PodIP)
}

// scheduledUID finds the pod's UID from the scheduler's Scheduled event, the trace a deleted pod
// leaves in the API (for an hour). "" if there is none.
func scheduledUID(ctx context.Context, e *env, name string) (types.UID, metav1.Time, error) {
	events, err := e.client.CoreV1().Events(e.cfg.namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + name + ",reason=Scheduled",
	})
	if err != nil {
		return "", metav1.Time{}, err
	}
	var uid types.UID
	var when metav1.Time
	for i := range events.Items {
		ev := &events.Items[i]
		if t := eventTime(ev); uid == "" || t.After(when.Time) {
			uid, when = ev.InvolvedObject.UID, metav1.NewTime(t)
		}
	}
	return uid, when, nil
}

// podDeleted: the pod existed (the scheduler placed it) and is gone from the API now. Pure.
func podDeleted(ref string, pod *corev1.Pod, scheduledUID types.UID, scheduledAt metav1.Time) result {
	switch {
	case pod != nil && pod.DeletionTimestamp != nil:
		return missing("pod "+ref+" is being deleted but still in the API", "the kubelet removes it once its containers stopped: wait a few seconds")
	case pod != nil:
		return missing("pod "+ref+" still exists", "delete it and watch the status manager finish the deletion: kubectl delete pod "+pod.Name)
	case scheduledUID == "":
		return missing("no sign of pod "+ref+" (no Scheduled event in the last hour)", "create it, then delete it: "+lab06CreateDoomed+"; kubectl delete pod "+lab06Doomed)
	}
	return passed("pod %s (uid %s, scheduled %s) is gone from the API server", ref, scheduledUID, scheduledAt.UTC().Format("15:04:05"))
}

// nothingLeft: no sandbox of the pod in the runtime, no volume directory, no log directory.
func nothingLeft(e *env, name string, uid types.UID, sandboxes []fakeSandbox) result {
	if len(sandboxes) > 0 {
		return missing(fmt.Sprintf("the runtime still has %d sandbox(es) of %s (%s)", len(sandboxes), name, sandboxes[0].State),
			"housekeeping (every 2 s) removes the sandboxes of pods no longer desired: wait a few seconds")
	}
	podDir := e.path("pods", string(uid))
	if _, err := os.Stat(podDir); err == nil {
		return missing("its volume directory "+podDir+" is still there", "housekeeping removes it: wait a few seconds")
	}
	logDir := e.path("pod-logs", e.cfg.namespace+"_"+name+"_"+string(uid))
	if _, err := os.Stat(logDir); err == nil {
		return missing("its log directory "+logDir+" is still there", "housekeeping removes it: wait a few seconds")
	}
	return passed("no sandbox of %s in the runtime, no %s, no %s", name, podDir, logDir)
}
