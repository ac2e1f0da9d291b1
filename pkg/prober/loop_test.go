package prober

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Tests of the workers' goroutines. The fake Exec hands every probe to the test (calls), so the
// test knows when a worker probes and answers it; the fake clock moves only when the test steps
// it. Nothing sleeps: waits are on channels, or polls of a condition with a generous limit that
// only a broken worker reaches.

const giveUp = 30 * time.Second

// startManager runs e's Manager until the test ends, and returns a function that stops it and
// waits for Run to return.
func startManager(t *testing.T, e *testEnv) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.m.Run(ctx)
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(giveUp):
			t.Fatal("Run did not return after its context ended")
		}
	}
	t.Cleanup(stop)
	return stop
}

// nextCall waits for the next probe and answers it.
func nextCall(t *testing.T, e *testEnv, r execReply) execCall {
	t.Helper()
	select {
	case c := <-e.exec.calls:
		c.reply <- r
		return c
	case <-time.After(giveUp):
		t.Fatal("no probe came")
		return execCall{}
	}
}

// nextUpdate waits for the next change on rm.
func nextUpdate(t *testing.T, rm *ResultsManager) Update {
	t.Helper()
	select {
	case u := <-rm.Updates():
		return u
	case <-time.After(giveUp):
		t.Fatal("no update came")
		return Update{}
	}
}

// waitUntil polls cond until it holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, giveUp, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}

// Upstream worker.run: the first probe runs as soon as the worker starts (the kubelet is not
// fresh), then one every periodSeconds on the ticker; each result change is an Update on the
// kind's channel with the API container ID and the pod UID; the exec probe gets the bare runtime
// ID, the command and timeoutSeconds.
func TestWorkerProbesEveryPeriod(t *testing.T) {
	e := newTestEnv(t)
	e.exec.calls = make(chan execCall)
	spec := execProbeSpec()
	spec.PeriodSeconds, spec.TimeoutSeconds = 7, 2
	pod := podWithProbe(Readiness, spec)
	e.status.set(testUID, runningStatus(e.clock.Now(), true))
	startManager(t, e)
	e.m.AddPod(pod)
	t0 := e.clock.Now()

	c := nextCall(t, e, execReply{})
	if c.containerID != "abc" || len(c.cmd) != 1 || c.cmd[0] != "check" || c.timeout != 2*time.Second || !c.at.Equal(t0) {
		t.Fatalf("first probe = %+v, want ID abc, [check], 2s at %v", c, t0)
	}
	if got := e.tickers.made(); fmt.Sprint(got) != "[7s]" {
		t.Fatalf("tickers made: %v, want one of periodSeconds 7s", got)
	}
	want := []Update{{ContainerID: testContainerID, Result: Failure, PodUID: testUID}, {ContainerID: testContainerID, Result: Success, PodUID: testUID}}
	for _, w := range want {
		if u := nextUpdate(t, e.m.cfg.Readiness); u != w {
			t.Fatalf("update = %+v, want %+v", u, w)
		}
	}

	for i := 1; i <= 3; i++ {
		e.clock.Step(6 * time.Second) // not yet
		e.clock.Step(time.Second)     // a period
		if c := nextCall(t, e, execReply{exitCode: 1}); !c.at.Equal(t0.Add(time.Duration(i) * 7 * time.Second)) {
			t.Fatalf("probe %d at %v, want %v", i+1, c.at, t0.Add(time.Duration(i)*7*time.Second))
		}
	}
	// Three failures in a row (failureThreshold 3): not ready.
	if u := nextUpdate(t, e.m.cfg.Readiness); u.Result != Failure {
		t.Fatalf("update = %+v, want Failure", u)
	}
}

// Upstream worker.run: right after the kubelet started, a worker first waits a random part of
// one period, so that all probes do not fire at once.
func TestWorkerWaitsRandomPartOfPeriodAfterKubeletStart(t *testing.T) {
	e := newFreshTestEnv(t)
	e.exec.calls = make(chan execCall)
	spec := execProbeSpec()
	spec.PeriodSeconds = 10
	e.status.set(testUID, runningStatus(e.clock.Now(), true))
	startManager(t, e)
	e.m.AddPod(podWithProbe(Liveness, spec))

	// The worker's only waiter is its delay timer: it has not probed, and cannot before Step.
	waitUntil(t, "the worker waits on its delay", func() bool { return e.clock.Waiters() == 1 })
	select {
	case c := <-e.exec.calls:
		t.Fatalf("probed at %v before its delay", c.at)
	default:
	}
	e.clock.Step(10 * time.Second) // the delay is shorter than a period
	nextCall(t, e, execReply{})
}

// Upstream UpdatePodStatus → manualTriggerCh: a container that is not ready yet gets a readiness
// probe at once, without waiting for the ticker.
func TestNotReadyTriggersProbe(t *testing.T) {
	e := newTestEnv(t)
	e.exec.calls = make(chan execCall)
	pod := podWithProbe(Readiness, execProbeSpec())
	status := runningStatus(e.clock.Now(), true)
	e.status.set(testUID, status)
	startManager(t, e)
	e.m.AddPod(pod)
	nextCall(t, e, execReply{exitCode: 1}) // the first probe: a failure, not yet not-ready (threshold 3)
	nextUpdate(t, e.m.cfg.Readiness)       // the initial Failure

	e.clock.Step(4 * time.Second)
	e.m.UpdatePodStatus(pod, &status)
	if status.ContainerStatuses[0].Ready {
		t.Fatal("Ready before a successful probe")
	}
	if c := nextCall(t, e, execReply{}); !c.at.Equal(e.clock.Now()) {
		t.Fatalf("triggered probe at %v, want now (%v), without a tick", c.at, e.clock.Now())
	}
	if u := nextUpdate(t, e.m.cfg.Readiness); u.Result != Success {
		t.Fatalf("update = %+v, want Success", u)
	}
	// The period starts again from the triggered probe: a new ticker, then the next probe a full
	// period after the trigger, not after the first probe.
	if got := e.tickers.made(); fmt.Sprint(got) != "[10s 10s]" {
		t.Fatalf("tickers made: %v, want the first and one after the trigger", got)
	}
	triggeredAt := e.clock.Now()
	e.clock.Step(6 * time.Second) // the old ticker's time: nothing
	e.clock.Step(4 * time.Second)
	if c := nextCall(t, e, execReply{}); !c.at.Equal(triggeredAt.Add(10 * time.Second)) {
		t.Fatalf("next probe at %v, want %v", c.at, triggeredAt.Add(10*time.Second))
	}
}

// Our shutdown rule: every worker goroutine ends when Run's context ends, and Run returns only
// after they have; each worker forgets its result and itself. Workers added before Run start
// with it.
func TestRunEndsAllWorkers(t *testing.T) {
	e := newTestEnv(t)
	pod := podWithProbe(Readiness, execProbeSpec())
	pod.Spec.Containers[0].LivenessProbe = execProbeSpec()
	e.status.set(testUID, runningStatus(e.clock.Now(), true))
	e.m.AddPod(pod) // before Run
	stop := startManager(t, e)
	waitUntil(t, "both workers probed", func() bool {
		_, ready := e.m.cfg.Readiness.Get(testContainerID)
		_, live := e.m.cfg.Liveness.Get(testContainerID)
		return ready && live && e.exec.count() == 2
	})

	stop()

	if n := e.m.workerCount(); n != 0 {
		t.Errorf("%d workers left after Run returned", n)
	}
	if got := get(e.m.cfg.Readiness, testContainerID) + get(e.m.cfg.Liveness, testContainerID); got != "nonenone" {
		t.Errorf("results left: %s", got)
	}
	e.m.AddPod(pod) // after Run: nothing starts
	if n := e.m.workerCount(); n != 0 {
		t.Errorf("AddPod after Run made %d workers", n)
	}
}

// Upstream RemovePod, CleanupPods, StopLivenessAndStartup: they stop the workers of the pod
// (StopLivenessAndStartup: not readiness), which forget their results.
func TestStopWorkers(t *testing.T) {
	tests := []struct {
		name string
		stop func(m *Manager, e *testEnv)
		left int
	}{
		{"RemovePod", func(m *Manager, e *testEnv) { m.RemovePod(podWithProbe(Liveness, nil)) }, 0},
		{"CleanupPods without the pod", func(m *Manager, e *testEnv) { m.CleanupPods(map[types.UID]bool{"other": true}) }, 0},
		{"CleanupPods with the pod", func(m *Manager, e *testEnv) { m.CleanupPods(map[types.UID]bool{testUID: true}) }, 3},
		{"StopLivenessAndStartup", func(m *Manager, e *testEnv) { m.StopLivenessAndStartup(podWithProbe(Liveness, nil)) }, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			pod := podWithProbe(Readiness, execProbeSpec())
			pod.Spec.Containers[0].LivenessProbe = execProbeSpec()
			pod.Spec.Containers[0].StartupProbe = execProbeSpec()
			e.status.set(testUID, runningStatus(e.clock.Now(), true))
			startManager(t, e)
			e.m.AddPod(pod)
			waitUntil(t, "the readiness probe ran", func() bool { return get(e.m.cfg.Readiness, testContainerID) == "Success" })

			tc.stop(e.m, e)

			if tc.left == 3 {
				if n := e.m.workerCount(); n != 3 {
					t.Fatalf("%d workers, want all 3 kept", n)
				}
				return
			}
			waitUntil(t, "the workers ended", func() bool { return e.m.workerCount() == tc.left })
			if _, ok := e.m.cfg.Liveness.Get(testContainerID); ok {
				t.Error("liveness result kept after its worker ended")
			}
		})
	}
}

// Upstream doProbe: a worker ends by itself when the pod reaches a terminal phase.
func TestWorkerEndsForTerminalPod(t *testing.T) {
	e := newTestEnv(t)
	s := runningStatus(e.clock.Now(), true)
	e.status.set(testUID, s)
	startManager(t, e)
	e.m.AddPod(podWithProbe(Readiness, execProbeSpec()))
	waitUntil(t, "the first probe", func() bool { return e.exec.count() == 1 })

	s.Phase = corev1.PodSucceeded
	e.status.set(testUID, s)
	e.clock.Step(10 * time.Second)
	waitUntil(t, "the worker ended", func() bool { return e.m.workerCount() == 0 })
}

// workerCount is the number of probe workers m runs.
func (m *Manager) workerCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.workers)
}
