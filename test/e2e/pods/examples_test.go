package pods

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// docsExample is one example of the Kubernetes docs' task pages (kubernetes.io/docs/…), as a
// manifest in the shape of the docs' own (content/en/examples in kubernetes/website), pinned to
// the test's node (NODE), and what its page says to observe.
type docsExample struct {
	name   string   // the example, as its page names its object
	page   string   // the docs page, below kubernetes.io/docs/
	yaml   string   // its manifests
	expect []expect // what the page says to observe, in order
	// cannot says why the example cannot behave as its page says on the fake runtime (it is
	// listed in docs/fake-runtime.md); instead then pins what it does here, and is what the test
	// checks. It does not count as passing. To take an example off the list once it can run,
	// delete both.
	cannot  string
	instead []expect
}

// expect is one observation of a page: "memory-demo-2 is OOMKilled", polled until it holds.
type expect struct {
	what string
	ok   func(e *exampleEnv) (bool, string)
}

// exampleEnv is what an expectation looks at: the namespace and node of the examples.
type exampleEnv struct {
	t    *testing.T
	ns   string
	node string
}

// kubectlSlots bounds the kubectl processes the examples' observations run at once (the
// machine has few cores).
var kubectlSlots = make(chan struct{}, 4)

// pollKubectl is kubectl for a poll: within kubectlSlots.
func pollKubectl(t *testing.T, args ...string) (string, int) {
	kubectlSlots <- struct{}{}
	defer func() { <-kubectlSlots }()
	return kubectl(t, "", args...)
}

// examplesTimeout bounds the wait for all of an example's observations (the hello CronJob's
// first run is up to a minute away, liveness-exec restarts after ~45 s).
const examplesTimeout = 3 * time.Minute

// minPassing is the share of docs examples that must behave as their page says.
const minPassing = 0.95

// TestDocsExamples applies the docs' task-page examples (docs_examples_test.go) all at once to
// one node and checks, in parallel, that each behaves as its page says: its phase, readiness,
// restarts, log lines, `kubectl exec` output, OOMKilled, a Job's completion. An example that
// fails fails the test, unless it is on the "cannot run here" list (with its reason, mirrored in
// docs/fake-runtime.md); and at least 95 % must pass.
func TestDocsExamples(t *testing.T) {
	n := startNode(t, "e2e-pods-examples", "--max-pods", "200") // ~100 run at once; the default is 110
	ns := namespace(t)
	waitForServiceAccount(t, ns)
	// The "Assign Pods to Nodes" page labels a node disktype=ssd first.
	if out, code := kubectl(t, "", "label", "node", n.name, "disktype=ssd"); code != 0 {
		t.Fatalf("kubectl label node: exit %d\n%s", code, out)
	}
	examples := docsExamples()
	checkCannotListDocumented(t, examples)
	var all []string
	for _, ex := range examples {
		all = append(all, ex.yaml)
	}
	pinned := strings.NewReplacer("hostname: NODE}", "hostname: "+n.name+"}", "nodeName: NODE\n", "nodeName: "+n.name+"\n")
	manifests := pinned.Replace(strings.Join(all, "\n---\n"))
	if out, code := kubectl(t, manifests, "-n", ns, "apply", "-f", "-"); code != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s", code, out)
	}
	// All examples are observed at once (t.Parallel would run only GOMAXPROCS of them at a time),
	// then each reports in its own subtest.
	failures := make([]string, len(examples))
	var wg sync.WaitGroup
	for i, ex := range examples {
		expects := ex.expect
		if ex.cannot != "" {
			expects = ex.instead
		}
		wg.Go(func() { failures[i] = observe(&exampleEnv{t: t, ns: ns, node: n.name}, expects) })
	}
	wg.Wait()
	count := 0
	for i, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			switch failure := failures[i]; {
			case failure != "" && ex.cannot != "":
				t.Errorf("%s (cannot run here: %s) no longer does what docs/fake-runtime.md says: %s", ex.name, ex.cannot, failure)
			case failure != "":
				t.Errorf("%s does not behave as %s says: %s", ex.name, ex.page, failure)
			case ex.cannot != "":
				t.Logf("%s cannot run here (%s), and does what docs/fake-runtime.md says", ex.name, ex.cannot)
			default:
				count++
			}
		})
	}
	t.Logf("%d of %d examples behave as their page says (%.1f %%)", count, len(examples), 100*float64(count)/float64(len(examples)))
	if float64(count) < minPassing*float64(len(examples)) {
		t.Errorf("only %d of %d examples pass, want at least %.0f %%", count, len(examples), 100*minPassing)
	}
}

// observe waits for each expectation in turn, all within examplesTimeout, and returns the first
// that does not come true ("" if all do).
func observe(e *exampleEnv, expects []expect) string {
	deadline := time.Now().Add(examplesTimeout)
	for _, x := range expects {
		for {
			ok, detail := x.ok(e)
			if ok {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Sprintf("%s: timed out; last: %s", x.what, detail)
			}
			time.Sleep(2 * time.Second)
		}
	}
	return ""
}

// checkCannotListDocumented fails unless docs/fake-runtime.md names every example that cannot
// run here, with its page.
func checkCannotListDocumented(t *testing.T, examples []docsExample) {
	doc, err := os.ReadFile("../../../docs/fake-runtime.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range examples {
		if ex.cannot != "" && !strings.Contains(string(doc), "`"+ex.name+"`") {
			t.Errorf("docs/fake-runtime.md does not list %s, which cannot run here (%s)", ex.name, ex.cannot)
		}
		if len(ex.expect) == 0 || (ex.cannot != "") != (len(ex.instead) > 0) {
			t.Errorf("%s: every example says what its page expects, and one that cannot run here what it does instead", ex.name)
		}
	}
}

// podNamed finds the pod ref names: a pod's name, "app=x" (a label selector) or "hello-*" (a
// name prefix: a CronJob's pods) — the first such pod, a Succeeded one first (a Job's).
func (e *exampleEnv) podNamed(ref string) (*corev1.Pod, string) {
	ctx := context.Background()
	if !strings.ContainsAny(ref, "=*") {
		pod, err := cluster.Client.CoreV1().Pods(e.ns).Get(ctx, ref, metav1.GetOptions{})
		if err != nil {
			return nil, err.Error()
		}
		return pod, describe(pod)
	}
	opts := metav1.ListOptions{}
	if strings.Contains(ref, "=") {
		opts.LabelSelector = ref
	}
	pods, err := cluster.Client.CoreV1().Pods(e.ns).List(ctx, opts)
	if err == nil && strings.HasSuffix(ref, "*") {
		pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return !strings.HasPrefix(p.Name, strings.TrimSuffix(ref, "*")) })
	}
	if err != nil || len(pods.Items) == 0 {
		return nil, fmt.Sprintf("no pod %s yet (%v)", ref, err)
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int {
		return strings.Compare(string(b.Status.Phase), string(a.Status.Phase)) // Succeeded, Running, Pending…
	})
	return &pods.Items[0], describe(&pods.Items[0])
}

// podIs expects the pod ref to satisfy cond.
func podIs(what, ref string, cond func(*corev1.Pod) bool) expect {
	return expect{ref + " " + what, func(e *exampleEnv) (bool, string) {
		pod, detail := e.podNamed(ref)
		return pod != nil && cond(pod), detail
	}}
}

func phaseIs(ref string, phase corev1.PodPhase) expect {
	return podIs(string(phase), ref, func(p *corev1.Pod) bool { return p.Status.Phase == phase })
}

func readyIs(ref string) expect { return podIs("Ready", ref, isReady) }

func restarted(ref string) expect {
	return podIs("restarted", ref, func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount > 0
	})
}

func qosIs(ref string, class corev1.PodQOSClass) expect {
	return podIs("QoS "+string(class), ref, func(p *corev1.Pod) bool { return p.Status.QOSClass == class })
}

// unschedulable expects PodScheduled False with reason (Unschedulable, SchedulingGated) and a
// message containing msg.
func unschedulable(ref, reason, msg string) expect {
	return podIs("not scheduled: "+reason+" "+msg, ref, func(p *corev1.Pod) bool {
		c := podCondition(p, corev1.PodScheduled)
		return p.Status.Phase == corev1.PodPending && c.Status == corev1.ConditionFalse && c.Reason == reason && strings.Contains(c.Message, msg)
	})
}

// terminatedWith expects a container (in its state or last state) terminated with reason and a
// message containing msg.
func terminatedWith(ref, reason, msg string) expect {
	return podIs("terminated "+reason+" "+msg, ref, func(p *corev1.Pod) bool {
		for _, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			for _, term := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
				if term != nil && term.Reason == reason && strings.Contains(term.Message, msg) {
					return true
				}
			}
		}
		return false
	})
}

// logHas expects the container's log (container "" : the only one) to match the regular
// expression want.
func logHas(ref, container, want string) expect {
	re := regexp.MustCompile(want)
	return expect{fmt.Sprintf("%s's log matches %q", ref, want), func(e *exampleEnv) (bool, string) {
		pod, detail := e.podNamed(ref)
		if pod == nil {
			return false, detail
		}
		log, err := podLog(e.ns, pod.Name, container)
		if err != nil {
			return false, fmt.Sprintf("%v; %s", err, detail)
		}
		return re.MatchString(log), fmt.Sprintf("log %.300q", log)
	}}
}

// execHas expects `kubectl exec ref -c container -- cmd…` to succeed with output matching want.
func execHas(ref, container, want string, cmd ...string) expect {
	re := regexp.MustCompile(want)
	return expect{fmt.Sprintf("kubectl exec %s -- %s matches %q", ref, strings.Join(cmd, " "), want), func(e *exampleEnv) (bool, string) {
		pod, detail := e.podNamed(ref)
		if pod == nil || pod.Status.Phase != corev1.PodRunning {
			return false, detail
		}
		args := []string{"-n", e.ns, "exec", pod.Name}
		if container != "" {
			args = append(args, "-c", container)
		}
		out, code := pollKubectl(e.t, append(append(args, "--"), cmd...)...)
		return code == 0 && re.MatchString(out), fmt.Sprintf("exit %d: %.300q", code, out)
	}}
}

// workloadReady expects kubectl's READY column of a Deployment, ReplicaSet, StatefulSet… (or
// a DaemonSet's numberReady) to be want.
func workloadReady(kind, name string, want int) expect {
	field := "{.status.readyReplicas}"
	if kind == "daemonset" {
		field = "{.status.numberReady}"
	}
	return expect{fmt.Sprintf("%s/%s %d ready", kind, name, want), func(e *exampleEnv) (bool, string) {
		out, code := pollKubectl(e.t, "-n", e.ns, "get", kind, name, "-o", "jsonpath="+field)
		return code == 0 && out == fmt.Sprint(want), fmt.Sprintf("exit %d: %q ready", code, out)
	}}
}

// jobCondition expects the Job's condition typ (Complete, Failed) to be True, with reason if
// reason is not "".
func jobCondition(name string, typ, reason string) expect {
	return expect{fmt.Sprintf("job/%s %s %s", name, typ, reason), func(e *exampleEnv) (bool, string) {
		j, err := cluster.Client.BatchV1().Jobs(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range j.Status.Conditions {
			if string(c.Type) == typ && c.Status == corev1.ConditionTrue && (reason == "" || c.Reason == reason) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("succeeded %d, failed %d, active %d, conditions %v", j.Status.Succeeded, j.Status.Failed, j.Status.Active, j.Status.Conditions)
	}}
}

func podLog(ns, pod, container string) (string, error) {
	data, err := cluster.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(context.Background())
	return string(data), err
}

// servesHTTP expects GET http://POD_IP:port/ from the host to answer 200 with a body matching
// want.
func servesHTTP(ref string, port int, want string) expect {
	re := regexp.MustCompile(want)
	return expect{fmt.Sprintf("GET %s's pod IP :%d/ matches %q", ref, port, want), func(e *exampleEnv) (bool, string) {
		pod, detail := e.podNamed(ref)
		if pod == nil || pod.Status.PodIP == "" {
			return false, detail
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(fmt.Sprintf("http://%s/", net.JoinHostPort(pod.Status.PodIP, fmt.Sprint(port))))
		if err != nil {
			return false, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && re.Match(body), fmt.Sprintf("%d %.200q", resp.StatusCode, body)
	}}
}

// answersPing expects a redis PING on the pod's IP to answer +PONG.
func answersPing(ref string) expect {
	return expect{ref + " answers PING", func(e *exampleEnv) (bool, string) {
		pod, detail := e.podNamed(ref)
		if pod == nil || pod.Status.PodIP == "" {
			return false, detail
		}
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(pod.Status.PodIP, "6379"), 5*time.Second)
		if err != nil {
			return false, err.Error()
		}
		defer func() { _ = conn.Close() }()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
			return false, err.Error()
		}
		reply, err := bufio.NewReader(conn).ReadString('\n')
		return reply == "+PONG\r\n", fmt.Sprintf("%q (%v)", reply, err)
	}}
}

// busyboxDate is busybox date's default format.
const busyboxDate = `[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d UTC \d{4}`

// logLacks expects the container's log to have no line containing text (once it has one).
func logLacks(ref, text string) expect {
	return expect{fmt.Sprintf("%s's log lacks %q", ref, text), func(e *exampleEnv) (bool, string) {
		pod, detail := e.podNamed(ref)
		if pod == nil {
			return false, detail
		}
		log, err := podLog(e.ns, pod.Name, "")
		return err == nil && log != "" && !strings.Contains(log, text), fmt.Sprintf("log %.300q (%v)", log, err)
	}}
}
