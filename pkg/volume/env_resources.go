package volume

// resourceFieldRef in env: a container's requests and limits, in units of a divisor (upstream:
// pkg/kubelet/kubelet_resources.go defaultPodLimitsForDownwardAPI, kubelet_pods.go
// containerResourceRuntimeValue, pkg/api/v1/resource/helpers.go ExtractContainerResourceValue
// and MergeContainerResourceLimits).

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resourceFieldValue is the value of a resourceFieldRef of container c, as a decimal integer:
//
//	limits.cpu, requests.cpu                      cores, in units of the divisor (default 1)
//	limits.memory, requests.memory                bytes, likewise
//	limits.ephemeral-storage, requests.…          bytes
//	limits.hugepages-<size>, requests.…           bytes
//
// always rounded up (a 250m limit with divisor 1 reads 1). A limit of cpu, memory or
// ephemeral-storage that the container does not set (or sets to 0) reads the pod-level limit
// (spec.resources, PodLevelResources: cpu and memory), else the node's allocatable — so a
// container without limits learns the most it may get. containerName picks another container
// of the pod; as upstream, only regular containers get those defaults then (an init container
// named that way reads its own limits as they are).
func resourceFieldValue(fs *corev1.ResourceFieldSelector, pod *corev1.Pod, c *corev1.Container, allocatable corev1.ResourceList) (string, error) {
	defaults := podLevelLimits(pod, allocatable)
	target := c
	if fs.ContainerName != "" {
		var regular bool
		if target, regular = findContainer(pod, fs.ContainerName); target == nil {
			return "", fmt.Errorf("container %s not found", fs.ContainerName)
		}
		if !regular {
			defaults = nil
		}
	}
	divisor := fs.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, _ := strings.Cut(fs.Resource, ".")
	var list corev1.ResourceList
	switch kind {
	case "limits":
		list = withDefaultLimits(target.Resources.Limits, defaults)
	case "requests":
		list = target.Resources.Requests
	default:
		name = "" // unsupported
	}
	q := list[corev1.ResourceName(name)] // zero when not set
	switch {
	case name == string(corev1.ResourceCPU):
		return ceilDiv(q.MilliValue(), divisor.MilliValue()), nil
	case name == string(corev1.ResourceMemory), name == string(corev1.ResourceEphemeralStorage),
		strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
		return ceilDiv(q.Value(), divisor.Value()), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", fs.Resource) // upstream's spacing
}

// ceilDiv is ⌈v/d⌉ computed in float64, as upstream's convertResource*ToString.
func ceilDiv(v, d int64) string {
	return strconv.FormatInt(int64(math.Ceil(float64(v)/float64(d))), 10)
}

// podLevelLimits is the node's allocatable with the pod-level limits of cpu and memory put in
// (those the node reports at all), as upstream defaultPodLimitsForDownwardAPI.
func podLevelLimits(pod *corev1.Pod, allocatable corev1.ResourceList) corev1.ResourceList {
	if pod.Spec.Resources == nil || len(pod.Spec.Resources.Limits) == 0 {
		return allocatable
	}
	out := allocatable.DeepCopy()
	for _, rn := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := pod.Spec.Resources.Limits[rn]; ok && !q.IsZero() {
			if _, reported := out[rn]; reported {
				out[rn] = q.DeepCopy()
			}
		}
	}
	return out
}

// withDefaultLimits is limits with each of cpu, memory and ephemeral-storage that is missing or
// zero taken from defaults (hugepages never: they are never overcommitted, so always limited).
func withDefaultLimits(limits, defaults corev1.ResourceList) corev1.ResourceList {
	out := limits.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for _, rn := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := out[rn]; ok && !q.IsZero() {
			continue
		}
		if d, ok := defaults[rn]; ok {
			out[rn] = d.DeepCopy()
		}
	}
	return out
}

// findContainer finds a container of the pod by name, regular containers first; regular says
// which kind it is. nil when there is none.
func findContainer(pod *corev1.Pod, name string) (c *corev1.Container, regular bool) {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i], true
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i], false
		}
	}
	return nil, false
}
