package cm

// Node allocatable: how much of the node's capacity pods may request (upstream:
// pkg/kubelet/cm/node_container_manager_linux.go GetNodeAllocatableReservation and
// validateNodeAllocatable, pkg/kubelet/cm/helpers.go hardEvictionReservation,
// cmd/kubelet/app/server.go parseResourceList, pkg/kubelet/eviction/helpers.go
// parseThresholdStatement and defaults_linux.go).

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resourcePID is the "pid" resource kubeReserved and systemReserved may reserve; no node reports
// a capacity of it, so it never reduces allocatable.
const resourcePID corev1.ResourceName = "pid"

// Eviction signals whose hard thresholds are kept out of allocatable; the others are accepted
// (the eviction manager of a real kubelet acts on them) but reserve nothing.
const (
	SignalMemoryAvailable = "memory.available"
	SignalNodeFsAvailable = "nodefs.available"
)

// evictionSignals are the signals upstream's eviction manager knows.
var evictionSignals = map[string]bool{
	SignalMemoryAvailable: true, "allocatableMemory.available": true,
	SignalNodeFsAvailable: true, "nodefs.inodesFree": true,
	"imagefs.available": true, "imagefs.inodesFree": true,
	"containerfs.available": true, "containerfs.inodesFree": true,
	"pid.available": true,
}

// DefaultEvictionHard is upstream's evictionHard on Linux when the config file does not set it.
func DefaultEvictionHard() map[string]string {
	return map[string]string{
		SignalMemoryAvailable: "100Mi",
		SignalNodeFsAvailable: "10%",
		"nodefs.inodesFree":   "5%",
		"imagefs.available":   "15%",
		"imagefs.inodesFree":  "5%",
	}
}

// Threshold is one hard eviction threshold, "signal < value".
type Threshold struct {
	Signal string
	ThresholdValue
}

// ThresholdValue is a threshold's amount: a Quantity, or else a Percentage (a fraction, 0.1 for
// "10%") of the resource's capacity (upstream evictionapi.ThresholdValue). The eviction manager
// uses it too, for its thresholds and evictionMinimumReclaim.
type ThresholdValue struct {
	Quantity   *resource.Quantity
	Percentage float32
}

// Amount is v in the resource's unit, given the capacity a percentage is of (upstream
// GetThresholdQuantity). Pure.
func (v ThresholdValue) Amount(capacity int64) int64 {
	if v.Quantity != nil {
		return v.Quantity.Value()
	}
	return int64(float64(capacity) * float64(v.Percentage))
}

// IsEvictionSignal reports whether s is a signal upstream's eviction manager knows
// (memory.available, nodefs.available, …), in evictionHard, evictionSoft or elsewhere.
func IsEvictionSignal(s string) bool { return evictionSignals[s] }

// NodeConfig is what the node keeps back from its pods.
type NodeConfig struct {
	KubeReserved   corev1.ResourceList // kubeReserved: for the kubelet and the runtime
	SystemReserved corev1.ResourceList // systemReserved: for the OS
	// HardEvictionThresholds (evictionHard): memory.available and nodefs.available reserve
	// what they say; the others reserve nothing.
	HardEvictionThresholds []Threshold
}

// ParseReserved parses kubeReserved or systemReserved: cpu, memory, ephemeral-storage and pid,
// each a non-negative quantity (upstream parseResourceList). The error says which entry is
// wrong.
func ParseReserved(m map[string]string) (corev1.ResourceList, error) {
	if len(m) == 0 {
		return nil, nil
	}
	list := corev1.ResourceList{}
	for _, name := range sortedKeys(m) {
		value := m[name]
		switch corev1.ResourceName(name) {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, resourcePID:
		default:
			return nil, fmt.Errorf("cannot reserve %q: only cpu, memory, ephemeral-storage and pid can be reserved", name)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%s=%q is not a quantity (%v): write it like cpu=100m or memory=500Mi", name, value, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("%s=%q is negative: a reservation is 0 or more", name, value)
		}
		list[corev1.ResourceName(name)] = q
	}
	return list, nil
}

// ParseEvictionHard parses evictionHard, signal → "quantity" or "percent%" (upstream
// parseThresholdStatement): the signal must be one the eviction manager knows, a quantity
// positive, a percentage within 0 … 100 %; "0%" and "100%" mean no threshold. The thresholds
// come sorted by signal.
func ParseEvictionHard(m map[string]string) ([]Threshold, error) {
	var thresholds []Threshold
	for _, signal := range sortedKeys(m) {
		value := m[signal]
		if !IsEvictionSignal(signal) {
			return nil, fmt.Errorf("unsupported eviction signal %q: use one of %s", signal, strings.Join(sortedKeys(evictionSignals), ", "))
		}
		if pct, ok := strings.CutSuffix(value, "%"); ok {
			if value == "0%" || value == "100%" {
				continue
			}
			f, err := strconv.ParseFloat(pct, 32)
			if err != nil {
				return nil, fmt.Errorf("%s<%s: %q is not a percentage: write it like 10%%", signal, value, pct)
			}
			if math.IsNaN(f) || f < 0 || f > 100 {
				return nil, fmt.Errorf("%s<%s: a percentage threshold must be within 0%% and 100%%", signal, value)
			}
			thresholds = append(thresholds, Threshold{Signal: signal, ThresholdValue: ThresholdValue{Percentage: float32(f) / 100}})
			continue
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%s<%s: not a quantity (%v): write it like 100Mi, or a percentage like 10%%", signal, value, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("%s<%s: an eviction threshold must be positive", signal, value)
		}
		thresholds = append(thresholds, Threshold{Signal: signal, ThresholdValue: ThresholdValue{Quantity: &q}})
	}
	return thresholds, nil
}

// NodeAllocatableReservation is what the node keeps from its pods, per resource of capacity:
// systemReserved + kubeReserved + the hard eviction threshold of that resource (upstream
// GetNodeAllocatableReservation). Resources the node has no capacity of reserve nothing; zero
// reservations are left out. Pure.
func NodeAllocatableReservation(capacity corev1.ResourceList, cfg NodeConfig) corev1.ResourceList {
	eviction := hardEvictionReservation(cfg.HardEvictionThresholds, capacity)
	reserved := corev1.ResourceList{}
	for name := range capacity {
		total := resource.NewQuantity(0, resource.DecimalSI)
		total.Add(cfg.SystemReserved[name])
		total.Add(cfg.KubeReserved[name])
		total.Add(eviction[name])
		if !total.IsZero() {
			reserved[name] = *total
		}
	}
	return reserved
}

// hardEvictionReservation turns memory.available and nodefs.available into reservations of
// memory and ephemeral-storage; a percentage is of the capacity (ThresholdValue.Amount).
func hardEvictionReservation(thresholds []Threshold, capacity corev1.ResourceList) corev1.ResourceList {
	reserved := corev1.ResourceList{}
	for _, t := range thresholds {
		var name corev1.ResourceName
		switch t.Signal {
		case SignalMemoryAvailable:
			name = corev1.ResourceMemory
		case SignalNodeFsAvailable:
			name = corev1.ResourceEphemeralStorage
		default:
			continue
		}
		if t.Quantity != nil {
			reserved[name] = t.Quantity.DeepCopy()
			continue
		}
		c := capacity[name]
		reserved[name] = *resource.NewQuantity(t.Amount(c.Value()), resource.BinarySI)
	}
	return reserved
}

// ValidateNodeAllocatable fails when a reservation is larger than the capacity of its resource
// (upstream validateNodeAllocatable, which stops the kubelet).
func ValidateNodeAllocatable(capacity, reserved corev1.ResourceList) error {
	var problems []string
	for _, name := range sortedKeys(reserved) {
		r, c := reserved[name], capacity[name]
		if c.Cmp(r) < 0 {
			problems = append(problems, fmt.Sprintf("%s: %s reserved (kubeReserved + systemReserved + evictionHard) but the capacity is %s", name, r.String(), c.String()))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid node allocatable: %s; lower kubeReserved, systemReserved or evictionHard", strings.Join(problems, "; "))
	}
	return nil
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
