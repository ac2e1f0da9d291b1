package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The hooks feed the upstream-named metrics.
func TestHooks(t *testing.T) {
	r := New()
	r.ObserveRelist(3 * time.Millisecond)
	r.ObserveLeaseRenew(time.Millisecond, nil)
	r.ObserveLeaseRenew(time.Millisecond, errors.New("down"))
	r.CountObjectRequest("secrets", "get")
	r.CountObjectRequest("secrets", "get")
	if got := testutil.ToFloat64(r.LeaseRenewFailures); got != 1 {
		t.Errorf("lease failures = %v, want 1", got)
	}
	if got := testutil.ToFloat64(r.ObjectManagerRequests.WithLabelValues("secrets", "get")); got != 2 {
		t.Errorf("secret gets = %v, want 2", got)
	}
	families, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	all := strings.Join(names, " ")
	for _, want := range []string{"kubelet_pleg_relist_duration_seconds", "kubelet_lease_renew_failures_total", "kubelet_pod_workers", "kubelet_status_manager_entries", "go_goroutines"} {
		if !strings.Contains(all, want) {
			t.Errorf("%s not gathered: %s", want, all)
		}
	}
}
