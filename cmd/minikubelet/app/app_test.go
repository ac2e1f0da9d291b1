package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/pkg/options"
)

// capture is a run that keeps the options it was given and returns err.
type capture struct {
	calls int
	opts  *options.Options
	err   error
}

func (c *capture) run(_ context.Context, o *options.Options) error {
	c.calls++
	c.opts = o
	return c.err
}

// execWith runs the root command as Main does, with run in place of the kubelet.
func execWith(t *testing.T, ctx context.Context, run runFunc, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = execute(ctx, args, &out, &errOut, run)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubelet-config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Flags and the KubeletConfiguration file reach the kubelet as one set of options: the file's
// fields, overridden by the flags given on the command line (as the real kubelet), with the
// paths derived from --root-dir.
func TestFlagsAndConfigFileReachRun(t *testing.T) {
	root := t.TempDir()
	config := writeFile(t, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 7\nport: 10350\n")
	c := &capture{}
	code, _, stderr := execWith(t, context.Background(), c.run,
		"--root-dir", root, "--hostname-override", "node-a", "--config", config, "--max-pods", "9", "--node-labels", "tier=lab")
	if code != 0 || c.calls != 1 {
		t.Fatalf("exit %d, run called %d times; stderr: %s", code, c.calls, stderr)
	}
	o := c.opts
	if o.NodeName != "node-a" {
		t.Errorf("node name = %q, want node-a (--hostname-override)", o.NodeName)
	}
	if o.Config.MaxPods != 9 {
		t.Errorf("maxPods = %d, want 9: the flag overrides the file", o.Config.MaxPods)
	}
	if o.Config.Port != 10350 {
		t.Errorf("port = %d, want 10350 from the file", o.Config.Port)
	}
	if o.NodeLabels["tier"] != "lab" {
		t.Errorf("node labels = %v, want tier=lab", o.NodeLabels)
	}
	if o.Kubeconfig != filepath.Join(root, "kubeconfig") || o.CertDir != filepath.Join(root, "pki") {
		t.Errorf("kubeconfig %q, cert dir %q: want them under --root-dir %s", o.Kubeconfig, o.CertDir, root)
	}
}

// A mistake on the command line says what is wrong and where to look, exits 1, and runs nothing.
func TestUsageErrorSaysHowToGetHelp(t *testing.T) {
	c := &capture{}
	code, _, stderr := execWith(t, context.Background(), c.run, "--root-dir", t.TempDir(), "--no-such-flag")
	if code != 1 || c.calls != 0 {
		t.Fatalf("exit %d, run called %d times, want 1 and 0", code, c.calls)
	}
	for _, want := range []string{"minikubelet: unknown flag: --no-such-flag", "Run 'minikubelet --help' for usage."} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}

// A broken config file is named in the error, the kubelet does not start, and it is not called a
// usage error (the command line was right).
func TestBrokenConfigFileIsNamed(t *testing.T) {
	config := writeFile(t, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: [\n")
	c := &capture{}
	code, _, stderr := execWith(t, context.Background(), c.run, "--root-dir", t.TempDir(), "--config", config)
	if code != 1 || c.calls != 0 {
		t.Fatalf("exit %d, run called %d times, want 1 and 0", code, c.calls)
	}
	if !strings.Contains(stderr, config) || strings.Contains(stderr, "--help") {
		t.Errorf("stderr %q should name %s and not send the user to --help", stderr, config)
	}
}

// An error from the kubelet (a step that could not start) is printed on one line and exits 1.
func TestRunErrorExitsOne(t *testing.T) {
	c := &capture{err: errors.New("tls-bootstrap: the CSR was denied")}
	code, _, stderr := execWith(t, context.Background(), c.run, "--root-dir", t.TempDir())
	if code != 1 || stderr != "minikubelet: tls-bootstrap: the CSR was denied\n" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// SIGTERM while starting (the context ends while a step waits) is a clean shutdown: exit 0,
// whatever the interrupted step returned.
func TestSignalWhileStartingIsClean(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &capture{err: context.Canceled}
	code, _, stderr := execWith(t, ctx, c.run, "--root-dir", t.TempDir())
	if code != 0 || c.calls != 1 {
		t.Fatalf("exit %d, run called %d times; stderr %q", code, c.calls, stderr)
	}
}

// The subcommands are wired: version prints ours and the Kubernetes version we build against.
func TestVersionCommand(t *testing.T) {
	c := &capture{}
	code, stdout, _ := execWith(t, context.Background(), c.run, "version")
	if code != 0 || c.calls != 0 || !strings.HasPrefix(stdout, "minikubelet ") || !strings.Contains(stdout, "\nKubernetes ") {
		t.Fatalf("exit %d, run called %d times, stdout %q", code, c.calls, stdout)
	}
}
