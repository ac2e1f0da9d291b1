package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// manyResult is one `minikubelet --nodes N` run.
type manyResult struct {
	Nodes             int     `json:"nodes"`
	StartToAllReadyMS float64 `json:"startToAllReadyMs"`
	Memory            memory  `json:"memory"` // 10 s after every node is Ready
	RSSPerNodeMB      float64 `json:"rssPerNodeMb"`
	// Over the idle window after that: the process's CPU, every node's API requests (by the
	// users system:node:<prefix>*) per node and minute, and how many nodes were seen with Ready
	// other than True at any of the checks (every 5 s).
	IdleSeconds                    float64        `json:"idleSeconds"`
	IdleCPUSecondsPerMinute        float64        `json:"idleCpuSecondsPerMinute"`
	IdleRequestsPerNodePerMinute   float64        `json:"idleRequestsPerNodePerMinute"`
	IdleRequests                   map[string]int `json:"idleRequests"`
	NotReadyDuringIdle             int            `json:"notReadyDuringIdle"`
	MaxLeaseAgeDuringIdleSeconds   float64        `json:"maxLeaseAgeDuringIdleSeconds"`
	StartLogRegistrationsPerSecond string         `json:"startLogRegistrationsPerSecond,omitempty"`
	// Beside is kubemark's hollow nodes started with this run and counted over the same window.
	Beside *besideResult `json:"hollowBeside,omitempty"`
}

// besideResult is hollow nodes, one process each, started at the same moment as a --nodes N run
// and counted over the same idle window. A node's idle requests are its Lease renewals, a status
// PATCH every 5 minutes, and a new watch each time one of its watches times out (client-go ends
// a watch after 5–10 minutes); started together and counted together, both sides are at the same
// point of those cycles, which a hollow node measured alone right after its start is not.
type besideResult struct {
	Nodes                        int            `json:"nodes"`
	IdleRequestsPerNodePerMinute float64        `json:"idleRequestsPerNodePerMinute"`
	IdleRequests                 map[string]int `json:"idleRequests"`
}

// manyNodes runs `minikubelet --nodes n` until every node is Ready, reads its memory 10 s later,
// then lets it idle for cfg.manyIdle, watching CPU, API requests, Ready and the Leases.
func (b *bench) manyNodes(ctx context.Context, bin string, n int) (manyResult, error) {
	prefix := fmt.Sprintf("multi%d-", n)
	say("minikubelet --nodes %d --node-name-prefix %s", n, prefix)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	dir := filepath.Join(b.work, strings.TrimSuffix(prefix, "-"))
	cmd := exec.Command(bin, "--nodes", fmt.Sprint(n), "--node-name-prefix", prefix,
		"--bootstrap-kubeconfig", b.cluster.BootstrapKubeconfig, "--root-dir", dir,
		"--node-ip", "127.0.0.1", "--address", "127.0.0.1", clusterDNS[0], clusterDNS[1], clusterDNS[2], clusterDNS[3])
	p, err := start(cmd, filepath.Join(dir, "kubelet.log"))
	if err != nil {
		return manyResult{}, err
	}
	defer b.cleanupNodes(ctx, names...)
	defer p.stop()
	besidePrefix := fmt.Sprintf("beside%d-hollow-", n)
	hollows, hollowNames, err := b.startBeside(besidePrefix)
	defer b.cleanupNodes(ctx, hollowNames...)
	defer b.stopBeside(hollows)
	if err != nil {
		return manyResult{}, err
	}
	if err := b.waitAllReady(ctx, p, prefix, n, besidePrefix, hollows); err != nil {
		return manyResult{}, err
	}
	r := manyResult{Nodes: n, StartToAllReadyMS: ms(time.Since(p.started))}
	if r.Memory, err = p.memoryAfter(ctx, 10*time.Second); err != nil {
		return r, err
	}
	r.RSSPerNodeMB = r.Memory.mb() / float64(n)

	from, to, err := b.idleMany(ctx, p, prefix, &r)
	if err != nil {
		return r, err
	}
	r.StartLogRegistrationsPerSecond = lastStartRate(p.log)
	if len(hollows) > 0 {
		if r.Beside, err = b.idleBeside(ctx, hollows, besidePrefix, from, to); err != nil {
			return r, err
		}
	}
	return r, nil
}

// waitAllReady returns once the n nodes prefix* of p and the hollow nodes besidePrefix* are all
// Ready; it fails when a process exits or after 15 minutes.
func (b *bench) waitAllReady(ctx context.Context, p *process, prefix string, n int, besidePrefix string, hollows []*process) error {
	deadline := time.Now().Add(15 * time.Minute)
	for {
		ready, _, err := b.countReady(ctx, prefix)
		if err != nil {
			return err
		}
		hollowsReady, _, err := b.countReady(ctx, besidePrefix)
		if err != nil {
			return err
		}
		if ready == n && hollowsReady == len(hollows) {
			return nil
		}
		if p.exited() || time.Now().After(deadline) {
			return fmt.Errorf("%d of %d nodes and %d of %d hollow nodes beside Ready; the log ends with:\n%s", ready, n, hollowsReady, len(hollows), p.logTail())
		}
		for _, h := range hollows {
			if h.exited() {
				return fmt.Errorf("%d of %d hollow nodes beside Ready; %s's log ends with:\n%s", hollowsReady, len(hollows), h.log, h.logTail())
			}
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

// idleMany lets p's r.Nodes nodes prefix* idle for cfg.manyIdle, checking Ready and the Leases
// every 5 s, and records the idle numbers in r. It returns the idle window.
func (b *bench) idleMany(ctx context.Context, p *process, prefix string, r *manyResult) (from, to time.Time, err error) {
	say("minikubelet --nodes %d: idle for %s (CPU, API requests, NotReady nodes, Lease ages)", r.Nodes, b.cfg.manyIdle)
	cpu0, err := p.cpuSeconds()
	if err != nil {
		return from, to, err
	}
	from = time.Now()
	notReady := map[string]bool{}
	for time.Since(from) < b.cfg.manyIdle {
		if err := sleep(ctx, 5*time.Second); err != nil {
			return from, to, err
		}
		_, bad, err := b.countReady(ctx, prefix)
		if err != nil {
			return from, to, err
		}
		for _, name := range bad {
			notReady[name] = true
		}
		age, err := b.oldestLease(ctx, prefix)
		if err != nil {
			return from, to, err
		}
		r.MaxLeaseAgeDuringIdleSeconds = max(r.MaxLeaseAgeDuringIdleSeconds, age.Seconds())
	}
	to = time.Now()
	cpu1, err := p.cpuSeconds()
	if err != nil {
		return from, to, err
	}
	minutes := to.Sub(from).Minutes()
	r.IdleSeconds = to.Sub(from).Seconds()
	r.IdleCPUSecondsPerMinute = (cpu1 - cpu0) / minutes
	r.NotReadyDuringIdle = len(notReady)
	if r.IdleRequests, err = b.audit.countPrefix(ctx, "system:node:"+prefix, from, to); err != nil {
		return from, to, err
	}
	r.IdleRequestsPerNodePerMinute = float64(total(r.IdleRequests)) / float64(r.Nodes) / minutes
	return from, to, nil
}

// idleBeside counts the API requests of the hollow nodes besidePrefix* over the idle window
// [from, to], per node and minute.
func (b *bench) idleBeside(ctx context.Context, hollows []*process, besidePrefix string, from, to time.Time) (*besideResult, error) {
	for _, h := range hollows {
		if h.exited() {
			return nil, fmt.Errorf("a hollow node beside exited during the idle window:\n%s", h.logTail())
		}
	}
	beside := &besideResult{Nodes: len(hollows)}
	var err error
	if beside.IdleRequests, err = b.audit.countPrefix(ctx, "system:node:"+besidePrefix, from, to); err != nil {
		return nil, err
	}
	beside.IdleRequestsPerNodePerMinute = float64(total(beside.IdleRequests)) / float64(len(hollows)) / to.Sub(from).Minutes()
	return beside, nil
}

// startBeside starts cfg.beside hollow nodes named prefix1, prefix2, …; on an error it returns
// those already started, for the caller to stop.
func (b *bench) startBeside(prefix string) (started []*process, names []string, err error) {
	if b.hollow == nil || b.cfg.beside == 0 {
		return nil, nil, nil
	}
	say("and %d hollow nodes beside it (%s*), counted over the same window", b.cfg.beside, prefix)
	for i := 1; i <= b.cfg.beside; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		dir := filepath.Join(b.work, name)
		port, err := freePort()
		if err != nil {
			return started, names, err
		}
		h, err := start(b.hollow.cmd(name, dir, port), filepath.Join(dir, "kubelet.log"))
		if err != nil {
			return started, names, err
		}
		started, names = append(started, h), append(names, name)
	}
	return started, names, nil
}

// stopBeside stops the hollow nodes beside and removes what each left in /tmp.
func (b *bench) stopBeside(hollows []*process) {
	for _, h := range hollows {
		h.stop()
		b.hollow.cleanup(h)
	}
}

// countReady lists the nodes named prefix* and returns how many are Ready and the others' names.
func (b *bench) countReady(ctx context.Context, prefix string) (int, []string, error) {
	list, err := b.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, nil, err
	}
	ready := 0
	var notReady []string
	for i := range list.Items {
		node := &list.Items[i]
		if !strings.HasPrefix(node.Name, prefix) {
			continue
		}
		if nodeReady(node) {
			ready++
		} else {
			notReady = append(notReady, node.Name)
		}
	}
	return ready, notReady, nil
}

// oldestLease is how long ago the least recently renewed Lease of prefix* was renewed: with 40 s
// leases renewed every 10 s, anything near 40 s means renewals do not keep up.
func (b *bench) oldestLease(ctx context.Context, prefix string) (time.Duration, error) {
	list, err := b.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	var oldest time.Duration
	for _, l := range list.Items {
		if strings.HasPrefix(l.Name, prefix) && l.Spec.RenewTime != nil {
			oldest = max(oldest, time.Since(l.Spec.RenewTime.Time))
		}
	}
	return oldest, nil
}

// lastStartRate is the registrations per second in the last start-up progress line of the log
// ("Starting node agents" … registrationsPerSecond=…), or "".
func lastStartRate(logPath string) string {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	rate := ""
	for _, line := range strings.Split(string(data), "\n") {
		if _, after, ok := strings.Cut(line, "registrationsPerSecond="); ok && strings.Contains(line, "Starting node agents") {
			rate = strings.Fields(after)[0]
		}
	}
	return rate
}
