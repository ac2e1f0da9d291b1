package debug

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
	minikubelet string // built like bin/minikubelet-debug: no optimisations, no inlining
	dlv         string // Delve as pinned in hack/tools/go.mod
)

func TestMain(m *testing.M) {
	binDir, err := os.MkdirTemp("", "minikubelet-e2e-debug-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(binDir)
	if minikubelet, err = buildDebugMinikubelet(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if dlv, err = installDelve(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := framework.Main(m.Run, framework.Options{}, &cluster)
	os.RemoveAll(binDir)
	os.Exit(code)
}

// buildDebugMinikubelet compiles ./cmd/minikubelet as hack/debug.sh does: -gcflags=all=-N -l keeps
// every variable in memory and every call a real call, so Delve can show and stop at them.
func buildDebugMinikubelet(dir string) (string, error) {
	bin := filepath.Join(dir, "minikubelet-debug")
	cmd := exec.Command("go", "build", "-gcflags=all=-N -l", "-o", bin, "./cmd/minikubelet")
	cmd.Dir = framework.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -gcflags=all=-N -l ./cmd/minikubelet: %v\n%s", err, out)
	}
	return bin, nil
}

// installDelve builds the pinned dlv into the user cache (first time only) and returns its path.
func installDelve() (string, error) {
	cmd := exec.Command("bash", filepath.Join(framework.RepoRoot(), "hack", "tools", "install.sh"), "dlv")
	cmd.Stderr = os.Stderr // "building dlv … (first time only)"
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools/install.sh dlv: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}
