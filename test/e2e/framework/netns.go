package framework

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// inNetNSEnv marks the re-executed test binary that already runs in its private namespace.
const inNetNSEnv = "MINIKUBELET_E2E_NETNS_ADDR"

// InPrivateNetwork runs this test binary again in a network namespace of its own (`unshare
// --net`), where lo is up and, unless addr is empty, also carries addr: an address that is not a
// loopback address (so the API server agrees to proxy to a node that has it) but that nothing
// outside the namespace can reach. With addr empty there is only 127.0.0.1 (and ::1), so fixed
// ports such as `make run`'s :10250 are the namespace's own. Every process the tests start — control plane, minikubelet, kubectl — lives in that
// namespace and vanishes with it; nothing on the host changes.
//
// Call it first in TestMain. In the outer process it returns done=true and the inner run's exit
// code; in the inner process it sets up the namespace and returns done=false. Without root (no
// namespace), it says so and returns done=true with code 1, so no test counts as passed.
func InPrivateNetwork(addr string) (done bool, code int) {
	marker := addr
	if addr == "" {
		marker = "lo"
	}
	if os.Getenv(inNetNSEnv) == marker {
		setUp := [][]string{{"link", "set", "lo", "up"}}
		if addr != "" {
			setUp = append(setUp, []string{"addr", "add", addr + "/32", "dev", "lo"})
		}
		for _, args := range setUp {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: ip %v in the test namespace: %v: %s\n", args, err, out)
				return true, 1
			}
		}
		return false, 0
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e: these tests need root to make a private network namespace (unshare --net)")
		return true, 1
	}
	// An external cluster (MINIKUBELET_E2E_KUBECONFIG) is out of reach from the namespace: the
	// inner run always starts its own.
	env := []string{inNetNSEnv + "=" + marker}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MINIKUBELET_E2E_KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	return runUnshared([]string{"--net"}, env)
}

// runUnshared runs this test binary again under `unshare FLAGS` with env, and returns done=true
// and the inner run's exit code.
func runUnshared(flags []string, env []string) (done bool, code int) {
	what := "unshare " + strings.Join(flags, " ")
	cmd := exec.Command("unshare", append(append(flags, "--", os.Args[0]), os.Args[1:]...)...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// SIGINT and SIGTERM go on to the inner run, which cleans up (stops its cluster and
	// processes) and exits; the outer one waits for it instead of dying first and killing it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: "+what+":", err)
		return true, 1
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
		case err := <-waited:
			var exitErr *exec.ExitError
			switch {
			case err == nil:
				return true, 0
			case errors.As(err, &exitErr):
				return true, exitErr.ExitCode()
			}
			fmt.Fprintln(os.Stderr, "e2e: "+what+":", err)
			return true, 1
		}
	}
}
