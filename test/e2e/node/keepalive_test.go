package node

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/pkg/lease"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// With --debug-keepalive, a kubelet held stopped (as a debugger's breakpoint holds it) for twice
// the grace period keeps its node Ready, because the lease-keeper child renews the Lease for it;
// the keeper dies with the kubelet. (Without the flag the node goes NotReady:
// TestNodeJoinsStaysReadyAndRestarts.)
func TestDebugKeepaliveKeepsStoppedNodeReady(t *testing.T) {
	const name = "e2e-keepalive"
	ctx := context.Background()
	rootDir := t.TempDir()
	kubelet := framework.StartProcess(t, minikubelet, kubeletArgs(t, name, rootDir, "--debug-keepalive")...)
	t.Cleanup(func() { _ = cluster.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}) })
	waitReady(t, name, corev1.ConditionTrue, time.Minute)

	keeper := childWithArg(t, kubelet.Cmd.Process.Pid, "lease-keeper")
	if keeper == 0 {
		t.Fatalf("no lease-keeper child of minikubelet (pid %d):\n%s", kubelet.Cmd.Process.Pid, kubelet.Log())
	}
	t.Cleanup(func() { _ = syscall.Kill(keeper, syscall.SIGKILL) }) // only if the test failed early

	if err := kubelet.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()
	hold := 2 * 16 * time.Second // the test cluster's node-monitor-grace-period is 16 s
	for time.Since(stoppedAt) < hold {
		if status, msg := readyCondition(name); status != corev1.ConditionTrue {
			_ = kubelet.Signal(syscall.SIGCONT)
			t.Fatalf("%s after SIGSTOP with --debug-keepalive the node is not Ready: %s", time.Since(stoppedAt).Round(time.Second), msg)
		}
		time.Sleep(time.Second)
	}
	l, err := cluster.Client.CoordinationV1().Leases(lease.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Spec.RenewTime.After(stoppedAt) {
		t.Errorf("lease renewTime %v is not after the SIGSTOP at %v: nobody renewed it", l.Spec.RenewTime, stoppedAt)
	}
	if err := kubelet.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(kubelet.Log(), "renewing the node lease for it") {
		t.Errorf("the keeper did not say it renewed for the stopped kubelet:\n%s", kubelet.Log())
	}
	waitReady(t, name, corev1.ConditionTrue, time.Minute)

	// SIGKILL leaves the kubelet no time to clean up: PR_SET_PDEATHSIG still ends the keeper.
	if err := kubelet.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = kubelet.Wait(10 * time.Second)
	framework.Eventually(t, 10*time.Second, "the lease keeper to exit with the kubelet", func() (bool, string) {
		state, err := lease.ProcState(keeper)
		return err != nil || state == 'Z' || state == 'X', "keeper state " + string(state)
	})
}

// childWithArg returns the PID of a child of parent whose command line has arg, or 0.
func childWithArg(t *testing.T, parent int, arg string) int {
	t.Helper()
	var found int
	framework.Eventually(t, 10*time.Second, "a "+arg+" child of "+strconv.Itoa(parent), func() (bool, string) {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, stat := range stats {
			b, err := os.ReadFile(stat)
			if err != nil {
				continue
			}
			s := string(b)
			fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
			if len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(stat), "cmdline"))
			if strings.Contains(string(cmdline), arg) {
				found, _ = strconv.Atoi(filepath.Base(filepath.Dir(stat)))
				return true, ""
			}
		}
		return false, "none yet"
	})
	return found
}
