package kubelet

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// lifePod is the pod of TestPodLife: one container that is healthy while /tmp/healthy exists,
// probed for liveness and readiness every second, and that exits 3 after 20 s; 30 s to stop.
func lifePod() *corev1.Pod {
	pod := testPod("life")
	c := &pod.Spec.Containers[0]
	c.Command = []string{"sh", "-c", "touch /tmp/healthy; sleep 20; exit 3"}
	healthy := func() *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}},
			PeriodSeconds: 1, FailureThreshold: 1}
	}
	c.LivenessProbe, c.ReadinessProbe = healthy(), healthy()
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	return pod
}

// TestPodLife drives one pod through its whole life, channel by channel of the syncLoop, as
// upstream's Kubelet drives it (lab 0 steps through it under Delve):
//
//	add      configCh ADD → HandlePodAdditions: admitted, a worker; SyncPod starts the sandbox and container
//	start    plegCh ContainerStarted → HandlePodSyncs → SyncPod: the API says Running
//	ready    the readiness probe succeeds → readinessManager → the API's Ready condition is True
//	liveness /tmp/healthy removed → the liveness probe fails → SyncPod kills the container and starts it again (restartCount 1)
//	crash    the program exits 3 → PLEG ContainerDied → SyncPod starts it again at once (restartCount 2)
//	crash    it exits 3 again → CrashLoopBackOff: no restart until the back-off (10 s) has passed
//	restart  the clock passes the back-off → syncCh: the worker's retry is due → SyncPod restarts it (restartCount 3)
//	delete   the API server sets deletionTimestamp (grace 30 s) → configCh DELETE → SyncTerminatingPod
//	         stops it (SIGTERM: exit 143), SyncTerminatedPod: Failed; the status manager deletes the object → configCh REMOVE
//	cleanup  housekeepingCh → HandlePodCleanups: the worker, the status and the runtime's sandbox go
func TestPodLife(t *testing.T) {
	start := time.Now()
	pod := lifePod()
	tk := newTestKubelet(t, pod)
	k := tk.k

	t.Log("add: configCh ADD → HandlePodAdditions")
	tk.iterate(t, configCh)
	if _, ok := k.podManager.GetPodByUID(pod.UID); !ok {
		t.Fatal("after configCh ADD the pod manager does not have the pod")
	}
	if st, ok := k.podWorkers.State(pod.UID); !ok || st != podworkers.Syncing {
		t.Fatalf("after configCh ADD the pod's worker is %v (known %v), want syncing", st, ok)
	}

	t.Log("start: SyncPod starts the container; PLEG sees it; the API says Running")
	tk.settle(t, "the API to say Running", func() bool {
		p := tk.apiPod(t, pod)
		return p.Status.Phase == corev1.PodRunning && tk.apiContainer(t, pod).State.Running != nil
	})
	if _, running := tk.runtimePod(t, pod.UID); !running {
		t.Fatal("the API says Running, but nothing of the pod runs in the runtime")
	}

	t.Log("ready: the readiness probe succeeds → the Ready condition")
	tk.live(t, "the API's Ready condition to be True", func() bool { return podIsReady(tk.apiPod(t, pod)) })
	first := tk.apiContainer(t, pod).ContainerID

	t.Log("liveness: rm /tmp/healthy → the liveness probe fails → killed and started again")
	tk.exec(t, pod, "rm", "/tmp/healthy")
	tk.live(t, "the container to be restarted after its liveness probe failed", func() bool {
		cs := tk.apiContainer(t, pod)
		return cs.RestartCount == 1 && cs.State.Running != nil && cs.ContainerID != first
	})
	if !tk.hasEvent("Unhealthy") || !tk.hasEvent("Killing") {
		t.Errorf("no Unhealthy and Killing Events for the liveness failure; Events: %q", tk.events())
	}
	if last := tk.apiContainer(t, pod).LastTerminationState.Terminated; last == nil || last.ExitCode != 143 {
		t.Errorf("the killed container's last state is %+v, want terminated with exit code 143 (SIGTERM)", last)
	}

	t.Log("crash: the program exits 3 after 20 s → started again at once: a first crash has no back-off")
	tk.advance(t, 20*time.Second) // its `sleep 20` ends
	tk.settle(t, "the restart after the first crash", func() bool {
		cs := tk.apiContainer(t, pod)
		return cs.RestartCount == 2 && cs.State.Running != nil
	})
	if last := tk.apiContainer(t, pod).LastTerminationState.Terminated; last == nil || last.ExitCode != 3 {
		t.Errorf("after the crash the last state is %+v, want terminated with exit code 3", last)
	}

	t.Log("crash again: 20 s later it exits 3 again → CrashLoopBackOff")
	tk.advance(t, 20*time.Second)
	tk.settle(t, "CrashLoopBackOff", func() bool {
		cs := tk.apiContainer(t, pod)
		return cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff"
	})
	cs := tk.apiContainer(t, pod)
	if last := cs.LastTerminationState.Terminated; cs.RestartCount != 2 || last == nil || last.ExitCode != 3 {
		t.Errorf("in CrashLoopBackOff: restartCount %d and last state %+v, want 2 and exit code 3", cs.RestartCount, last)
	}
	if !strings.Contains(cs.State.Waiting.Message, "back-off 10s") || !tk.hasEvent("BackOff") {
		t.Errorf("waiting %q (Events %q), want a back-off of 10s and a BackOff Event", cs.State.Waiting.Message, tk.events())
	}
	if podIsReady(tk.apiPod(t, pod)) {
		t.Error("a pod whose only container waits in CrashLoopBackOff is Ready")
	}

	t.Log("restart: the clock passes the back-off → syncCh → SyncPod starts it again")
	tk.advance(t, 10*time.Second)
	tk.settle(t, "the restart after the back-off", func() bool {
		cs := tk.apiContainer(t, pod)
		return cs.RestartCount == 3 && cs.State.Running != nil
	})

	t.Log("delete: deletionTimestamp, grace 30 s → configCh DELETE → SyncTerminatingPod, SyncTerminatedPod")
	deleting := tk.apiPod(t, pod)
	deleting.DeletionTimestamp = &metav1.Time{Time: tk.clock.Now()}
	deleting.DeletionGracePeriodSeconds = ptr.To[int64](30)
	if _, err := tk.client.CoreV1().Pods(pod.Namespace).Update(tk.ctx, deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tk.settle(t, "the worker to finish the pod", func() bool {
		st, _ := k.podWorkers.State(pod.UID)
		return st == podworkers.Finished
	})
	if _, running := tk.runtimePod(t, pod.UID); running {
		t.Error("the worker finished the pod, but the runtime still runs part of it")
	}
	tk.settle(t, "the status manager to delete the pod from the API, and configCh REMOVE", func() bool {
		_, known := k.podManager.GetPodByUID(pod.UID)
		return tk.apiPod(t, pod) == nil && !known
	})
	final := tk.deletedPod(pod)
	if final == nil || final.Status.Phase != corev1.PodFailed {
		t.Fatalf("the pod's last status in the API is %+v, want phase Failed (its container ended 143)", final)
	}
	if end := final.Status.ContainerStatuses[0].State.Terminated; end == nil || end.ExitCode != 143 {
		t.Errorf("the stopped container is %+v, want terminated with 143: stopped with a grace period (SIGTERM), not killed (137)", end)
	}

	t.Log("cleanup: housekeepingCh → HandlePodCleanups")
	tk.housekeep(t)
	if _, known := k.podWorkers.State(pod.UID); known || k.podWorkers.Count() != 0 {
		t.Errorf("after housekeeping: %d workers (the pod's known: %v), want none", k.podWorkers.Count(), known)
	}
	if _, ok := k.statusManager.GetPodStatus(pod.UID); ok {
		t.Error("after housekeeping the status manager still has the pod's status")
	}
	if exists, _ := tk.runtimePod(t, pod.UID); exists {
		t.Error("after housekeeping the runtime still has the pod's sandbox or containers")
	}
	t.Logf("the pod's whole life took %v (%v on the node's clock)", time.Since(start).Round(time.Millisecond), tk.clock.Since(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)).Round(time.Second))
}

// podIsReady reports whether the pod's Ready condition is True.
func podIsReady(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
