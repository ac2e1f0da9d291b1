package remote_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
)

// serveMux serves a fakeruntime.Mux with one Runtime per node over one socket until the test ends.
func serveMux(t *testing.T, nodes ...string) (*fakeruntime.Mux, context.Context) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	mux, err := fakeruntime.NewMux(filepath.Join(shortTempDir(t), "cri.sock"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() { _ = mux.Serve(ctx) })
	<-mux.Ready()
	for i, node := range nodes {
		rt, err := mux.NewRuntime(node, fakeruntime.Config{PodCIDR: []string{"127.88.1.0/24", "127.88.2.0/24"}[i]})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := rt.Serve(ctx); err != nil {
				t.Errorf("Serve %s: %v", node, err)
			}
		})
		<-rt.Ready()
	}
	return mux, ctx
}

// --nodes: every node's calls travel on one connection to one socket, and each reaches that
// node's own runtime: a sandbox made on one node is not on the other, and its event reaches only
// its node's stream.
func TestMuxRoutesEachNodeToItsRuntime(t *testing.T) {
	mux, ctx := serveMux(t, "a", "b")
	conn, err := remote.DialConn(mux.Endpoint(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	a, err := remote.ForNode(ctx, conn, mux.Endpoint(), fakeruntime.NodeMetadataKey, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := remote.ForNode(ctx, conn, mux.Endpoint(), fakeruntime.NodeMetadataKey, "b")
	if err != nil {
		t.Fatal(err)
	}
	// Node a's event stream sees node a's sandboxes only. (The stream subscribes on the server
	// some time after the call returns, so sandboxes are made until an event arrives.)
	streamCtx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	events, err := a.Runtime.GetContainerEvents(streamCtx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan *runtimeapi.ContainerEventResponse, 1)
	go func() { ev, _ := events.Recv(); first <- ev }()
	made := map[string]int{}
	newSandbox := func(c *remote.Client, ns string) {
		made[ns]++
		_, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
			Metadata: &runtimeapi.PodSandboxMetadata{Name: fmt.Sprint("p", made[ns]), Namespace: ns, Uid: fmt.Sprint(ns, made[ns])}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	var ev *runtimeapi.ContainerEventResponse
	for ev == nil {
		newSandbox(b, "on-b")
		newSandbox(a, "on-a")
		select {
		case ev = <-first:
		case <-time.After(10 * time.Millisecond):
		}
	}
	if got := ev.GetPodSandboxStatus().GetMetadata().GetNamespace(); got != "on-a" {
		t.Errorf("node a's event stream had an event of a sandbox in %q, want on-a", got)
	}
	stopStream()
	for node, want := range map[string]int{"a": made["on-a"], "b": made["on-b"]} {
		c := map[string]*remote.Client{"a": a, "b": b}[node]
		list, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(list.GetItems()); got != want {
			t.Errorf("node %s lists %d sandboxes, want %d", node, got, want)
		}
	}
	list, err := a.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sb := range list.GetItems() {
		if sb.GetMetadata().GetNamespace() != "on-a" {
			t.Errorf("node a lists a sandbox made on node b: %v", sb.GetMetadata())
		}
		st, err := a.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.GetId()})
		if err != nil || !strings.HasPrefix(st.GetStatus().GetNetwork().GetIp(), "127.88.1.") {
			t.Errorf("node a's sandbox IP = %q (%v), want one of its own range 127.88.1.0/24", st.GetStatus().GetNetwork().GetIp(), err)
		}
	}
}

// A client that names no node (crictl, or Dial) is told what the socket is, and a node that has
// no runtime here is Unavailable.
func TestMuxRefusesCallsWithoutANode(t *testing.T) {
	mux, ctx := serveMux(t, "a")
	if _, err := remote.Dial(ctx, mux.Endpoint(), 0); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), fakeruntime.NodeMetadataKey) {
		t.Errorf("Dial without a node: %v, want FailedPrecondition naming %s", err, fakeruntime.NodeMetadataKey)
	}
	conn, err := remote.DialConn(mux.Endpoint(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := remote.ForNode(ctx, conn, mux.Endpoint(), fakeruntime.NodeMetadataKey, "z"); status.Code(err) != codes.Unavailable {
		t.Errorf("an unknown node: %v, want Unavailable", err)
	}
}
