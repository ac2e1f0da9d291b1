package debug

import (
	"context"
	"errors"
	"net"
	"net/rpc"
	"net/rpc/jsonrpc"
	"os"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// syncLoopIteration is the function a student's first breakpoint goes on: one turn of the
// syncLoop (upstream: pkg/kubelet/kubelet.go syncLoopIteration). Ours is a method of the pod
// lifecycle, pkg/kubelet/syncloop.go.
const syncLoopIteration = "github.com/minikubelet/minikubelet/pkg/kubelet.(*Kubelet).syncLoopIteration"

// The Delve session a student runs with `make debug` and `dlv connect`, driven over Delve's
// JSON-RPC API: minikubelet starts under Delve stopped before main; a breakpoint on
// syncLoopIteration stops it after the node is registered (the start order puts registration before
// the syncLoop); the receiver and the four channels are readable (a -N -l build: nothing is
// "optimized away"); cleared, the breakpoint lets the node run on to Ready; Detach with Kill ends
// minikubelet, and Delve exits.
func TestDelveStopsInSyncLoopIteration(t *testing.T) {
	const name = "e2e-delve-node"
	ctx := context.Background()
	t.Cleanup(func() { deleteNodeArtifacts(name) })
	rootDir, err := os.MkdirTemp("", "mk") // short: the fake runtime's socket lives in it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	listen := "127.0.0.1:" + strconv.Itoa(framework.FreePort(t))
	delveProc := framework.StartProcess(t, dlv, "exec", minikubelet,
		"--headless", "--listen="+listen, "--api-version=2", "--accept-multiclient", "--",
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig,
		"--root-dir", rootDir,
		"--hostname-override", name,
		"--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t)),
		"-v", "2")
	d := connect(t, listen)

	// Delve starts the debuggee stopped at its entry point, and does not take it along when Delve
	// itself is killed: stop it by its PID too, unless Detach below already did.
	var pid pidOut
	d.call("ProcessPid", struct{}{}, &pid)
	detached := false
	t.Cleanup(func() {
		if !detached {
			_ = syscall.Kill(pid.Pid, syscall.SIGKILL)
		}
	})
	var st stateOut
	d.call("State", stateIn{NonBlocking: true}, &st)
	if st.State.Running || st.State.Exited || st.State.Pid != pid.Pid {
		t.Fatalf("before continue: state %+v, want process %d stopped at its entry", st.State, pid.Pid)
	}

	// `break kubelet.(*Kubelet).syncLoopIteration` (hack/debug.sh prints it) names this one function.
	var locs findLocationOut
	d.call("FindLocation", findLocationIn{Scope: evalScope{GoroutineID: -1}, Loc: "kubelet.(*Kubelet).syncLoopIteration"}, &locs)
	if len(locs.Locations) != 1 || locs.Locations[0].Function == nil || locs.Locations[0].Function.Name != syncLoopIteration {
		t.Errorf("FindLocation kubelet.(*Kubelet).syncLoopIteration = %+v, want only %s", locs.Locations, syncLoopIteration)
	}
	var bp createBreakpointOut
	d.call("CreateBreakpoint", createBreakpointIn{Breakpoint: breakpoint{FunctionName: syncLoopIteration}}, &bp)

	// TLS bootstrap comes first; allow a cold, unoptimised start plenty of time. The node registers
	// in the background, as upstream's (start step node-registration, after the syncLoop: a static
	// pod may be the API server it registers with), so a student's first stops may come before
	// the Node exists: continue, as they would, until it does — each turn is at most a second.
	var th *thread
	var node *corev1.Node
	for turn := 0; ; turn++ {
		st = d.command("continue", 3*time.Minute)
		th = st.State.CurrentThread
		if st.State.Exited || th == nil || th.Breakpoint == nil || th.Breakpoint.ID != bp.Breakpoint.ID ||
			th.Function == nil || th.Function.Name != syncLoopIteration {
			t.Fatalf("continue stopped with state %+v thread %+v, want breakpoint %d in %s", st.State, th, bp.Breakpoint.ID, syncLoopIteration)
		}
		n, err := cluster.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			node = n
			break
		}
		if turn == 60 {
			t.Fatalf("stopped in the syncLoop %d times, but node %s is not registered: %v", turn+1, name, err)
		}
	}
	if th.Function.Optimized {
		t.Errorf("%s is marked optimized: the binary was not built with -gcflags=all=-N -l", syncLoopIteration)
	}
	if !strings.HasSuffix(th.File, "pkg/kubelet/syncloop.go") {
		t.Errorf("stopped in %s:%d, want pkg/kubelet/syncloop.go", th.File, th.Line)
	}

	// The process under Delve is the node: it registered itself.
	if node.Labels[corev1.LabelHostname] != name {
		t.Errorf("node %s has labels %v, want %s=%s", name, node.Labels, corev1.LabelHostname, name)
	}

	// What a student prints first: the receiver's node name and the channels the turn waits on.
	scope := evalScope{GoroutineID: th.GoroutineID}
	var ev evalOut
	d.call("Eval", evalIn{Scope: scope, Expr: "k.opts.NodeName"}, &ev)
	if v := ev.Variable; v == nil || v.Kind != reflect.String || v.Value != name || v.Unreadable != "" {
		t.Errorf("print k.opts.NodeName = %+v, want the string %q", v, name)
	}
	var args listFunctionArgsOut
	d.call("ListFunctionArgs", listFunctionArgsIn{Scope: scope, Cfg: loadConfig{MaxStringLen: 64, MaxArrayValues: 8}}, &args)
	got := map[string]variable{}
	for _, a := range args.Args {
		got[a.Name] = a
	}
	for arg, kind := range map[string]reflect.Kind{"k": reflect.Pointer, "ctx": reflect.Interface,
		"configCh": reflect.Chan, "plegCh": reflect.Chan, "syncCh": reflect.Chan, "housekeepingCh": reflect.Chan} {
		if a, ok := got[arg]; !ok || a.Kind != kind || a.Unreadable != "" {
			t.Errorf("args: %s = %+v, want a readable %s (all args: %+v)", arg, a, kind, args.Args)
		}
	}
	if a := got["syncCh"]; a.Type != "<-chan time.Time" {
		t.Errorf("args: syncCh has type %q, want <-chan time.Time", a.Type)
	}

	// Clear the breakpoint and continue: the node runs on until it is Ready, then halt.
	d.call("ClearBreakpoint", clearBreakpointIn{ID: bp.Breakpoint.ID}, &clearBreakpointOut{})
	running := d.c.Go("RPCServer.Command", debuggerCommand{Name: "continue"}, &stateOut{}, nil)
	framework.Eventually(t, 2*time.Minute, "node "+name+" Ready while running under Delve", func() (bool, string) {
		n, err := cluster.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, c.Reason + ": " + c.Message
			}
		}
		return false, "no Ready condition"
	})
	if st = d.command("halt", time.Minute); st.State.Exited {
		t.Fatalf("minikubelet exited under Delve: state %+v", st.State)
	}
	select {
	case <-running.Done:
		if running.Error != nil {
			t.Errorf("the continue ended by halt: %v", running.Error)
		}
	case <-time.After(time.Minute):
		t.Fatal("halt did not end the running continue")
	}

	// Detach with Kill: minikubelet is killed (and reaped by Delve), and Delve exits.
	d.call("Detach", detachIn{Kill: true}, &struct{}{})
	detached = true
	if code, err := delveProc.Wait(time.Minute); err != nil || code != 0 {
		t.Errorf("dlv after Detach: exit code %d, err %v; want 0", code, err)
	}
	if err := syscall.Kill(pid.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("minikubelet (pid %d) after Detach{Kill: true}: kill -0 says %v, want no such process", pid.Pid, err)
	}
}

func deleteNodeArtifacts(name string) {
	ctx := context.Background()
	_ = cluster.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	_ = cluster.Client.CoordinationV1().Leases("kube-node-lease").Delete(ctx, name, metav1.DeleteOptions{})
}

// delve is a JSON-RPC client of a headless Delve (API v2: service "RPCServer").
type delve struct {
	t *testing.T
	c *rpc.Client
}

// connect dials Delve's listen address; Delve listens once it has started the debuggee.
func connect(t *testing.T, addr string) *delve {
	t.Helper()
	var conn net.Conn
	framework.Eventually(t, time.Minute, "Delve to listen on "+addr, func() (bool, string) {
		var err error
		conn, err = net.DialTimeout("tcp", addr, 5*time.Second)
		return err == nil, errString(err)
	})
	c := jsonrpc.NewClient(conn)
	t.Cleanup(func() { _ = c.Close() })
	return &delve{t: t, c: c}
}

// call calls a method that answers at once, failing the test on an error.
func (d *delve) call(method string, in, out any) {
	d.t.Helper()
	if err := d.c.Call("RPCServer."+method, in, out); err != nil {
		d.t.Fatalf("Delve %s(%+v): %v", method, in, err)
	}
}

// command runs a debugger command (continue, halt, next, …), which answers when the process stops.
func (d *delve) command(name string, timeout time.Duration) stateOut {
	d.t.Helper()
	var out stateOut
	call := d.c.Go("RPCServer.Command", debuggerCommand{Name: name}, &out, nil)
	select {
	case <-call.Done:
	case <-time.After(timeout):
		d.t.Fatalf("Delve %s: the process did not stop within %s", name, timeout)
	}
	if call.Error != nil {
		d.t.Fatalf("Delve %s: %v", name, call.Error)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The JSON of Delve's API that this test uses: the fields of service/rpc2/server.go's …In/…Out
// types and service/api/types.go, nothing more.
type (
	pidOut    struct{ Pid int }
	stateIn   struct{ NonBlocking bool }
	stateOut  struct{ State debuggerState }
	detachIn  struct{ Kill bool }
	evalScope struct {
		GoroutineID int64
		Frame       int
	}
	debuggerCommand struct {
		Name string `json:"name"`
	}
	debuggerState struct {
		Pid           int
		Running       bool
		Exited        bool    `json:"exited"`
		ExitStatus    int     `json:"exitStatus"`
		StopReason    string  `json:"stopReason"`
		CurrentThread *thread `json:"currentThread"`
	}
	thread struct {
		File        string      `json:"file"`
		Line        int         `json:"line"`
		Function    *function   `json:"function"`
		GoroutineID int64       `json:"goroutineID"`
		Breakpoint  *breakpoint `json:"breakPoint"`
	}
	function struct {
		Name      string `json:"name"`
		Optimized bool   `json:"optimized"`
	}
	breakpoint struct {
		ID           int    `json:"id"`
		FunctionName string `json:"functionName,omitempty"`
		File         string `json:"file"`
		Line         int    `json:"line"`
	}
	createBreakpointIn  struct{ Breakpoint breakpoint }
	createBreakpointOut struct{ Breakpoint breakpoint }
	clearBreakpointIn   struct {
		ID int `json:"Id"`
	}
	clearBreakpointOut struct{ Breakpoint *breakpoint }
	findLocationIn     struct {
		Scope evalScope
		Loc   string
	}
	findLocationOut struct {
		Locations []struct {
			File     string    `json:"file"`
			Line     int       `json:"line"`
			Function *function `json:"function"`
		}
	}
	loadConfig struct {
		FollowPointers     bool
		MaxVariableRecurse int
		MaxStringLen       int
		MaxArrayValues     int
		MaxStructFields    int
	}
	evalIn struct {
		Scope evalScope
		Expr  string
	}
	evalOut            struct{ Variable *variable }
	listFunctionArgsIn struct {
		Scope evalScope
		Cfg   loadConfig
	}
	listFunctionArgsOut struct{ Args []variable }
	variable            struct {
		Name       string       `json:"name"`
		Type       string       `json:"type"`
		Kind       reflect.Kind `json:"kind"`
		Value      string       `json:"value"`
		Unreadable string       `json:"unreadable"`
	}
)
