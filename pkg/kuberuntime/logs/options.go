package logs

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Options mirror corev1.PodLogOptions as the kubelet applies them (upstream LogOptions).
type Options struct {
	// Follow keeps streaming new lines until the container has exited or the request ends.
	Follow bool
	// TailLines shows only the last n messages; nil shows all, 0 none (when not following).
	TailLines *int64
	// LimitBytes stops after this many bytes were written to the outputs; nil is unlimited.
	LimitBytes *int64
	// SinceTime skips messages that started before it; nil keeps all.
	SinceTime *time.Time
	// Timestamps prefixes each message with its RFC3339Nano timestamp and a space, as
	// `kubectl logs --timestamps` shows.
	Timestamps bool
}

// NewOptions converts the API's log options at time now (upstream
// kubeGenericRuntimeManager.ReadLogs). sinceSeconds becomes an absolute SinceTime; if sinceTime
// is set too (API validation forbids it), the later of the two wins. It copies every pointer, so
// the result does not alias apiOpts. A nil apiOpts means "all logs, no follow".
func NewOptions(apiOpts *corev1.PodLogOptions, now time.Time) Options {
	if apiOpts == nil {
		return Options{}
	}
	opts := Options{
		Follow:     apiOpts.Follow,
		TailLines:  copyInt64(apiOpts.TailLines),
		LimitBytes: copyInt64(apiOpts.LimitBytes),
		Timestamps: apiOpts.Timestamps,
	}
	var since time.Time
	if apiOpts.SinceSeconds != nil {
		since = now.Add(-time.Duration(*apiOpts.SinceSeconds) * time.Second)
	}
	if apiOpts.SinceTime != nil && apiOpts.SinceTime.After(since) {
		since = apiOpts.SinceTime.Time
	}
	if !since.IsZero() {
		opts.SinceTime = &since
	}
	return opts
}

func copyInt64(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
