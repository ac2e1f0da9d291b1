package kubelet

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/pleg"
)

// noPods is a runtime with nothing in it.
type noPods struct{}

func (noPods) GetPods(context.Context, bool) ([]*kubecontainer.RunningPod, error) { return nil, nil }
func (noPods) GetPodStatus(_ context.Context, uid types.UID, _, _ string) (*kubecontainer.PodStatus, error) {
	return &kubecontainer.PodStatus{ID: uid}, nil
}

// Upstream NewMainKubelet: the generic PLEG, or with the EventedPLEG gate the evented one around it.
func TestNewPLEGFollowsTheGate(t *testing.T) {
	clk := testingclock.NewFakeClock(now)
	cri := runtimeapi.NewRuntimeServiceClient(nil) // never called here: Run is not
	for _, evented := range []bool{false, true} {
		p, err := newPLEG(plegConfig{runtime: noPods{}, cri: cri, cache: pleg.NewCache(clk), clock: clk, evented: evented})
		if err != nil {
			t.Fatal(err)
		}
		_, isEvented := p.(*pleg.EventedPLEG)
		_, isGeneric := p.(*pleg.GenericPLEG)
		if isEvented != evented || isGeneric == evented {
			t.Errorf("gate %v: PLEG is %T", evented, p)
		}
	}
}
