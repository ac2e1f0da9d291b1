package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// relistMetric counts the PLEG's relists (one observation each).
const relistMetric = "kubelet_pleg_relist_duration_seconds_count"

// idleWindow is how long a test watches an idle node's relists: ten relists of the generic
// PLEG's 1 s period, none of the evented PLEG's 5 min safety net.
const idleWindow = 10 * time.Second

// startEventedNode starts a node with a debug address for its journal, and extra flags.
func startEventedNode(t *testing.T, name string, extra ...string) (*node, journal.Client) {
	t.Helper()
	debugAddr := "127.0.0.1:" + strconv.Itoa(framework.FreePort(t))
	n := startNode(t, name, append([]string{"--debug-address", debugAddr, "-v", "2"}, extra...)...)
	return n, journal.Client{BaseURL: "http://" + debugAddr}
}

// plegEvents are the journal's PLEG events so far.
func plegEvents(t *testing.T, j journal.Client) []journal.Event {
	t.Helper()
	page, err := j.Read(context.Background(), 0, journal.Filter{Source: journal.SourcePLEG}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return page.Events
}

// waitJournal waits until the journal has a PLEG event of kind whose fields include fields.
func waitJournal(t *testing.T, j journal.Client, timeout time.Duration, kind string, fields map[string]string) journal.Event {
	t.Helper()
	var found journal.Event
	framework.Eventually(t, timeout, fmt.Sprintf("pleg %s %v in the journal", kind, fields), func() (bool, string) {
		events := plegEvents(t, j)
		for _, e := range events {
			match := e.Kind == kind
			for k, v := range fields {
				match = match && e.Fields[k] == v
			}
			if match {
				found = e
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d pleg events", len(events))
	})
	return found
}

// countKind counts the journal's PLEG events of kind.
func countKind(t *testing.T, j journal.Client, kind string) int {
	t.Helper()
	n := 0
	for _, e := range plegEvents(t, j) {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// idleRelists is how many relists the node makes in idleWindow while nothing happens.
func (n *node) idleRelists(t *testing.T) int {
	t.Helper()
	before := n.metrics(t)[relistMetric]
	time.Sleep(idleWindow) // the window itself: what is measured is what happens meanwhile
	relists := int(n.metrics(t)[relistMetric] - before)
	t.Logf("%d relists in %s", relists, idleWindow)
	return relists
}

// runningVictim creates a pod that sleeps and returns its running container's runtime ID.
func runningVictim(t *testing.T, n *node) (ns, id string) {
	t.Helper()
	ns = namespace(t)
	createPod(t, ns, boundPod("victim", n.name))
	pod := waitPodsRunning(t, ns, 1, time.Minute)[0]
	containerID := pod.Status.ContainerStatuses[0].ContainerID
	return ns, containerID[strings.Index(containerID, "://")+3:]
}

// killedSeen reports whether the API shows the container killed with exit code 9 (still dead, or
// already restarted by the pod worker).
func killedSeen(ns string) (bool, string) {
	pod, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), "victim", metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	if len(pod.Status.ContainerStatuses) == 0 {
		return false, describe(pod)
	}
	cs := pod.Status.ContainerStatuses[0]
	for _, term := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if term != nil && term.ExitCode == 9 {
			return true, ""
		}
	}
	return false, describe(pod)
}

// KEP-3386 with the fake runtime's event stream: with --feature-gates EventedPLEG=true, a
// container killed behind the kubelet's back reaches the API within 2 s though no relist is due
// for 5 minutes (the journal says the PLEG saw it via=event), and an idle node stops relisting
// every second. When the runtime refuses the stream as containerd 1.6 does (events-off), the
// kubelet says so once, relists every second again and still sees a kill (via=relist); when the
// stream is back (events-on), the relists drop again.
func TestEventedPLEG(t *testing.T) {
	n, j := startEventedNode(t, "e2e-faults-evented", "--feature-gates", "EventedPLEG=true")
	admin := fakeruntime.NewAdminClient(n.socket + ".admin")
	ctx := context.Background()
	waitJournal(t, j, 30*time.Second, "stream up", map[string]string{"relistPeriod": "5m0s"})
	ns, id := runningVictim(t, n)

	if got := n.idleRelists(t); got > 1 {
		t.Errorf("%d relists in %s on an idle node with a trusted event stream, want at most 1 (every 5 min)", got, idleWindow)
	}

	relists := n.metrics(t)[relistMetric]
	killed := time.Now()
	if err := admin.KillContainer(ctx, id, 9); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Second, "the kill in the API", func() (bool, string) { return killedSeen(ns) })
	t.Logf("the kill reached the API %s after it happened", time.Since(killed).Round(time.Millisecond))
	died := waitJournal(t, j, 10*time.Second, "ContainerDied", map[string]string{"id": id})
	if died.Fields["via"] != "event" {
		t.Errorf("ContainerDied of %s came via=%s, want via=event", id, died.Fields["via"])
	}
	if d := n.metrics(t)[relistMetric] - relists; d > 1 {
		t.Errorf("%v relists while the pod worker restarted the container, want none: RelistSoon is off while the stream works", d)
	}

	// containerd 1.6: GetContainerEvents is Unimplemented.
	if err := admin.Inject(ctx, "events-off", fakeruntime.FaultArgs{}); err != nil {
		t.Fatal(err)
	}
	down := waitJournal(t, j, 10*time.Second, "stream down", nil)
	if !strings.Contains(down.Fields["error"], "Unimplemented") || down.Fields["relistPeriod"] != "1s" {
		t.Errorf("stream down %v: want Unimplemented and a 1s relist period", down.Fields)
	}
	if got := n.idleRelists(t); got < int(idleWindow/time.Second)/3 {
		t.Errorf("%d relists in %s without the event stream, want about one a second", got, idleWindow)
	}
	var restarted string
	framework.Eventually(t, 30*time.Second, "the killed container running again", func() (bool, string) {
		pod, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "victim", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		cs := pod.Status.ContainerStatuses[0]
		restarted = cs.ContainerID[strings.Index(cs.ContainerID, "://")+3:]
		return cs.RestartCount == 1 && cs.State.Running != nil && restarted != id, describe(pod)
	})
	if err := admin.KillContainer(ctx, restarted, 9); err != nil {
		t.Fatal(err)
	}
	died = waitJournal(t, j, 30*time.Second, "ContainerDied", map[string]string{"id": restarted})
	if died.Fields["via"] != "relist" {
		t.Errorf("ContainerDied of %s without the stream came via=%s, want via=relist", restarted, died.Fields["via"])
	}
	if c := strings.Count(n.kubelet.Log(), "falling back to relisting"); c != 1 {
		t.Errorf("the log says %d times that PLEG falls back to relisting, want once (retries are at -v=4)", c)
	}

	// The stream is back: trusted again, after the retry back-off (at most 2 min).
	if err := admin.Inject(ctx, "events-on", fakeruntime.FaultArgs{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 3*time.Minute, "the stream trusted again", func() (bool, string) {
		c := countKind(t, j, "stream up")
		return c == 2, fmt.Sprintf("%d stream up", c)
	})
	if got := n.idleRelists(t); got > 1 {
		t.Errorf("%d relists in %s with the stream back, want at most 1", got, idleWindow)
	}
	n.mustBeRunning(t)
}

// Without the gate nothing changes: PLEG relists every second, sees a kill by relisting, and
// never opens the event stream.
func TestGenericPLEGWithoutTheGate(t *testing.T) {
	n, j := startEventedNode(t, "e2e-faults-generic")
	ns, id := runningVictim(t, n)
	if got := n.idleRelists(t); got < int(idleWindow/time.Second)/3 {
		t.Errorf("%d relists in %s, want about one a second", got, idleWindow)
	}
	if err := fakeruntime.NewAdminClient(n.socket+".admin").KillContainer(context.Background(), id, 9); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, "the kill in the API", func() (bool, string) { return killedSeen(ns) })
	died := waitJournal(t, j, 10*time.Second, "ContainerDied", map[string]string{"id": id})
	if died.Fields["via"] != "relist" {
		t.Errorf("ContainerDied came via=%s, want via=relist", died.Fields["via"])
	}
	if c := countKind(t, j, "stream up") + countKind(t, j, "stream down"); c != 0 {
		t.Errorf("%d stream events without the gate, want none", c)
	}
}
