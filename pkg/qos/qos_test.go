package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// rl is a resource list from "cpu", "1", "memory", "1Gi", …
func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func res(requests, limits corev1.ResourceList) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: requests, Limits: limits}
}

func podOf(containers ...corev1.ResourceRequirements) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u"}}
	for i, r := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: string(rune('a' + i)), Resources: r})
	}
	return pod
}

// Upstream ComputePodQOS, the cases of the Kubernetes docs' "Pod Quality of Service Classes".
func TestComputePodQOS(t *testing.T) {
	full := rl("cpu", "1", "memory", "1Gi")
	withInit := podOf(res(full, full))
	withInit.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: res(rl("cpu", "1"), nil)}}
	podLevel := podOf(res(nil, nil))
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: full, Limits: full}
	podLevelCPUOnly := podOf(res(full, full))
	podLevelCPUOnly.Spec.Resources = &corev1.ResourceRequirements{Limits: rl("cpu", "1")}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want corev1.PodQOSClass
	}{
		{"nothing set", podOf(res(nil, nil)), corev1.PodQOSBestEffort},
		{"zero quantities count as unset", podOf(res(rl("cpu", "0"), rl("memory", "0"))), corev1.PodQOSBestEffort},
		{"other resources do not count", podOf(res(rl("ephemeral-storage", "1Gi"), nil)), corev1.PodQOSBestEffort},
		{"limits equal requests", podOf(res(full, full)), corev1.PodQOSGuaranteed},
		{"limits only (requests default to them)", podOf(res(nil, full)), corev1.PodQOSBurstable},
		{"request below limit", podOf(res(rl("cpu", "500m", "memory", "1Gi"), full)), corev1.PodQOSBurstable},
		{"memory limit only", podOf(res(rl("memory", "1Gi"), rl("memory", "1Gi"))), corev1.PodQOSBurstable},
		{"one container without limits", podOf(res(full, full), res(nil, nil)), corev1.PodQOSBurstable},
		{"two guaranteed containers", podOf(res(full, full), res(full, full)), corev1.PodQOSGuaranteed},
		{"an init container without limits", withInit, corev1.PodQOSBurstable},
		{"pod-level resources decide", podLevel, corev1.PodQOSGuaranteed},
		{"pod-level cpu limit alone", podLevelCPUOnly, corev1.PodQOSBurstable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ComputePodQOS(tc.pod); got != tc.want {
				t.Errorf("ComputePodQOS = %s, want %s", got, tc.want)
			}
		})
	}
	// GetPodQOS trusts the class the API server stored.
	stored := podOf(res(nil, nil))
	stored.Status.QOSClass = corev1.PodQOSGuaranteed
	if got := GetPodQOS(stored); got != corev1.PodQOSGuaranteed {
		t.Errorf("GetPodQOS = %s, want status.qosClass", got)
	}
}

// Upstream GetContainerOOMScoreAdjust (pkg/kubelet/qos/policy.go), on a node of 4000000000
// bytes: -997 Guaranteed and node-critical, 1000 BestEffort, Burstable 1000 - 1000 × request /
// capacity within 3 … 999, a sidecar no higher than the smallest regular container.
func TestContainerOOMScoreAdjust(t *testing.T) {
	const capacity = 4000000000
	burstable := podOf(res(rl("memory", "1G"), nil), res(rl("memory", "3G"), nil), res(rl("cpu", "1"), nil))
	hungry := podOf(res(rl("memory", "5G"), nil))
	tiny := podOf(res(rl("memory", "1"), nil))
	critical := podOf(res(nil, nil))
	critical.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	critical.Spec.PriorityClassName = "system-node-critical"
	criticalByPriority := podOf(res(nil, nil))
	criticalByPriority.Spec.Priority = ptr.To[int32](2000001000)
	criticalByPriority.Spec.PriorityClassName = "system-node-critical"
	notCritical := podOf(res(nil, nil)) // the class name alone is not enough
	notCritical.Spec.PriorityClassName = "system-node-critical"
	withSidecar := podOf(res(rl("memory", "2G"), nil), res(rl("memory", "1G"), nil))
	always := corev1.ContainerRestartPolicyAlways
	withSidecar.Spec.InitContainers = []corev1.Container{{Name: "side", RestartPolicy: &always, Resources: res(rl("memory", "100M"), nil)}}
	podLevel := podOf(res(rl("memory", "1G"), nil), res(nil, nil))
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("memory", "3G")}
	full := rl("cpu", "1", "memory", "1Gi")
	tests := []struct {
		name      string
		pod       *corev1.Pod
		container *corev1.Container
		want      int
	}{
		{"guaranteed", podOf(res(full, full)), nil, -997},
		{"best effort", podOf(res(nil, nil)), nil, 1000},
		{"burstable, 1G of 4G", burstable, &burstable.Spec.Containers[0], 750},
		{"burstable, 3G of 4G", burstable, &burstable.Spec.Containers[1], 250},
		{"burstable, no memory request: 999, below best effort", burstable, &burstable.Spec.Containers[2], 999},
		{"burstable, more than the node: 3, above guaranteed", hungry, nil, 3},
		{"burstable, 1 byte", tiny, nil, 999},
		{"static pod of system-node-critical", critical, nil, -997},
		{"critical priority and system-node-critical", criticalByPriority, nil, -997},
		{"system-node-critical alone is not critical", notCritical, nil, 1000},
		{"sidecar: no higher than the smallest regular container", withSidecar, &withSidecar.Spec.InitContainers[0], 750},
		{"pod-level request shared out: 1G + 1G of 4G", podLevel, &podLevel.Spec.Containers[0], 500},
		{"pod-level request shared out: 0 + 1G of 4G", podLevel, &podLevel.Spec.Containers[1], 750},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.container
			if c == nil {
				c = &tc.pod.Spec.Containers[0]
			}
			if got := ContainerOOMScoreAdjust(tc.pod, c, capacity); got != tc.want {
				t.Errorf("ContainerOOMScoreAdjust = %d, want %d", got, tc.want)
			}
		})
	}
}
