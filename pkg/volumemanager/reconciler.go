package volumemanager

// The reconciler (upstream: pkg/kubelet/volumemanager/reconciler/reconciler.go and the operation
// executor it drives): every 100 ms, compare the desired state of world with the actual one, and
// start one operation per volume that differs — tear down what no pod needs, set up what a pod
// needs and lacks (or must refresh). Operations run in their own goroutines, one at a time per
// volume, each failure delaying the volume's next try (0.5 s, doubling up to 2 min 2 s).

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// reconcileOnce is one turn of the reconciler (upstream reconcile): unmount first, so a volume
// a pod no longer needs goes before anything new is set up.
func (m *Manager) reconcileOnce(ctx context.Context) {
	m.unmountVolumes(ctx)
	m.mountVolumes(ctx)
}

// unmountVolumes tears down every set-up volume whose pod is no longer in the desired state.
func (m *Manager) unmountVolumes(ctx context.Context) {
	for uid, vols := range m.asw.podsWithVolumes() {
		desired, ok := m.dsw.getPod(uid)
		for name, mv := range vols {
			if ok {
				if _, still := desired.volumes[name]; still {
					continue
				}
			}
			m.startOperation(ctx, uid, name, func() error {
				if err := mv.plugin.tearDown(uid, mv.spec); err != nil {
					return fmt.Errorf("UnmountVolume.TearDown failed for volume %q pod %q : %w", mv.spec.name(), uid, err)
				}
				m.asw.markUnmounted(uid, name)
				m.cfg.Journal.Record("tearDown", mv.pod, map[string]string{"volume": name})
				klog.FromContext(ctx).V(2).Info("UnmountVolume.TearDown succeeded", "podUID", uid, "volume", name)
				return nil
			})
		}
	}
}

// mountVolumes sets up every desired volume that is not set up, or must be set up again.
func (m *Manager) mountVolumes(ctx context.Context) {
	for uid, p := range m.dsw.getPods() {
		mounted := m.asw.mountedVolumes(uid)
		for name, v := range p.volumes {
			if mv, ok := mounted[name]; ok && !mv.remountRequired {
				continue
			}
			m.startOperation(ctx, uid, name, func() error { return m.mountVolume(ctx, p.pod, v) })
		}
	}
}

// mountVolume checks a PersistentVolume's node affinity, then sets the volume up and marks it
// mounted. A failure is reported as upstream's operation generator reports it.
func (m *Manager) mountVolume(ctx context.Context, pod *corev1.Pod, v volumeToMount) error {
	if err := m.checkNodeAffinity(ctx, v.spec); err != nil {
		return m.mountFailed(pod, v, fmt.Errorf("MountVolume.NodeAffinity check failed for volume %q : %v", v.spec.name(), err))
	}
	dir, err := v.plugin.setUp(ctx, pod, v.spec)
	if err != nil {
		return m.mountFailed(pod, v, fmt.Errorf("MountVolume.SetUp failed for volume %q : %w", v.spec.name(), err)) // upstream's spacing
	}
	if _, again := m.asw.mountedVolumes(pod.UID)[v.outerName]; !again { // a remount is not news
		m.cfg.Journal.Record("setUp", journal.Pod(pod), map[string]string{"volume": v.outerName, "type": v.spec.typeName(), "dir": dir})
	}
	m.asw.markMounted(pod.UID, mountedVolume{volumeToMount: v, dir: dir, pod: journal.Pod(pod)})
	m.mu.Lock()
	delete(m.failingSince, opKey(pod.UID, v.outerName))
	m.mu.Unlock()
	return nil
}

// checkNodeAffinity refuses a PersistentVolume whose nodeAffinity does not match this node's
// labels (upstream storagehelpers.CheckNodeAffinity: a local PV lives on one node).
func (m *Manager) checkNodeAffinity(ctx context.Context, spec volumeSpec) error {
	if spec.pv == nil || spec.pv.Spec.NodeAffinity == nil || spec.pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	labels, err := m.cfg.NodeLabels(ctx)
	if err != nil {
		return err
	}
	node := &corev1.Node{}
	node.Labels = labels
	matches, err := corev1helpers.MatchNodeSelectorTerms(node, spec.pv.Spec.NodeAffinity.Required)
	if err != nil {
		return err
	}
	if !matches {
		return fmt.Errorf("no matching NodeSelectorTerms")
	}
	return nil
}

// mountFailed records a FailedMount Event for the failure, unless mountErrorsToReport holds it
// back for now, and returns it.
func (m *Manager) mountFailed(pod *corev1.Pod, v volumeToMount, err error) error {
	key := opKey(pod.UID, v.outerName)
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	since, failing := m.failingSince[key]
	if !failing {
		since = now
		m.failingSince[key] = now
	}
	m.mu.Unlock()
	for _, e := range mountErrorsToReport([]error{err}, since, now) {
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "%v", e)
	}
	return err
}

// opKey names one volume of one pod: the unit of operations and back-off.
func opKey(uid types.UID, outerName string) string { return string(uid) + "/" + outerName }

// newOperationBackoff is upstream's volume operation back-off (goroutinemap/exponentialbackoff):
// 0.5 s after the first failure, doubling up to 2 min 2 s.
func newOperationBackoff(m *Manager) *flowcontrol.Backoff {
	return flowcontrol.NewFakeBackOff(500*time.Millisecond, 2*time.Minute+2*time.Second, m.cfg.Clock)
}

// startOperation runs op in its own goroutine unless one runs for the same volume or the
// volume's back-off has not expired (upstream nestedpendingoperations).
func (m *Manager) startOperation(ctx context.Context, uid types.UID, name string, op func() error) {
	key := opKey(uid, name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending[key] || m.backoff.IsInBackOffSinceUpdate(key, m.cfg.Clock.Now()) {
		return
	}
	m.pending[key] = true
	m.ops.Add(1)
	go func() {
		defer m.ops.Done()
		err := op()
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.pending, key)
		if err == nil {
			m.backoff.Reset(key)
			return
		}
		m.backoff.Next(key, m.cfg.Clock.Now())
		klog.FromContext(ctx).V(2).Info("Volume operation failed; will retry", "podUID", uid, "volume", name, "retryIn", m.backoff.Get(key), "err", err)
	}()
}
