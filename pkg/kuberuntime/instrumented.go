package kuberuntime

// Recording the CRI calls that change a pod (upstream: instrumented_services.go, which times every
// CRI call for metrics; ours writes the calls that change a pod to the journal).

import (
	"time"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// noteCRI records one CRI call of pod in the journal: its duration since start, its error, and
// the fields in kv (key, value, key, value…; empty values are left out).
func (m *Manager) noteCRI(call string, pod journal.PodRef, start time.Time, err error, kv ...string) {
	if !m.journal.Enabled() {
		return
	}
	fields := map[string]string{"duration": m.clock.Since(start).Round(time.Microsecond).String()}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			fields[kv[i]] = kv[i+1]
		}
	}
	m.journal.Record(call, pod, journal.WithError(fields, err))
}
