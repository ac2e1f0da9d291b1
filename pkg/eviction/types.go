package eviction

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// Signal is what a threshold watches, as upstream names it in evictionHard and evictionSoft.
type Signal string

// The signals (upstream pkg/kubelet/eviction/api/types.go). Each is "how much is left":
// a threshold is met when the signal falls below it.
const (
	SignalMemoryAvailable       Signal = "memory.available"   // node memory: capacity − working set
	SignalNodeFsAvailable       Signal = "nodefs.available"   // bytes free on the kubelet's filesystem
	SignalNodeFsInodesFree      Signal = "nodefs.inodesFree"  // inodes free on it
	SignalImageFsAvailable      Signal = "imagefs.available"  // bytes free on the runtime's image filesystem
	SignalImageFsInodesFree     Signal = "imagefs.inodesFree" // inodes free on it
	SignalPIDAvailable          Signal = "pid.available"      // max PIDs − running processes
	SignalAllocatableMemory     Signal = "allocatableMemory.available"
	SignalContainerFsAvailable  Signal = "containerfs.available"
	SignalContainerFsInodesFree Signal = "containerfs.inodesFree"
)

// Reason is the reason of an evicted pod's status and of its Event, and of a pod admission
// refuses under pressure.
const Reason = "Evicted"

// resourceInodes and resourcePids are the "resources" a disk-inode or PID threshold reclaims
// (upstream keeps them internal to the package too).
const (
	resourceInodes corev1.ResourceName = "inodes"
	resourcePids   corev1.ResourceName = "pids"
)

// signalResource is the resource each signal measures; signalCondition the node condition it
// drives. allocatableMemory.available and containerfs.* are accepted in the configuration but
// never observed (see doc.go), so they drive nothing.
var (
	signalResource = map[Signal]corev1.ResourceName{
		SignalMemoryAvailable:   corev1.ResourceMemory,
		SignalAllocatableMemory: corev1.ResourceMemory,
		SignalNodeFsAvailable:   corev1.ResourceEphemeralStorage,
		SignalImageFsAvailable:  corev1.ResourceEphemeralStorage,
		SignalNodeFsInodesFree:  resourceInodes,
		SignalImageFsInodesFree: resourceInodes,
		SignalPIDAvailable:      resourcePids,
	}
	signalCondition = map[Signal]corev1.NodeConditionType{
		SignalMemoryAvailable:   corev1.NodeMemoryPressure,
		SignalAllocatableMemory: corev1.NodeMemoryPressure,
		SignalNodeFsAvailable:   corev1.NodeDiskPressure,
		SignalNodeFsInodesFree:  corev1.NodeDiskPressure,
		SignalImageFsAvailable:  corev1.NodeDiskPressure,
		SignalImageFsInodesFree: corev1.NodeDiskPressure,
		SignalPIDAvailable:      corev1.NodePIDPressure,
	}
)

// Value is a threshold's amount: a Quantity, or else a Percentage of the resource's capacity (a
// fraction: 0.1 for "10%"); Amount reads it in the signal's unit. It is pkg/cm's, which parses
// evictionHard for node allocatable too (upstream evictionapi.ThresholdValue).
type Value = cm.ThresholdValue

// Threshold is one line of evictionHard or evictionSoft: "signal < value".
type Threshold struct {
	Signal Signal
	Value  Value
	// GracePeriod is how long a soft threshold must hold before pods are evicted for it; 0 is a
	// hard threshold (evict at once).
	GracePeriod time.Duration
	// MinReclaim (evictionMinimumReclaim), when set, keeps the threshold met until the signal is
	// back above value + MinReclaim.
	MinReclaim *Value
}

// hard reports whether t acts at once (upstream isHardEvictionThreshold).
func (t Threshold) hard() bool { return t.GracePeriod == 0 }

// key identifies a threshold: a signal has at most one hard and one soft threshold.
type key struct {
	signal Signal
	soft   bool
}

func (t Threshold) key() key { return key{t.Signal, !t.hard()} }

// SummaryProvider is where the signals come from: the kubelet's stats (pkg/stats), the same
// Summary /stats/summary serves. Summary may block on the runtime; the caller owns the result.
type SummaryProvider interface {
	Summary(ctx context.Context) (*statsv1alpha1.Summary, error)
}

// Eviction is what an evicted pod's status says besides phase Failed and reason Evicted.
type Eviction struct {
	Message string
	// Condition is the DisruptionTarget condition (reason TerminationByKubelet) a pressure
	// eviction adds; nil for a pod evicted for exceeding its own local storage limits, as upstream.
	Condition *corev1.PodCondition
}

// KillPodFunc stops pod within gracePeriod seconds and gives it the status of e (upstream
// killPodNow). It must not wait for the pod to stop: the manager waits with PodCleanedUp.
type KillPodFunc func(pod *corev1.Pod, gracePeriod int64, e Eviction) error
