package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// Status is a check's verdict.
type Status int

const (
	// OK: this part of the setup works.
	OK Status = iota
	// Warn: minikubelet can run, but something will bite later (or is unsupported).
	Warn
	// Fail: minikubelet will not work until this is fixed; `doctor` exits 1.
	Fail
	// Skip: not checked, because a check it depends on failed (that one says why).
	Skip
)

func (s Status) String() string {
	switch s {
	case OK:
		return "OK"
	case Warn:
		return "WARN"
	case Fail:
		return "FAIL"
	case Skip:
		return "SKIP"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is what one check found: one line, and for WARN and FAIL what to do about it.
type Result struct {
	Status  Status
	Message string // what was checked and found, one line
	Fix     string // what to do; empty for OK and SKIP. May hold several lines.
}

// String formats the result as doctor prints it:
//
//	[OK]   API server https://127.0.0.1:6443 reachable, CA verifies
//	[FAIL] runtime unix:///tmp/fake.sock does not answer CRI Version: …
//	       fix: start the runtime: …
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %s\n", "["+r.Status.String()+"]", r.Message)
	for i, line := range strings.Split(r.Fix, "\n") {
		switch {
		case line == "":
		case i == 0:
			fmt.Fprintf(&b, "%7sfix: %s\n", "", line)
		default:
			fmt.Fprintf(&b, "%12s%s\n", "", line)
		}
	}
	return b.String()
}

// Summarize returns the line that ends doctor's report and whether any check failed.
func Summarize(results []Result) (string, bool) {
	count := map[Status]int{}
	for _, r := range results {
		count[r.Status]++
	}
	var extra []string
	if n := count[Warn]; n > 0 {
		extra = append(extra, plural(n, "warning"))
	}
	if n := count[Skip]; n > 0 {
		extra = append(extra, fmt.Sprintf("%d skipped", n))
	}
	more := ""
	if len(extra) > 0 {
		more = " (" + strings.Join(extra, ", ") + ")"
	}
	if n := count[Fail]; n > 0 {
		return fmt.Sprintf("doctor: %d of %s failed%s: fix the [FAIL] lines above, then run minikubelet doctor again",
			n, plural(len(results), "check"), more), true
	}
	return fmt.Sprintf("doctor: %d of %s passed%s", count[OK], plural(len(results), "check"), more), false
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Config is the setup to check: the same settings `minikubelet` would run with.
type Config struct {
	// BootstrapKubeconfig is --bootstrap-kubeconfig: API server, CA and bootstrap token. It may be
	// empty when Kubeconfig already holds a usable client certificate.
	BootstrapKubeconfig string
	// Kubeconfig is --kubeconfig, written by TLS bootstrap; it need not exist yet. Required.
	Kubeconfig string
	// CertDir (--cert-dir) and RootDir (--root-dir) must be writable. Required.
	CertDir string
	RootDir string
	// RuntimeEndpoint is --container-runtime-endpoint; empty means the built-in fake runtime,
	// which minikubelet serves on <RootDir>/fake-runtime.sock.
	RuntimeEndpoint string
	// Address and Port are where the kubelet API will listen (--address, --port). Port is required.
	Address string
	Port    int32
	// RotateCertificates (rotateCertificates) makes the selfnodeclient auto-approval required.
	RotateCertificates bool
	// KubeletVersion is the Kubernetes release minikubelet mirrors (pkg/version). Required.
	KubeletVersion string
	// Timeout bounds each network check (TLS handshake, API request, CRI call). Default 5 s.
	Timeout time.Duration
	// Clock tells whether the node's client certificate is valid now. Default: the real clock.
	Clock clock.PassiveClock
}

func (c *Config) complete() error {
	if c.Kubeconfig == "" || c.CertDir == "" || c.RootDir == "" || c.KubeletVersion == "" {
		return errors.New("doctor: Kubeconfig, CertDir, RootDir and KubeletVersion are required")
	}
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("doctor: Port must be 1..65535, got %d", c.Port)
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Second
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	return nil
}

// Run runs every check in order, writes each result to out as soon as it is known, and returns
// them all. It does not stop at a failure: a check that needs one that failed reports SKIP.
func Run(ctx context.Context, cfg Config, out io.Writer) ([]Result, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	var results []Result
	report := func(r Result) {
		results = append(results, r)
		fmt.Fprint(out, r.String())
	}

	// 1. Kubeconfigs. The node's own is read first: while its certificate works, the bootstrap
	// kubeconfig is only needed to join again, so problems with it are warnings, not failures.
	node, nodeResult := checkNodeKubeconfig(ctx, cfg)
	boot, bootResult := checkBootstrapKubeconfig(ctx, cfg, node != nil)
	report(softenIf(node != nil, bootResult, cfg.Kubeconfig))
	report(nodeResult)

	// 2. The bootstrap token: accepted, and a member of system:bootstrappers.
	var bootstrapUser *identity
	if boot != nil {
		var r Result
		bootstrapUser, r = checkBootstrapToken(ctx, boot)
		report(softenIf(node != nil, r, cfg.Kubeconfig))
	} else if cfg.BootstrapKubeconfig != "" {
		report(skipped("bootstrap token", "needs the API server of --bootstrap-kubeconfig (see above)"))
	}

	// 3. RBAC that lets kube-controller-manager approve the node's CSRs.
	for _, rule := range bootstrapCSRRules {
		if bootstrapUser == nil {
			if cfg.BootstrapKubeconfig != "" {
				report(skipped("RBAC: create "+rule.resource(), "needs an accepted bootstrap token (see above)"))
			}
			continue
		}
		report(softenIf(node != nil, checkCSRRule(ctx, boot, rule, bootstrapUser), cfg.Kubeconfig))
	}
	if node != nil && cfg.RotateCertificates {
		report(checkCSRRule(ctx, node, rotationCSRRule, &identity{user: node.certSubject, groups: []string{nodesGroup}}))
	}

	// 4. Version skew between this kubelet and the API server.
	report(checkVersion(ctx, cfg.KubeletVersion, node, boot))

	// 5. The container runtime answers CRI.
	report(checkRuntime(ctx, cfg.RuntimeEndpoint, cfg.RootDir, cfg.Timeout))

	// 6. The directories minikubelet writes to.
	report(checkWritableDir("--cert-dir", cfg.CertDir))
	report(checkWritableDir("--root-dir", cfg.RootDir))

	// 7. The kubelet API's port is free.
	report(checkPortFree(cfg.Address, cfg.Port))
	return results, nil
}

// softenIf turns a failure of the bootstrap credentials into a warning when the node already has
// a working client certificate: minikubelet then never uses them, until it has to join again.
func softenIf(nodeHasCert bool, r Result, kubeconfig string) Result {
	if !nodeHasCert || r.Status != Fail {
		return r
	}
	r.Status = Warn
	r.Message += fmt.Sprintf(" (not needed while the client certificate in %s works; needed to join again)", kubeconfig)
	return r
}

func skipped(what, because string) Result {
	return Result{Status: Skip, Message: fmt.Sprintf("%s: not checked: %s", what, because)}
}
