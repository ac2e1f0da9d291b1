// Package tour runs the README's set-up and five-minute tour as a reader does: `make run` in
// terminal 1, then, in terminal 2, every command of the README's fenced blocks marked
// `<!-- tour: terminal 2 -->`, as written, in bash, in the repository's top directory; after
// Ctrl-C, the blocks marked `<!-- tour: after Ctrl-C -->` (minikubelet doctor); then `make
// cluster-down`. Each command must exit 0, and where the README says what a command shows (a
// comment: "your node, Ready", "hog's working set ≥ 200Mi"), that must show. The README must mark
// at least one block; an interactive command (`kubectl exec -it …`) runs on a pseudo-terminal and
// is typed into as its comment says.
//
// The README's commands name fixed places: _output/cluster, _output/run, :10250, :10256, the
// hostname as the node's name. So the test runs them where nothing else can be touched: in a
// scratch top directory (the repository's Makefile, hack/ and labs/ linked in, its own bin/ and
// _output/), in a network namespace of its own (framework.InPrivateNetwork: needs root, as CI
// has), where `make run`'s ports are the namespace's own 127.0.0.1. `make run` would build
// bin/minikubelet first; the test builds it once beforehand (with -race) and runs `make -o build
// run`, so the control plane, metrics-server and crictl come from the cache in
// ~/.cache/minikubelet as they do for a reader.
package tour

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// minikubelet is bin/minikubelet of the scratch top directory's `make run`, built with -race.
var minikubelet string

func TestMain(m *testing.M) {
	// Outside the namespace, where the module proxy is reachable, build what `make run` and the
	// tour build on first use (no-ops when cached); inside, there is no network.
	if err := buildTools(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e tour:", err)
		os.Exit(1)
	}
	if done, code := framework.InPrivateNetwork(""); done {
		os.Exit(code)
	}
	binDir, err := os.MkdirTemp("", "minikubelet-e2e-tour-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if minikubelet, err = framework.BuildMinikubelet(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// buildTools builds, into ~/.cache/minikubelet, the control plane, metrics-server, crictl and the
// cluster program of hack/cluster/up.sh.
func buildTools() error {
	root := framework.RepoRoot()
	for _, args := range [][]string{
		{"hack/cluster/build.sh"}, {"hack/cluster/metrics-server.sh"}, {"hack/tools/crictl.sh"},
		{"go", "-C", "hack/cluster", "build", "-o", os.DevNull, "."},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = root
		cmd.Stderr = os.Stderr // "building … (first time only)"
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v", filepath.Join(args...), err)
		}
	}
	return nil
}
