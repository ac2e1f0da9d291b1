package kubelet

import (
	"context"
	"errors"
	"testing"
)

// --nodes paces its start: at most StartConcurrency nodes between TLS bootstrap and
// registration; a node's turn, given back once (registered, or stopped before), lets the next in.
func TestStartTurns(t *testing.T) {
	s, err := NewShared(SharedConfig{FakeRuntimes: unusedMux{}, Nodes: 3, StartConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := s.waitTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.waitTurn(ctx); err != nil {
		t.Fatal(err)
	}
	full, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.waitTurn(full); !errors.Is(err, context.Canceled) {
		t.Fatalf("a third node while two are starting: err = %v, want to wait (here: cancelled)", err)
	}
	first.done()
	first.done() // a second done must not give back another node's turn
	if _, err := s.waitTurn(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.waitTurn(full); !errors.Is(err, context.Canceled) {
		t.Errorf("after one done and one more start: err = %v, want to wait", err)
	}
	var alone *Shared
	if tr, err := alone.waitTurn(ctx); tr != nil || err != nil {
		t.Errorf("a kubelet alone waits for no turn: %v, %v", tr, err)
	}
	tr := (*turn)(nil)
	tr.done() // nil: nothing to give back
}

// unusedMux stands in for the fake runtimes' Mux where a test never serves it.
type unusedMux struct{}

func (unusedMux) Serve(context.Context) error { return errors.New("not served") }
func (unusedMux) Ready() <-chan struct{}      { return nil }
func (unusedMux) Endpoint() string            { return "" }
func (unusedMux) NodeKey() string             { return "" }
func (unusedMux) NewRuntime(string, string) (RuntimeServer, error) {
	return nil, errors.New("no runtimes")
}
