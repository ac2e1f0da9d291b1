package logs

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Upstream pins (kuberuntime_logs.go ReadLogs): sinceSeconds counts back from now, and when
// sinceTime is also set the later of the two wins; the other fields are copied.
func TestNewOptions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	earlier := now.Add(-time.Hour)
	tests := []struct {
		name string
		api  *corev1.PodLogOptions
		want Options
	}{
		{"nil: all logs", nil, Options{}},
		{"empty: all logs", &corev1.PodLogOptions{}, Options{}},
		{"copied fields",
			&corev1.PodLogOptions{Follow: true, TailLines: ptr.To[int64](5), LimitBytes: ptr.To[int64](100), Timestamps: true},
			Options{Follow: true, TailLines: ptr.To[int64](5), LimitBytes: ptr.To[int64](100), Timestamps: true}},
		{"sinceSeconds counts back from now",
			&corev1.PodLogOptions{SinceSeconds: ptr.To[int64](10)},
			Options{SinceTime: ptr.To(now.Add(-10 * time.Second))}},
		{"sinceTime",
			&corev1.PodLogOptions{SinceTime: &metav1.Time{Time: earlier}},
			Options{SinceTime: ptr.To(earlier)}},
		{"the later of sinceSeconds and sinceTime wins (sinceSeconds)",
			&corev1.PodLogOptions{SinceSeconds: ptr.To[int64](10), SinceTime: &metav1.Time{Time: earlier}},
			Options{SinceTime: ptr.To(now.Add(-10 * time.Second))}},
		{"the later of sinceSeconds and sinceTime wins (sinceTime)",
			&corev1.PodLogOptions{SinceSeconds: ptr.To[int64](7200), SinceTime: &metav1.Time{Time: earlier}},
			Options{SinceTime: ptr.To(earlier)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NewOptions(tc.api, now)
			if got.Follow != tc.want.Follow || got.Timestamps != tc.want.Timestamps ||
				!equalPtr(got.TailLines, tc.want.TailLines) || !equalPtr(got.LimitBytes, tc.want.LimitBytes) ||
				!equalTime(got.SinceTime, tc.want.SinceTime) {
				t.Errorf("NewOptions() = %s, want %s", describe(got), describe(tc.want))
			}
			if tc.api != nil && tc.api.TailLines != nil && got.TailLines == tc.api.TailLines {
				t.Errorf("NewOptions() aliases TailLines")
			}
		})
	}
}

func equalPtr(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func equalTime(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }

func describe(o Options) string {
	s := func(p *int64) any {
		if p == nil {
			return "nil"
		}
		return *p
	}
	since := "nil"
	if o.SinceTime != nil {
		since = o.SinceTime.String()
	}
	return fmt.Sprint("{Follow:", o.Follow, " TailLines:", s(o.TailLines), " LimitBytes:", s(o.LimitBytes),
		" SinceTime:", since, " Timestamps:", o.Timestamps, "}")
}
