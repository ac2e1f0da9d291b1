package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// bench is one make bench run: its settings, the cluster both kubelets join, and where
// its files go.
type bench struct {
	cfg     config
	cluster *framework.Cluster
	client  kubernetes.Interface // the admin, without a client-side rate limit
	audit   *auditLogReader
	work    string
	hollow  *side // kubemark's hollow node, when measured
}

// sideResult is what was measured for one kubelet.
type sideResult struct {
	Kubelet        string  `json:"kubelet"`
	Node           string  `json:"node"`
	StartToReadyMS float64 `json:"startToReadyMs"`
	// Idle is the memory 10 s after Ready; WithPods with every pod Running and Ready.
	Idle     memory `json:"idle"`
	WithPods memory `json:"withPods"`
	// IdleCPUSecondsPerMinute and IdleRequestsPerMinute are measured over the idle window.
	IdleCPUSecondsPerMinute float64        `json:"idleCpuSecondsPerMinute"`
	IdleRequestsPerMinute   float64        `json:"idleRequestsPerMinute"`
	IdleRequests            map[string]int `json:"idleRequests"`
	Pods                    podStartup     `json:"pods"`
	// RequestsPerPod is the node's API requests from the first pod create until every pod is
	// gone, divided by the number of pods; PodRequests breaks them down by verb and resource.
	RequestsPerPod float64        `json:"requestsPerPod"`
	PodRequests    map[string]int `json:"podRequests"`
	// minikubelet only: PLEG relists per idle minute (its /metrics), and a container killed
	// behind its back (the fake runtime's fault) → the API shows it, in ms.
	RelistsPerIdleMinute float64 `json:"relistsPerIdleMinute,omitempty"`
	KillToAPIMS          float64 `json:"killToApiMs,omitempty"`
}

// podStartup is created→Running-and-Ready of pods bound at once, as seen by a watch.
type podStartup struct {
	N            int       `json:"n"`
	P50MS        float64   `json:"p50Ms"`
	P90MS        float64   `json:"p90Ms"`
	P99MS        float64   `json:"p99Ms"`
	MaxMS        float64   `json:"maxMs"`
	WallMS       float64   `json:"wallMs"`       // first create → last Ready
	DeleteWallMS float64   `json:"deleteWallMs"` // first delete → last one gone from the API
	LatenciesMS  []float64 `json:"latenciesMs"`
}

// measure runs one kubelet through the whole sequence: start → Ready, idle, the pod burst, stop.
func (b *bench) measure(ctx context.Context, s side) (*sideResult, error) {
	say("%s: start → Ready", s.label)
	dir := filepath.Join(b.work, s.node)
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	nodes := b.client.CoreV1().Nodes()
	w, err := nodes.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", s.node).String()})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	p, err := start(s.cmd(s.node, dir, port), filepath.Join(dir, "kubelet.log"))
	if err != nil {
		return nil, err
	}
	defer b.cleanupNodes(ctx, s.node)
	if s.cleanup != nil {
		defer s.cleanup(p) // after stop
	}
	defer p.stop()
	readyAt, err := waitNodeReady(ctx, w, p, 3*time.Minute)
	if err != nil {
		return nil, err
	}
	r := &sideResult{Kubelet: s.label, Node: s.node, StartToReadyMS: ms(readyAt.Sub(p.started))}

	if r.Idle, err = p.memoryAfter(ctx, 10*time.Second); err != nil {
		return nil, err
	}
	if err := b.measureIdle(ctx, s, p, dir, port, r); err != nil {
		return nil, err
	}
	if err := b.measurePods(ctx, s, p, dir, r); err != nil {
		return nil, err
	}
	if p.exited() {
		return nil, fmt.Errorf("%s exited during the run:\n%s", s.label, p.logTail())
	}
	return r, nil
}

// measureIdle lets the kubelet p idle for cfg.idle and records its CPU, its API requests and
// (minikubelet) its PLEG relists per minute in r.
func (b *bench) measureIdle(ctx context.Context, s side, p *process, dir string, port int, r *sideResult) error {
	say("%s: idle for %s (CPU, API requests)", s.label, b.cfg.idle)
	cpu0, err := p.cpuSeconds()
	if err != nil {
		return err
	}
	var relists0 float64
	if s.minikubelet {
		if relists0, err = relistCount(ctx, b.cluster.RestConfig, dir, port); err != nil {
			return err
		}
	}
	from := time.Now()
	if err := sleep(ctx, b.cfg.idle); err != nil {
		return err
	}
	to := time.Now()
	cpu1, err := p.cpuSeconds()
	if err != nil {
		return err
	}
	minutes := to.Sub(from).Minutes()
	r.IdleCPUSecondsPerMinute = (cpu1 - cpu0) / minutes
	if s.minikubelet {
		relists1, err := relistCount(ctx, b.cluster.RestConfig, dir, port)
		if err != nil {
			return err
		}
		r.RelistsPerIdleMinute = (relists1 - relists0) / minutes
	}
	if r.IdleRequests, err = b.audit.count(ctx, "system:node:"+s.node, from, to); err != nil {
		return err
	}
	r.IdleRequestsPerMinute = float64(total(r.IdleRequests)) / minutes
	return nil
}

// measurePods runs the pod burst on the kubelet p and records the startup numbers, its memory
// with the pods, its API requests per pod and (minikubelet) kill → API in r.
func (b *bench) measurePods(ctx context.Context, s side, p *process, dir string, r *sideResult) error {
	say("%s: %d pods bound at once by %d creators", s.label, b.cfg.pods, b.cfg.creators)
	var podsFrom, podsTo time.Time
	var err error
	if r.Pods, podsFrom, podsTo, err = b.podBurst(ctx, s.node, func() error {
		r.WithPods, err = p.readMemory()
		return err
	}); err != nil {
		return fmt.Errorf("%w\nthe kubelet's log ends with:\n%s", err, p.logTail())
	}
	if r.PodRequests, err = b.audit.count(ctx, "system:node:"+s.node, podsFrom, podsTo); err != nil {
		return err
	}
	r.RequestsPerPod = float64(total(r.PodRequests)) / float64(b.cfg.pods)
	if s.minikubelet {
		say("%s: a container killed behind its back", s.label)
		d, err := b.killToAPI(ctx, s.node, dir)
		if err != nil {
			return fmt.Errorf("%w\nthe kubelet's log ends with:\n%s", err, p.logTail())
		}
		r.KillToAPIMS = ms(d)
	}
	return nil
}

// warmUp runs s until its node is Ready, then stops it and removes the node.
func (b *bench) warmUp(ctx context.Context, s side) error {
	s.node += "-warmup"
	dir := filepath.Join(b.work, s.node)
	port, err := freePort()
	if err != nil {
		return err
	}
	w, err := b.client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", s.node).String()})
	if err != nil {
		return err
	}
	defer w.Stop()
	p, err := start(s.cmd(s.node, dir, port), filepath.Join(dir, "kubelet.log"))
	if err != nil {
		return err
	}
	defer b.cleanupNodes(ctx, s.node)
	defer p.stop()
	_, err = waitNodeReady(ctx, w, p, 3*time.Minute)
	return err
}

// waitNodeReady returns when w shows the node Ready=True.
func waitNodeReady(ctx context.Context, w watch.Interface, p *process, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-deadline:
			return time.Time{}, fmt.Errorf("node not Ready after %s; the kubelet's log ends with:\n%s", timeout, p.logTail())
		case <-p.done:
			return time.Time{}, fmt.Errorf("the kubelet exited before its node was Ready:\n%s", p.logTail())
		case e, ok := <-w.ResultChan():
			if !ok {
				return time.Time{}, fmt.Errorf("the node watch ended")
			}
			if node, isNode := e.Object.(*corev1.Node); isNode && nodeReady(node) {
				return time.Now(), nil
			}
		}
	}
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podBurst creates cfg.pods pods bound to node (10 creators by default), waits until a watch has
// seen each Running and Ready, calls withPods, then deletes them all and waits until they are
// gone. It returns the startup numbers and the window [first create, last gone].
func (b *bench) podBurst(ctx context.Context, node string, withPods func() error) (podStartup, time.Time, time.Time, error) {
	client := b.client.CoreV1()
	ns := "bench-" + node
	if _, err := client.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return podStartup{}, time.Time{}, time.Time{}, err
	}
	defer func() { _ = client.Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{}) }()
	timeout := int64(3600)
	w, err := client.Pods(ns).Watch(ctx, metav1.ListOptions{TimeoutSeconds: &timeout})
	if err != nil {
		return podStartup{}, time.Time{}, time.Time{}, err
	}
	defer w.Stop()
	t := newPodTracker()
	go t.follow(w)

	names := make([]string, b.cfg.pods)
	for i := range names {
		names[i] = fmt.Sprintf("pod-%03d", i)
	}
	first := time.Now()
	if err := b.createPods(ctx, ns, node, names, t); err != nil {
		return podStartup{}, time.Time{}, time.Time{}, err
	}
	if err := t.waitFor(ctx, "all pods Running and Ready", func(ready, _ int) bool { return ready == len(names) }); err != nil {
		ready, _ := t.counts()
		return podStartup{}, time.Time{}, time.Time{}, fmt.Errorf("%w (%d of %d)", err, ready, len(names))
	}
	st := t.startup(names, first)

	if err := sleep(ctx, 2*time.Second); err != nil { // let the last status writes settle
		return st, first, first, err
	}
	if err := withPods(); err != nil {
		return st, first, first, err
	}

	// Deletion as kubectl delete does it: the kubelet stops the containers, then removes the pod.
	delFrom := time.Now()
	if err := parallel(b.cfg.creators, names, func(name string) error {
		return client.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
	}); err != nil {
		return st, first, first, err
	}
	if err := t.waitFor(ctx, "all pods gone", func(_, gone int) bool { return gone == len(names) }); err != nil {
		_, gone := t.counts()
		return st, first, first, fmt.Errorf("%w (%d of %d gone)", err, gone, len(names))
	}
	allGone := time.Now()
	st.DeleteWallMS = ms(allGone.Sub(delFrom))
	return st, first, allGone, nil
}

// createPods creates the pods names in ns, bound to node, with cfg.creators creators, and records
// when each create was sent.
func (b *bench) createPods(ctx context.Context, ns, node string, names []string, t *podTracker) error {
	return parallel(b.cfg.creators, names, func(name string) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{
				NodeName:   node,
				Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		t.mu.Lock()
		t.created[name] = time.Now()
		t.mu.Unlock()
		_, err := b.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
}

// podTracker is what a pod burst's watch has seen: when each pod was created (by us) and first
// seen Running and Ready, and how many are gone.
type podTracker struct {
	mu      sync.Mutex
	created map[string]time.Time
	ready   map[string]time.Time
	gone    int
	changed chan struct{} // a token after each event, for waitFor
}

func newPodTracker() *podTracker {
	return &podTracker{created: map[string]time.Time{}, ready: map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

// follow records the events of w until it ends.
func (t *podTracker) follow(w watch.Interface) {
	for e := range w.ResultChan() {
		pod, ok := e.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		now := time.Now()
		t.mu.Lock()
		if _, seen := t.ready[pod.Name]; !seen && e.Type != watch.Deleted && podReady(pod) {
			t.ready[pod.Name] = now
		}
		if e.Type == watch.Deleted {
			t.gone++
		}
		t.mu.Unlock()
		select {
		case t.changed <- struct{}{}:
		default:
		}
	}
}

// waitFor returns once done holds for the counts of Ready and gone pods, or fails after 5
// minutes.
func (t *podTracker) waitFor(ctx context.Context, what string, done func(ready, gone int) bool) error {
	deadline := time.After(5 * time.Minute)
	for {
		if done(t.counts()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("%s: not done after 5m", what)
		case <-t.changed:
		case <-time.After(time.Second):
		}
	}
}

// counts is how many pods were seen Ready and how many are gone.
func (t *podTracker) counts() (ready, gone int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ready), t.gone
}

// startup is the created → Ready latencies of names, their percentiles, and the wall time from
// first (the first create) to the last Ready.
func (t *podTracker) startup(names []string, first time.Time) podStartup {
	st := podStartup{N: len(names)}
	t.mu.Lock()
	last := first
	for _, name := range names {
		st.LatenciesMS = append(st.LatenciesMS, ms(t.ready[name].Sub(t.created[name])))
		if t.ready[name].After(last) {
			last = t.ready[name]
		}
	}
	t.mu.Unlock()
	st.WallMS = ms(last.Sub(first))
	slices.Sort(st.LatenciesMS)
	st.P50MS, st.P90MS, st.P99MS = percentile(st.LatenciesMS, 0.50), percentile(st.LatenciesMS, 0.90), percentile(st.LatenciesMS, 0.99)
	st.MaxMS = st.LatenciesMS[len(st.LatenciesMS)-1]
	return st
}

// parallel runs do for every item with n workers and returns the first error.
func parallel(n int, items []string, do func(string) error) error {
	work := make(chan string)
	errs := make(chan error, len(items))
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for item := range work {
				if err := do(item); err != nil {
					errs <- fmt.Errorf("%s: %w", item, err)
				}
			}
		}()
	}
	for _, item := range items {
		work <- item
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// cleanupNodes removes what the stopped kubelets leave in the API: their Nodes, Leases and the
// CSRs (every CSR: the bench's cluster has no others worth keeping).
func (b *bench) cleanupNodes(ctx context.Context, names ...string) {
	ctx = context.WithoutCancel(ctx)
	c := b.client
	for _, name := range names {
		_ = c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		_ = c.CoordinationV1().Leases("kube-node-lease").Delete(ctx, name, metav1.DeleteOptions{})
	}
	_ = c.CertificatesV1().CertificateSigningRequests().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// percentile is the nearest-rank q-quantile of sorted values: the smallest value with at least
// q of all values at or below it.
func percentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ms is d in milliseconds, rounded to 10 µs.
func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())/10) / 100 }

// total sums the counts of m.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// sleep waits d, or less if ctx ends (its error is returned then). The bench's idle windows
// are measurements of time passing, so they sleep.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
