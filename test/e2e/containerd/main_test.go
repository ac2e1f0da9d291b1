package containerd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

var (
	cluster     *framework.Cluster
	minikubelet string // the binary under test
	crictl      string // crictl from hack/tools/crictl.sh, to look at containerd as an operator does
	// skipReason is why containerd cannot run here; when set, every test skips with it.
	skipReason string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	// As root, everything runs in a mount namespace of its own: containerd's overlays and the
	// kubelet's tmpfs mounts (emptyDir medium Memory) never reach the host's mount table.
	if os.Geteuid() == 0 {
		if done, code := framework.InPrivateMounts(); done {
			return code
		}
	}
	if skipReason = containerdUnavailable(); skipReason != "" {
		if os.Getenv("MINIKUBELET_E2E_CONTAINERD") == "required" {
			fmt.Fprintln(os.Stderr, "e2e: MINIKUBELET_E2E_CONTAINERD=required, but", skipReason)
			return 1
		}
		return m.Run() // every test skips, with the reason
	}
	binDir, err := os.MkdirTemp("", "minikubelet-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	if minikubelet, err = framework.BuildMinikubelet(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if crictl, err = buildCrictl(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return framework.Main(m.Run, framework.Options{}, &cluster)
}

// containerdUnavailable says why containerd cannot run on this machine ("" if it can): it checks
// what install.sh installs, then starts and stops one with up.sh.
func containerdUnavailable() string {
	if os.Geteuid() != 0 {
		return "skipped: containerd needs root; run the e2e tests as root after hack/containerd/install.sh"
	}
	for _, tool := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("skipped: %s is not installed; run hack/containerd/install.sh", tool)
		}
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		return "skipped: busybox-static is not installed (our busybox image is made from it); run hack/containerd/install.sh"
	}
	dir, err := os.MkdirTemp("", "mkc")
	if err != nil {
		return "skipped: " + err.Error()
	}
	up := filepath.Join(framework.RepoRoot(), "hack", "containerd", "up.sh")
	out, err := exec.Command("bash", up, "up", "--state-dir", dir).CombinedOutput()
	down, downErr := exec.Command("bash", up, "down", "--state-dir", dir).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("skipped: containerd cannot start on this machine (hack/containerd/up.sh up: %v):\n%s", err, out)
	}
	if downErr != nil {
		return fmt.Sprintf("skipped: hack/containerd/up.sh down failed: %v\n%s", downErr, down)
	}
	return ""
}

// buildCrictl returns $CRICTL, or crictl built (once, then cached) by hack/tools/crictl.sh.
func buildCrictl() (string, error) {
	if c := os.Getenv("CRICTL"); c != "" {
		return c, nil
	}
	cmd := exec.Command("bash", filepath.Join(framework.RepoRoot(), "hack", "tools", "crictl.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools/crictl.sh: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "crictl"), nil
}

// requireContainerd skips the test where containerd cannot run.
func requireContainerd(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}
