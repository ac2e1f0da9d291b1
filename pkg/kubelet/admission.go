package kubelet

// Pod admission: will this node run a pod it was given? Checked once, when the pod is added
// (upstream: pkg/kubelet/lifecycle/predicate.go predicateAdmitHandler.Admit; kubelet.go
// canAdmitPod and rejectPod).

import (
	"runtime"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/pkg/eviction"
	"github.com/minikubelet/minikubelet/pkg/qos"
)

// Reasons of a rejected pod's Failed status and of its Warning Event (upstream lifecycle
// package).
const (
	reasonPodOSSelectorNodeLabelDoesNotMatch = "PodOSSelectorNodeLabelDoesNotMatch"
	reasonPodOSNotSupported                  = "PodOSNotSupported"
)

// admission is the answer of one admission check: admit, or reject with a reason and a message.
type admission struct {
	admit           bool
	reason, message string
}

var admitted = admission{admit: true}

// admitOS is the first two checks of upstream's predicate admit handler, those no preemption can
// help, in its order and wording. nodeOS is the OS the kubelet runs on (runtime.GOOS), which is
// also the node's kubernetes.io/os label (upstream takes the label as runtime.GOOS whatever the
// Node says).
//
//  1. The pod's own kubernetes.io/os label — upstream reads pod.labels here, not
//     spec.nodeSelector (that one is the scheduler's) — names another OS:
//     PodOSSelectorNodeLabelDoesNotMatch.
//  2. spec.os.name names another OS: PodOSNotSupported.
//
// Pure.
func admitOS(pod *corev1.Pod, nodeOS string) admission {
	if os, ok := pod.Labels[corev1.LabelOSStable]; ok && os != nodeOS {
		return admission{reason: reasonPodOSSelectorNodeLabelDoesNotMatch,
			message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != nodeOS {
		return admission{reason: reasonPodOSNotSupported, message: "Failed to admit pod as the OS field doesn't match node OS"}
	}
	return admitted
}

// admit is the kubelet's admission of pod. Upstream runs its admit handlers in this order and
// stops at the first rejection: eviction, sysctls, resource allocation, then the predicate
// handler (the OS checks first, then the general predicates, the resources among them),
// AppArmor, pod features, shutdown. minikubelet has the eviction manager's (pkg/eviction: no
// BestEffort pod under MemoryPressure, no pod under other pressure; reason Evicted), the sysctls
// (sysctl.go), the OS checks, the resources (admission_resources.go) and the host ports
// (admission_ports.go), fitted among the other active pods (activePods, eviction.go).
func (k *Kubelet) admit(pod *corev1.Pod) admission {
	if k.evictionAdmit != nil {
		if ok, msg := k.evictionAdmit(pod); !ok {
			return admission{reason: eviction.Reason, message: msg}
		}
	}
	if err := checkSysctls(pod); err != nil {
		return admission{reason: reasonSysctlForbidden, message: err.Error()}
	}
	if a := admitOS(pod, runtime.GOOS); !a.admit {
		return a
	}
	k.admitMu.Lock() // beside the pod workers' resizes (pod_resize.go)
	defer k.admitMu.Unlock()
	var others []*corev1.Pod
	for _, other := range k.activePods() {
		if other.UID != pod.UID {
			others = append(others, k.allocatedPod(other)) // what it was given (pod_resize.go)
		}
	}
	if a := admitResources(pod, others, k.allocatable); !a.admit {
		return a
	}
	return admitHostPorts(pod, others)
}

// reject marks a pod the node will not run as Failed with a fresh status, and says why in a
// Warning Event, as upstream's rejectPod.
func (k *Kubelet) reject(pod *corev1.Pod, a admission) {
	k.recorder.Eventf(pod, corev1.EventTypeWarning, a.reason, "%s", a.message)
	k.statusManager.SetPodStatus(pod, corev1.PodStatus{
		QOSClass: qos.GetPodQOS(pod), // as the API server set it, or computed for a static pod
		Phase:    corev1.PodFailed,
		Reason:   a.reason,
		Message:  "Pod was rejected: " + a.message,
	})
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
