package eviction

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Upstream's memory ranking: pods over their request first, then lower priority, then the
// larger usage above the request; a pod without stats first of all.
func TestRankMemoryPressure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pods  []*corev1.Pod
		usage map[string]uint64 // working set by pod name; a pod left out has no stats
		want  []string
	}{
		{
			name:  "BestEffort over its (zero) request before Guaranteed within it",
			pods:  []*corev1.Pod{pod("guaranteed", 0, "500Mi", "500Mi"), pod("besteffort", 0, "", "")},
			usage: map[string]uint64{"guaranteed": 400 * mi, "besteffort": 10 * mi},
			want:  []string{"besteffort", "guaranteed"},
		},
		{
			name:  "both over their requests: lower priority first",
			pods:  []*corev1.Pod{pod("low-user", 0, "100Mi", ""), pod("high", 1000, "100Mi", ""), pod("low", -10, "100Mi", "")},
			usage: map[string]uint64{"low-user": 300 * mi, "high": 900 * mi, "low": 150 * mi},
			want:  []string{"low", "low-user", "high"},
		},
		{
			name:  "same priority, both over: the larger usage above the request first",
			pods:  []*corev1.Pod{pod("a", 0, "100Mi", ""), pod("b", 0, "", "")},
			usage: map[string]uint64{"a": 300 * mi, "b": 150 * mi},
			want:  []string{"a", "b"},
		},
		{
			name:  "within requests too: larger usage above the request (least negative) first",
			pods:  []*corev1.Pod{pod("far-below", 0, "1Gi", "1Gi"), pod("near", 0, "200Mi", "200Mi")},
			usage: map[string]uint64{"far-below": 100 * mi, "near": 190 * mi},
			want:  []string{"near", "far-below"},
		},
		{
			name:  "a pod without stats first",
			pods:  []*corev1.Pod{pod("known", 0, "", ""), pod("unknown", 1000, "1Gi", "1Gi")},
			usage: map[string]uint64{"known": 500 * mi},
			want:  []string{"unknown", "known"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stats []statsv1alpha1.PodStats
			for _, p := range tc.pods {
				if u, ok := tc.usage[p.Name]; ok {
					stats = append(stats, podStat(p, u, 0, 1))
				}
			}
			rankMemoryPressure(tc.pods, statsByUID(stats))
			if got := names(tc.pods); !slices.Equal(got, tc.want) {
				t.Errorf("ranked %v, want %v", got, tc.want)
			}
		})
	}
}

// Disk: over the ephemeral-storage request first, then priority, then usage above the request.
// PIDs: priority, then the most processes.
func TestRankDiskAndPIDPressure(t *testing.T) {
	small, big, requested := pod("small", 0, "", ""), pod("big", 0, "", ""), pod("requested", 0, "", "")
	requested.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
	stats := statsByUID([]statsv1alpha1.PodStats{podStat(small, 0, 10*mi, 50), podStat(big, 0, 500*mi, 5), podStat(requested, 0, 900*mi, 1)})
	pods := []*corev1.Pod{requested, small, big}
	rankDiskPressure(corev1.ResourceEphemeralStorage)(pods, stats)
	if got, want := names(pods), []string{"big", "small", "requested"}; !slices.Equal(got, want) {
		t.Errorf("disk ranking %v, want %v (requested uses 900Mi of its 1Gi request)", got, want)
	}
	pods = []*corev1.Pod{big, requested, small}
	rankPIDPressure(pods, stats)
	if got, want := names(pods), []string{"small", "big", "requested"}; !slices.Equal(got, want) {
		t.Errorf("PID ranking %v, want %v", got, want)
	}
}

// The message, word for word as upstream's: resource, threshold and what was left, then each
// container over its request.
func TestEvictionMessage(t *testing.T) {
	p := pod("web", 0, "100Mi", "")
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "within"})
	s := podStat(p, 300*mi, 0, 1)
	s.Containers = append(s.Containers, statsv1alpha1.ContainerStats{Name: "within", Memory: &statsv1alpha1.MemoryStats{WorkingSetBytes: new(uint64)}})
	ts := mustParse(t, map[string]string{"memory.available": "1Gi"}, nil, nil, nil)
	obs := observations{SignalMemoryAvailable: {available: 512 * mi, capacity: 2048 * mi}}
	got := evictionMessage(corev1.ResourceMemory, p, statsByUID([]statsv1alpha1.PodStats{s}), ts, obs)
	want := "The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. " +
		"Container app was using 300Mi, request is 100Mi, has larger consumption of memory. "
	if got != want {
		t.Errorf("message\n%q, want\n%q", got, want)
	}
	pct := mustParse(t, map[string]string{"memory.available": "50%"}, nil, nil, nil)
	if got := evictionMessage(corev1.ResourceMemory, pod("nostats", 0, "", ""), statsByUID(nil), pct, obs); got !=
		"The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. " {
		t.Errorf("message of a percentage threshold and a pod without stats: %q", got)
	}
}

// The local storage limits, in upstream's order, with upstream's messages.
func TestStorageLimitExceeded(t *testing.T) {
	limited := func(limit string) *corev1.Pod {
		p := pod("p", 0, "", "")
		p.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse(limit)
		return p
	}
	withDir := pod("d", 0, "", "")
	withDir.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: resource.NewQuantity(mi, resource.BinarySI)}}}}
	dirStats := podStat(withDir, 0, 0, 1)
	dirStats.VolumeStats = []statsv1alpha1.VolumeStats{{Name: "scratch", FsStats: statsv1alpha1.FsStats{UsedBytes: new(uint64)}}}
	*dirStats.VolumeStats[0].UsedBytes = 2 * mi
	containerOnly := podStat(limited("5Mi"), 0, 10*mi, 1)
	containerOnly.EphemeralStorage = nil // no pod figure: only the container's is over

	for _, tc := range []struct {
		name        string
		pod         *corev1.Pod
		stats       statsv1alpha1.PodStats
		wantSignal  string
		wantMessage string
	}{
		{"within", limited("5Mi"), podStat(limited("5Mi"), 0, 4*mi, 1), "", ""},
		{"pod over the containers' limits", limited("5Mi"), podStat(limited("5Mi"), 0, 10*mi, 1), signalEphemeralPodFsLimit,
			"Pod ephemeral local storage usage exceeds the total limit of containers 5Mi. "},
		{"container over its limit", limited("5Mi"), containerOnly, signalEphemeralContainerFsLimit,
			`Container app exceeded its local ephemeral storage limit "5Mi". `},
		{"emptyDir over its sizeLimit", withDir, dirStats, signalEmptyDirFsLimit, `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `},
		{"no limit", pod("n", 0, "", ""), podStat(pod("n", 0, "", ""), 0, 10<<30, 1), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			signal, msg := storageLimitExceeded(tc.pod, tc.stats)
			if signal != tc.wantSignal || msg != tc.wantMessage {
				t.Errorf("got %q %q, want %q %q", signal, msg, tc.wantSignal, tc.wantMessage)
			}
		})
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
