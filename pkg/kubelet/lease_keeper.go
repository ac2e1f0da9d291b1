package kubelet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"k8s.io/klog/v2"
)

// The lease-keeper step: with --debug-keepalive, a child process keeps the node Ready while a
// debugger holds the kubelet at a breakpoint.

// startLeaseKeeper starts `minikubelet lease-keeper` (--debug-keepalive) as a child that renews
// the Lease while this process is stopped (pkg/lease RunKeeper). It dies with this process
// (PR_SET_PDEATHSIG) and is killed when the step stops.
func (k *Kubelet) startLeaseKeeper(ctx context.Context) (component, error) {
	if !k.opts.DebugKeepalive {
		return nop()
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--debug-keepalive: find our own binary: %w", err)
	}
	cmd := exec.Command(self, "lease-keeper", "--kubeconfig", k.opts.Kubeconfig, "--node-name", k.opts.NodeName,
		"--parent-pid", strconv.Itoa(os.Getpid()), "--lease-duration", k.leaseDuration().String())
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// PDEATHSIG fires when the *thread* that forked the child exits, so the fork happens on a
	// goroutine locked to its thread for the child's whole life.
	started := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the child
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("--debug-keepalive: start the lease keeper: %w", err)
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	logger.Info("Started the lease keeper: the node stays Ready while a debugger holds minikubelet stopped", "pid", cmd.Process.Pid)
	return runFunc(func(ctx context.Context) error {
		select {
		case err := <-exited:
			logger.Error(err, "The lease keeper exited; breakpoints will again let the node go NotReady")
			<-ctx.Done()
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			logger.V(2).Info("Stopped the lease keeper", "exit", <-exited)
		}
		return nil
	}), nil
}
