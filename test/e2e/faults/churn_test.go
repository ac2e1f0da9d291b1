package faults

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

const (
	// churnCycles pod lifecycles (create → Running → delete → gone) run as churnWorkers
	// parallel workers, in five rounds so memory is sampled after the first fifth and at the end.
	churnCycles  = 1000
	churnWorkers = 50
	churnRounds  = 5
	// goroutineSlack is how many goroutines above the baseline still count as "back to it": HTTP/2
	// and watch connections come and go with the API server's and the runtime's pace.
	goroutineSlack = 15
)

// churner runs pod lifecycles against one node and watches their pods through an informer, so
// that fifty workers waiting for their pods cost the API server one watch, not fifty pollers.
type churner struct {
	client kubernetes.Interface // a client of its own, not rate-limited to client-go's default 5 QPS
	ns     string
	node   string
	pods   corelisters.PodNamespaceLister
}

func newChurner(t *testing.T, ns, node string) *churner {
	t.Helper()
	cfg := rest.CopyConfig(cluster.RestConfig)
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	lister := factory.Core().V1().Pods().Lister()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("the informer of %v did not sync", typ)
		}
	}
	return &churner{client: client, ns: ns, node: node, pods: lister.Pods(ns)}
}

// waitFor polls the informer's cache (not the API server) until cond holds for the pod.
func (c *churner) waitFor(name, what string, timeout time.Duration, cond func(pod *corev1.Pod, err error) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		pod, err := c.pods.Get(name)
		if cond(pod, err) {
			return nil
		}
		if time.Now().After(deadline) {
			if pod != nil {
				return fmt.Errorf("pod %s not %s after %s: %s", name, what, timeout, describe(pod))
			}
			return fmt.Errorf("pod %s not %s after %s: %v", name, what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cycle is one pod lifecycle: create, Running, delete (grace period 1 s), gone from the API.
func (c *churner) cycle(ctx context.Context, name string) error {
	if _, err := c.client.CoreV1().Pods(c.ns).Create(ctx, boundPod(name, c.node), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s: %w", name, err)
	}
	// Generous bounds: a stuck pod fails the test, a slow machine does not.
	if err := c.waitFor(name, "Running", 2*time.Minute, func(pod *corev1.Pod, _ error) bool {
		return pod != nil && pod.Status.Phase == corev1.PodRunning
	}); err != nil {
		return err
	}
	if err := c.client.CoreV1().Pods(c.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete pod %s: %w", name, err)
	}
	return c.waitFor(name, "gone", 2*time.Minute, func(_ *corev1.Pod, err error) bool {
		return apierrors.IsNotFound(err)
	})
}

// round runs cycles lifecycles on churnWorkers workers and returns the first error.
func (c *churner) round(ctx context.Context, round, cycles int) error {
	var wg sync.WaitGroup
	errs := make(chan error, churnWorkers)
	for w := range churnWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < cycles; i += churnWorkers {
				if err := c.cycle(ctx, fmt.Sprintf("churn-%d-%04d", round, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// settled waits until nothing of the churned pods is left — in the API, in the kubelet's pod
// workers and status manager (as of its last housekeeping, every 2 s), and in the runtime — and
// returns the kubelet's metrics then.
func (c *churner) settled(t *testing.T, n *node) map[string]float64 {
	t.Helper()
	var m map[string]float64
	framework.Eventually(t, 2*time.Minute, "nothing left of the deleted pods", func() (bool, string) {
		left, err := c.pods.List(labels.Everything())
		if err != nil {
			return false, err.Error()
		}
		m = n.metrics(t)
		for _, name := range []string{"kubelet_pod_workers", "kubelet_status_manager_entries", "go_goroutines"} {
			if _, ok := m[name]; !ok {
				t.Fatalf("the kubelet's /metrics has no %s", name)
			}
		}
		st := n.fakeState(t)
		return len(left) == 0 && m["kubelet_pod_workers"] == 0 && m["kubelet_status_manager_entries"] == 0 &&
				len(st.Sandboxes) == 0 && len(st.Containers) == 0,
			fmt.Sprintf("%d pods in the API, %v pod workers, %v statuses, %d sandboxes and %d containers in the runtime",
				len(left), m["kubelet_pod_workers"], m["kubelet_status_manager_entries"], len(st.Sandboxes), len(st.Containers))
	})
	return m
}

// 1000 pods are created, run and deleted, fifty at a time. Nothing of them stays behind in the
// kubelet (pod workers, status entries, goroutines back to the baseline) or in the runtime, and
// its memory does not grow with the number of pods it has seen: upstream's pod workers and
// status manager forget a pod once it is gone (SyncKnownPods, RemoveOrphanedStatuses), and so
// must ours.
func TestPodChurn(t *testing.T) {
	n := startNode(t, "e2e-faults-churn", "-v", "1")
	ns := namespace(t)
	ctx := context.Background()
	c := newChurner(t, ns, n.name)
	t.Logf("VmRSS of the new kubelet: %d KiB", n.rssKiB(t))

	// Warm up — first image pull, client connections, the first pod of each kind of goroutine —
	// then take the goroutine baseline with no pod left.
	if err := c.round(ctx, 0, churnWorkers); err != nil {
		t.Fatal(err)
	}
	m := c.settled(t, n)
	baseline := m["go_goroutines"]
	t.Logf("Baseline after %d warm-up cycles: %v goroutines, VmRSS %d KiB, Go heap in use %.0f KiB",
		churnWorkers, baseline, n.rssKiB(t), m["go_memstats_heap_inuse_bytes"]/1024)

	start := time.Now()
	var rssFirst int
	for r := 1; r <= churnRounds; r++ {
		peak := n.peakDuring(func() error { return c.round(ctx, r, churnCycles/churnRounds) })
		if peak.err != nil {
			t.Fatal(peak.err)
		}
		// The gauges are alive: while fifty pods churn, the kubelet has workers and statuses.
		if peak.workers == 0 || peak.statuses == 0 {
			t.Fatalf("round %d: kubelet_pod_workers peaked at %v and kubelet_status_manager_entries at %v, want > 0 while pods run",
				r, peak.workers, peak.statuses)
		}
		done := r * churnCycles / churnRounds
		t.Logf("%d cycles in %s", done, time.Since(start).Round(time.Second))
		switch r {
		case 1:
			m := c.settled(t, n)
			rssFirst = n.rssKiB(t)
			t.Logf("VmRSS after %d cycles, settled: %d KiB; Go heap in use %.0f KiB", done, rssFirst, m["go_memstats_heap_inuse_bytes"]/1024)
		case churnRounds:
			m := c.settled(t, n)
			rss := n.rssKiB(t)
			t.Logf("VmRSS after %d cycles, settled: %d KiB (%.2f× the first sample); Go heap in use %.0f KiB",
				done, rss, float64(rss)/float64(rssFirst), m["go_memstats_heap_inuse_bytes"]/1024)
			// Go returns freed memory to the OS lazily and the GC's pacing varies from run to run,
			// so RSS is compared with a wide margin: it catches memory that grows with every pod
			// (about 100 KiB per pod here); the counts in settled catch a pod's state left behind.
			if float64(rss) >= 1.5*float64(rssFirst) {
				t.Errorf("VmRSS grew from %d KiB after %d cycles to %d KiB after %d: memory grows with the pods seen",
					rssFirst, churnCycles/churnRounds, rss, churnCycles)
			}
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d create/run/delete cycles in %s (%.1f per second)", churnCycles, elapsed.Round(time.Second), float64(churnCycles)/elapsed.Seconds())

	// Goroutines come back to the baseline once connections idle out.
	var goroutines float64
	framework.Eventually(t, time.Minute, "goroutines back to the baseline", func() (bool, string) {
		goroutines = n.metrics(t)["go_goroutines"]
		return goroutines <= baseline+goroutineSlack, fmt.Sprintf("%v goroutines, baseline %v (+%d allowed)", goroutines, baseline, goroutineSlack)
	})
	t.Logf("%v goroutines at the end, baseline %v", goroutines, baseline)
	n.mustBeRunning(t)
}

// peak is the highest pod worker and status counts seen while a round ran, and its error.
type peak struct {
	workers, statuses float64
	err               error
}

// peakDuring runs round while sampling the kubelet's gauges every second.
func (n *node) peakDuring(round func() error) peak {
	done := make(chan error)
	go func() { done <- round() }()
	var p peak
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case p.err = <-done:
			return p
		case <-tick.C:
			if m, err := n.scrape(); err == nil {
				p.workers, p.statuses = max(p.workers, m["kubelet_pod_workers"]), max(p.statuses, m["kubelet_status_manager_entries"])
			}
		}
	}
}
