package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Lab 09, probes and init containers: a liveness probe that fails makes the kubelet kill and
// restart the container (Events Unhealthy and Killing, from the kubelet); a readiness probe that
// fails takes the pod out of Ready without a restart, and back; init containers run one after
// the other before the app; a failing one crash-loops (restartPolicy Always) or fails the pod
// (Never); a native sidecar runs beside a Job-like app and is stopped after it: the pod Succeeded.
// Exercise 6 deletes lab09-shutdown: the kubelet's journal keeps the order of its StopContainer
// calls — the app's, after its preStop hook, before its sidecar's.
const (
	lab09Liveness  = "lab09-liveness"
	lab09Ready     = "lab09-ready"
	lab09Init      = "lab09-init"
	lab09InitCrash = "lab09-init-crash"
	lab09InitNever = "lab09-init-never"
	lab09Sidecar   = "lab09-sidecar"
	lab09Shutdown  = "lab09-shutdown"

	lab09Apply         = "kubectl apply -f labs/09-probes-and-init-containers/"
	lab09ApplyLiveness = lab09Apply + "liveness.yaml"
	lab09ApplyReady    = lab09Apply + "readiness.yaml"
	lab09ApplyInit     = lab09Apply + "init.yaml"
	lab09ApplyInitFail = lab09Apply + "init-fail.yaml"
	lab09ApplySidecar  = lab09Apply + "sidecar.yaml"
	lab09Exercise6     = "exercise 6: " + lab09Apply + "shutdown.yaml; once it runs, kubectl delete pod " + lab09Shutdown
	// lab09Unready and lab09ReadyAgain flip lab09-ready's readiness probe (httpd serves /www).
	lab09Unready    = "kubectl exec " + lab09Ready + " -- rm /www/ready"
	lab09ReadyAgain = "kubectl exec " + lab09Ready + " -- touch /www/ready"

	// kubeletSource is the Event source of the kubelet's Events (minikubelet's too).
	kubeletSource = "kubelet"
)

func lab09() []check {
	// podCheck reads the pod name and its kubelet Events, and decides with decide (pure).
	podCheck := func(name, what string, decide func(ref string, pod *corev1.Pod, nodeName string, events []corev1.Event) result) check {
		return check{name: what, run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, name)
			if err != nil {
				return missing("pod "+e.podRef(name)+": "+err.Error(), "see the error")
			}
			var events []corev1.Event
			if pod != nil {
				if events, err = e.podEvents(ctx, pod); err != nil {
					return missing("events of "+e.podRef(name)+": "+err.Error(), "see the error")
				}
			}
			return decide(e.podRef(name), pod, e.cfg.nodeName, events)
		}}
	}
	return []check{
		apiServerAnswers(),
		nodeReady(),
		podCheck(lab09Liveness, "the liveness probe restarted "+lab09Liveness, livenessRestarted),
		podCheck(lab09Ready, "the readiness of "+lab09Ready+" went both ways", readinessFlipped),
		podCheck(lab09Init, "the init containers of "+lab09Init+" ran in order", func(ref string, pod *corev1.Pod, nodeName string, _ []corev1.Event) result {
			return initInOrder(ref, pod, nodeName)
		}),
		{name: "pod " + lab09InitCrash + " is in Init:CrashLoopBackOff", run: func(ctx context.Context, e *env) result {
			// Between two back-offs the init container runs and exits at once (Init:Error): look
			// a few times before deciding, as lab 05 does.
			var r result
			for range 6 {
				pod, err := e.pod(ctx, lab09InitCrash)
				if err != nil {
					return missing("pod "+e.podRef(lab09InitCrash)+": "+err.Error(), "see the error")
				}
				if r = initCrashLooping(e.podRef(lab09InitCrash), pod, e.cfg.nodeName); r.ok || pod == nil {
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
		podCheck(lab09InitNever, "pod "+lab09InitNever+" failed in its init container", func(ref string, pod *corev1.Pod, nodeName string, _ []corev1.Event) result {
			return initFailed(ref, pod, nodeName)
		}),
		podCheck(lab09Sidecar, "pod "+lab09Sidecar+" Succeeded, its sidecar stopped after the app", func(ref string, pod *corev1.Pod, nodeName string, _ []corev1.Event) result {
			return sidecarStoppedAfterApp(ref, pod, nodeName)
		}),
		{name: "the deleted " + lab09Shutdown + " stopped its app before its sidecar", run: func(ctx context.Context, e *env) result {
			events, err := e.journal(ctx, lab09Shutdown)
			if err != nil {
				return missing(err.Error(), "is minikubelet running, with its kubelet API where the Node says?")
			}
			return appStoppedFirst(e.podRef(lab09Shutdown), events)
		}},
	}
}

// appStoppedFirst: the journal holds a deletion of lab09-shutdown (configCh DELETE) followed by
// StopContainer of app, then of the sidecar log-shipper. The latest such pod counts. Pure.
func appStoppedFirst(ref string, events []journal.Event) result {
	type stop struct {
		deleted, app, sidecar *journal.Event
	}
	stops := map[string]*stop{}
	var order []string
	for i := range events {
		ev := &events[i]
		if ev.UID == "" {
			continue
		}
		st := stops[ev.UID]
		if st == nil {
			st = &stop{}
			stops[ev.UID] = st
			order = append(order, ev.UID)
		}
		switch {
		case ev.Source == journal.SourceSyncLoop && ev.Kind == "configCh DELETE" && st.deleted == nil:
			st.deleted = ev
		case ev.Source == journal.SourceCRI && ev.Kind == "StopContainer" && st.deleted != nil && ev.Fields["container"] == "app" && st.app == nil:
			st.app = ev
		case ev.Source == journal.SourceCRI && ev.Kind == "StopContainer" && st.deleted != nil && ev.Fields["container"] == "log-shipper" && st.sidecar == nil:
			st.sidecar = ev
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		st := stops[order[i]]
		switch {
		case st.deleted == nil || st.app == nil || st.sidecar == nil:
			continue
		case st.sidecar.Seq < st.app.Seq:
			return missing(fmt.Sprintf("%s (uid %s): the sidecar log-shipper was stopped before app", ref, order[i]),
				"the sidecar must wait for app (terminationOrder in pkg/kuberuntime): the minikubelet log says what happened")
		}
		return passed("%s (uid %s) deleted at %s: app stopped %s later (its preStop hook), then log-shipper (journal seq %d, %d)",
			ref, order[i], st.deleted.Time.UTC().Format("15:04:05.000"), st.app.Time.Sub(st.deleted.Time).Round(100*time.Millisecond), st.app.Seq, st.sidecar.Seq)
	}
	return missing(fmt.Sprintf("the kubelet's journal shows no deletion of %s that stopped both its containers since minikubelet started", ref), lab09Exercise6)
}

// podEvents are the Events about this pod (this UID: not an earlier pod of the same name).
func (e *env) podEvents(ctx context.Context, pod *corev1.Pod) ([]corev1.Event, error) {
	list, err := e.client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod.Name + ",involvedObject.uid=" + string(pod.UID),
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// onNode is the first thing every lab 09 check asks: does the pod exist, on our node, not being
// deleted? It returns a missing result, or nil when the pod is there. Pure.
func onNode(ref string, pod *corev1.Pod, nodeName, create string) *result {
	var r result
	switch {
	case pod == nil:
		r = missing("pod "+ref+" does not exist", "create it: "+create)
	case pod.DeletionTimestamp != nil:
		r = missing("pod "+ref+" is being deleted", "wait until it is gone, then create it again: "+create)
	case pod.Spec.NodeName == "":
		r = missing("pod "+ref+" is not scheduled yet", "`kubectl describe pod "+pod.Name+"` says why (is the node Ready?)")
	case pod.Spec.NodeName != nodeName:
		r = missing("pod "+ref+" was scheduled to node "+pod.Spec.NodeName+", not "+nodeName,
			"delete it and create it again while "+nodeName+" is the only Ready node (or check --node)")
	default:
		return nil
	}
	return &r
}

// kubeletEvents are the Events from the kubelet with this reason whose message contains text,
// oldest first.
func kubeletEvents(events []corev1.Event, reason, text string) []corev1.Event {
	var out []corev1.Event
	for _, ev := range events {
		if ev.Source.Component == kubeletSource && ev.Reason == reason && strings.Contains(ev.Message, text) {
			out = append(out, ev)
		}
	}
	sort.Slice(out, func(i, j int) bool { return firstTime(&out[i]).Before(firstTime(&out[j])) })
	return out
}

// firstTime is when an Event (possibly counted several times) was first seen.
func firstTime(ev *corev1.Event) time.Time {
	for _, t := range []time.Time{ev.FirstTimestamp.Time, ev.EventTime.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return ev.LastTimestamp.Time
}

// eventCount is how often an Event happened (a kubelet Event's count; 1 if not counted).
func eventCount(ev *corev1.Event) int32 {
	if ev.Series != nil && ev.Series.Count > 0 {
		return ev.Series.Count
	}
	return max(ev.Count, 1)
}

// livenessRestarted: the container was restarted, and the kubelet said why: Unhealthy ("Liveness
// probe failed") and Killing ("failed liveness probe"). Pure.
func livenessRestarted(ref string, pod *corev1.Pod, nodeName string, events []corev1.Event) result {
	if r := onNode(ref, pod, nodeName, lab09ApplyLiveness); r != nil {
		return *r
	}
	wait := "the probe finds /tmp/healthy for 30 s, then fails 3 times 5 s apart: wait about 45 s after the pod started " +
		"(kubectl get pod " + pod.Name + " -w), then run the check again"
	cs := firstContainer(pod)
	if cs == nil || cs.RestartCount == 0 {
		return missing("the container of "+ref+" was never restarted (restartCount 0)", wait)
	}
	unhealthy := kubeletEvents(events, "Unhealthy", "Liveness probe failed")
	if len(unhealthy) == 0 {
		return missing(fmt.Sprintf("%s restarted %d times, but there is no Unhealthy Event \"Liveness probe failed\" from the kubelet", ref, cs.RestartCount),
			"Events are kept for an hour: delete the pod and create it again, "+lab09ApplyLiveness+"; `kubectl describe pod "+pod.Name+"` shows them")
	}
	killing := kubeletEvents(events, "Killing", "failed liveness probe")
	if len(killing) == 0 {
		return missing("there is an Unhealthy Event, but no Killing Event \"… failed liveness probe, will be restarted\" for "+ref,
			"the kubelet kills the container at the third failure in a row: wait 5 s and run the check again")
	}
	last := cs.LastTerminationState.Terminated
	exit := "no last state"
	if last != nil {
		exit = fmt.Sprintf("last exit code %d (%s)", last.ExitCode, last.Reason)
	}
	u, k := unhealthy[len(unhealthy)-1], killing[len(killing)-1]
	return passed("%s: restartCount %d, %s; Events from the kubelet: Unhealthy ×%d %q, Killing ×%d %q",
		ref, cs.RestartCount, exit, eventCount(&u), strings.TrimSpace(u.Message), eventCount(&k), k.Message)
}

// readinessFlipped: the readiness probe failed (an Unhealthy "Readiness probe failed" Event), the
// pod became Ready again after that, and the container was never restarted for it. Pure.
func readinessFlipped(ref string, pod *corev1.Pod, nodeName string, events []corev1.Event) result {
	if r := onNode(ref, pod, nodeName, lab09ApplyReady); r != nil {
		return *r
	}
	cs := firstContainer(pod)
	if pod.Status.Phase != corev1.PodRunning || cs == nil || cs.State.Running == nil {
		return missing(fmt.Sprintf("pod %s is %s, its container is not running%s", ref, pod.Status.Phase, waitingReason(pod)),
			"wait a few seconds; `kubectl describe pod "+pod.Name+"` and the minikubelet log say what it waits for")
	}
	if cs.RestartCount != 0 {
		return missing(fmt.Sprintf("the container of %s was restarted %d times: a readiness probe never restarts a container", ref, cs.RestartCount),
			"did the pod get a liveness probe, or did minikubelet restart? Delete it and create it again: "+lab09ApplyReady)
	}
	failed := kubeletEvents(events, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404")
	ready := podCondition(pod, corev1.PodReady)
	switch {
	case len(failed) == 0 && ready != nil && ready.Status == corev1.ConditionTrue:
		return missing(ref+" is Ready and its readiness probe never failed",
			"make it fail: "+lab09Unready+" (READY goes 0/1 within 6 s), then put the file back: "+lab09ReadyAgain)
	case len(failed) == 0:
		return missing(ref+" is not Ready yet and its readiness probe never failed", "wait a few seconds and run the check again")
	case ready == nil || ready.Status != corev1.ConditionTrue:
		why := "no Ready condition"
		if ready != nil {
			why = fmt.Sprintf("Ready=%s (%s: %s)", ready.Status, ready.Reason, ready.Message)
		}
		return missing(ref+" is not Ready now: "+why, "put the file back: "+lab09ReadyAgain+", and watch READY go 1/1")
	}
	first := firstTime(&failed[0])
	if ready.LastTransitionTime.Time.Before(first) {
		return missing(fmt.Sprintf("%s has been Ready since %s, before its readiness probe failed (%s)", ref,
			ready.LastTransitionTime.UTC().Format("15:04:05"), first.UTC().Format("15:04:05")),
			"the Ready condition should have gone False and back: make the probe fail for a few seconds, "+lab09Unready+", then "+lab09ReadyAgain)
	}
	last := failed[len(failed)-1]
	return passed("%s: readiness failed (%q, ×%d since %s), Ready again since %s, restartCount 0",
		ref, last.Message, eventCount(&last), first.UTC().Format("15:04:05"), ready.LastTransitionTime.UTC().Format("15:04:05"))
}

// initInOrder: every init container completed (exit 0), each one starting after the one before
// ended, and the app started after the last; the pod is Initialized and Running. Pure.
func initInOrder(ref string, pod *corev1.Pod, nodeName string) result {
	if r := onNode(ref, pod, nodeName, lab09ApplyInit); r != nil {
		return *r
	}
	if len(pod.Spec.InitContainers) < 2 {
		return missing(fmt.Sprintf("pod %s has %d init containers, not 2", ref, len(pod.Spec.InitContainers)),
			"delete it and create it from the lab's manifest: "+lab09ApplyInit)
	}
	if pod.Status.Phase != corev1.PodRunning {
		return missing(fmt.Sprintf("pod %s is %s, not Running yet", ref, pod.Status.Phase),
			"its init containers take 8 s each: watch it with kubectl get pod "+pod.Name+" -w and run the check again")
	}
	var steps []string
	prevEnd, prevName := time.Time{}, ""
	for i := range pod.Spec.InitContainers {
		name := pod.Spec.InitContainers[i].Name
		cs := statusOf(pod.Status.InitContainerStatuses, name)
		if cs == nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
			return missing("init container "+name+" of "+ref+" has not completed (exit code 0)",
				"`kubectl describe pod "+pod.Name+"` shows its state; wait, or delete the pod and create it again: "+lab09ApplyInit)
		}
		t := cs.State.Terminated
		if t.StartedAt.Time.Before(prevEnd) {
			return missing(fmt.Sprintf("init container %s started at %s, before %s ended (%s)", name,
				t.StartedAt.UTC().Format("15:04:05"), prevName, prevEnd.UTC().Format("15:04:05")),
				"init containers run one at a time, in spec order: see computeInitContainerActions (pkg/kuberuntime/init_actions.go)")
		}
		steps = append(steps, fmt.Sprintf("%s %s–%s", name, t.StartedAt.UTC().Format("15:04:05"), t.FinishedAt.UTC().Format("15:04:05")))
		prevEnd, prevName = t.FinishedAt.Time, name
	}
	app := firstContainer(pod)
	if app == nil || app.State.Running == nil {
		return missing("the app container of "+ref+" does not run", "wait a second and run the check again")
	}
	if app.State.Running.StartedAt.Time.Before(prevEnd) {
		return missing(fmt.Sprintf("the app of %s started at %s, before the last init container ended (%s)", ref,
			app.State.Running.StartedAt.UTC().Format("15:04:05"), prevEnd.UTC().Format("15:04:05")),
			"the app must wait for every init container: see computePodActions (pkg/kuberuntime/actions.go)")
	}
	if c := podCondition(pod, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionTrue {
		return missing(ref+" runs but its Initialized condition is not True", "wait a second for the status manager's PATCH, then run the check again")
	}
	return passed("%s: %s, then %s from %s; Initialized", ref, strings.Join(steps, ", then "), app.Name, app.State.Running.StartedAt.UTC().Format("15:04:05"))
}

// initCrashLooping: restartPolicy Always; the init container exited 1, was restarted and now waits
// in CrashLoopBackOff; the app never started; the pod is Pending. Pure.
func initCrashLooping(ref string, pod *corev1.Pod, nodeName string) result {
	if r := onNode(ref, pod, nodeName, lab09ApplyInitFail); r != nil {
		return *r
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || len(pod.Spec.InitContainers) == 0 {
		return missing("pod "+ref+" is not the lab's (restartPolicy "+string(pod.Spec.RestartPolicy)+", Always expected, with an init container)",
			"delete it and create it from the lab's manifest: "+lab09ApplyInitFail)
	}
	cs := statusOf(pod.Status.InitContainerStatuses, pod.Spec.InitContainers[0].Name)
	if cs == nil || cs.RestartCount == 0 {
		return missing("the init container of "+ref+" has not been restarted yet", "wait a few seconds and run the check again")
	}
	if last := cs.LastTerminationState.Terminated; last == nil || last.ExitCode != 1 {
		return missing("the last exit of "+ref+"'s init container was not exit code 1", "create the pod from the lab's manifest: "+lab09ApplyInitFail)
	}
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
		return missing(fmt.Sprintf("the init container of %s restarted %d times but is not waiting in CrashLoopBackOff now (state %s)", ref, cs.RestartCount, stateName(cs.State)),
			"run the check again in a few seconds")
	}
	if app := firstContainer(pod); app != nil && (app.State.Waiting == nil || app.ContainerID != "") {
		return missing(fmt.Sprintf("the app container of %s has run (state %s) though its init container never succeeded", ref, stateName(app.State)),
			"regular containers wait for every init container: see computeInitContainerActions (pkg/kuberuntime/init_actions.go)")
	}
	if pod.Status.Phase != corev1.PodPending {
		return missing("pod "+ref+" is "+string(pod.Status.Phase)+", not Pending", "a pod whose init container will be restarted stays Pending: see podPhase (pkg/kubelet/pod_phase.go)")
	}
	return passed("%s: Pending, init container %s in CrashLoopBackOff, restartCount %d, last exit code 1; app never started",
		ref, cs.Name, cs.RestartCount)
}

// initFailed: restartPolicy Never; the init container exited 1 once; the pod Failed and its app
// never started. Pure.
func initFailed(ref string, pod *corev1.Pod, nodeName string) result {
	if r := onNode(ref, pod, nodeName, lab09ApplyInitFail); r != nil {
		return *r
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || len(pod.Spec.InitContainers) == 0 {
		return missing("pod "+ref+" is not the lab's (restartPolicy "+string(pod.Spec.RestartPolicy)+", Never expected, with an init container)",
			"delete it and create it from the lab's manifest: "+lab09ApplyInitFail)
	}
	if pod.Status.Phase != corev1.PodFailed {
		return missing("pod "+ref+" is "+string(pod.Status.Phase)+", not Failed", "wait a few seconds and run the check again")
	}
	cs := statusOf(pod.Status.InitContainerStatuses, pod.Spec.InitContainers[0].Name)
	if cs == nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 1 || cs.RestartCount != 0 {
		return missing("pod "+ref+" is Failed, but not by one exit 1 of its init container", "delete it and create it again: "+lab09ApplyInitFail)
	}
	if app := firstContainer(pod); app != nil && app.ContainerID != "" {
		return missing("the app container of "+ref+" was created, though its init container failed", "see computeInitContainerActions (pkg/kuberuntime/init_actions.go)")
	}
	return passed("%s: Failed, init container %s exited 1 (%s) and was not restarted; app never started", ref, cs.Name, cs.State.Terminated.Reason)
}

// sidecarStoppedAfterApp: restartPolicy Never; the app exited 0, the sidecar (a restartable init
// container) started before it and was stopped after it; the pod Succeeded. Pure.
func sidecarStoppedAfterApp(ref string, pod *corev1.Pod, nodeName string) result {
	if r := onNode(ref, pod, nodeName, lab09ApplySidecar); r != nil {
		return *r
	}
	var sidecar *corev1.Container
	for i := range pod.Spec.InitContainers {
		if rp := pod.Spec.InitContainers[i].RestartPolicy; rp != nil && *rp == corev1.ContainerRestartPolicyAlways {
			sidecar = &pod.Spec.InitContainers[i]
		}
	}
	if sidecar == nil || len(pod.Spec.Containers) == 0 {
		return missing("pod "+ref+" has no sidecar (an init container with restartPolicy: Always)",
			"delete it and create it from the lab's manifest: "+lab09ApplySidecar)
	}
	if pod.Status.Phase != corev1.PodSucceeded {
		return missing(fmt.Sprintf("pod %s is %s, not Succeeded", ref, pod.Status.Phase),
			"its app works for 10 s after the sidecar started: wait and run the check again; `kubectl describe pod "+pod.Name+"` says more")
	}
	app := firstContainer(pod)
	if app == nil || app.State.Terminated == nil || app.State.Terminated.ExitCode != 0 {
		return missing("the app of "+ref+" did not exit 0", "create the pod from the lab's manifest: "+lab09ApplySidecar)
	}
	sc := statusOf(pod.Status.InitContainerStatuses, sidecar.Name)
	if sc == nil || sc.State.Terminated == nil {
		return missing("the sidecar "+sidecar.Name+" of "+ref+" is not terminated", "the kubelet stops it once the app is done: wait a second")
	}
	a, s := app.State.Terminated, sc.State.Terminated
	if s.StartedAt.After(a.StartedAt.Time) {
		return missing(fmt.Sprintf("the sidecar started at %s, after the app (%s)", s.StartedAt.UTC().Format("15:04:05"), a.StartedAt.UTC().Format("15:04:05")),
			"a sidecar starts (and its startup probe succeeds) before the app: see computeInitContainerActions")
	}
	if s.FinishedAt.Before(&a.FinishedAt) {
		return missing(fmt.Sprintf("the sidecar stopped at %s, before the app ended (%s)", s.FinishedAt.UTC().Format("15:04:05"), a.FinishedAt.UTC().Format("15:04:05")),
			"a sidecar stops after the regular containers: see pkg/kuberuntime/termination_order.go")
	}
	return passed("%s: Succeeded; sidecar %s ran %s–%s (exit code %d), app %s ran %s–%s (exit code 0)", ref,
		sc.Name, s.StartedAt.UTC().Format("15:04:05"), s.FinishedAt.UTC().Format("15:04:05"), s.ExitCode,
		app.Name, a.StartedAt.UTC().Format("15:04:05"), a.FinishedAt.UTC().Format("15:04:05"))
}

// statusOf is the status of the named container in statuses, or nil.
func statusOf(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
