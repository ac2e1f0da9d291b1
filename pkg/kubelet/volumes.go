package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/secretmanager"
	"github.com/minikubelet/minikubelet/pkg/token"
	"github.com/minikubelet/minikubelet/pkg/volume"
)

// runtimeHelper gives kuberuntime a container's env and mounts: env from Secrets, ConfigMaps,
// the downward API and the Services (service links), mounts from the volumes the projector wrote
// and the pod's managed /etc/hosts (upstream: kubelet_pods.go GenerateRunContainerOptions).
type runtimeHelper struct {
	secrets   secretmanager.Manager
	tokens    *token.Manager // service account tokens for projected volumes, through the projector
	projector *volume.Projector
	services  *services // the service links; nil: none
	hostIP    string
	// allocatable is the node's allocatable, as node status reports it: a resourceFieldRef to a
	// limit a container does not set reads it.
	allocatable   corev1.ResourceList
	clusterDomain string // the domain of a pod's FQDN in /etc/hosts (clusterDomain)
	nodeHostsFile string // the node's hosts file, the base of a host-network pod's; "" is /etc/hosts
	rootDir       string // pods/<uid>/ holds each pod's etc-hosts, containers/<name> each container's termination message

	mu       sync.Mutex
	hostDirs map[types.UID]map[string]string // volume name → host directory, per pod
	// mountBackoff is each pod's delay before its volumes are tried again after a failure.
	mountBackoff *flowcontrol.Backoff
	// failingSince is when each pod's volumes started failing (no success since); the pod is
	// absent while they are set up.
	failingSince map[types.UID]time.Time
}

// newMountBackoff is upstream's volume operation back-off (goroutinemap/exponentialbackoff):
// 0.5 s after the first failure, doubling up to 2 min 2 s. A failure that is over quickly (the
// API server's node authorizer has not yet linked a just-bound pod to the node, so its token
// request is forbidden) then costs half a second, not the pod worker's 10 s.
func newMountBackoff(clk clock.Clock) *flowcontrol.Backoff {
	return flowcontrol.NewFakeBackOff(500*time.Millisecond, 2*time.Minute+2*time.Second, clk)
}

var _ kuberuntime.OptionsGenerator = (*runtimeHelper)(nil)

// GenerateRunContainerOptions is called just before each container is created. podIP is the
// sandbox's IP; a host-network pod's IPs are the node's, as upstream's SyncPod passes them.
func (h *runtimeHelper) GenerateRunContainerOptions(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIP string) (*kuberuntime.RunContainerOptions, error) {
	hostIPs := []string{h.hostIP}
	var podIPs []string
	switch {
	case pod.Spec.HostNetwork:
		podIPs = hostIPs
	case podIP != "":
		podIPs = []string{podIP}
	}
	serviceEnv, err := h.services.env(pod)
	if err != nil {
		return nil, err
	}
	envs, err := volume.MakeEnvironment(pod, c, volume.EnvConfig{
		PodIPs:          podIPs,
		HostIPs:         hostIPs,
		NodeAllocatable: h.allocatable,
		ServiceEnv:      serviceEnv,
		GetSecret:       func(ns, name string) (*corev1.Secret, error) { return h.secrets.GetSecret(ctx, ns, name) },
		GetConfigMap:    func(ns, name string) (*corev1.ConfigMap, error) { return h.secrets.GetConfigMap(ctx, ns, name) },
	})
	if err != nil {
		return nil, err
	}
	opts := &kuberuntime.RunContainerOptions{}
	for _, e := range envs {
		opts.Envs = append(opts.Envs, kuberuntime.EnvVar{Name: e.Name, Value: e.Value})
	}
	h.mu.Lock()
	dirs := h.hostDirs[pod.UID]
	h.mu.Unlock()
	mounts, err := volume.Mounts(pod, c, dirs, volume.MountConfig{PodDir: filepath.Join(h.rootDir, "pods", string(pod.UID)), Env: envs})
	if err != nil {
		return nil, err
	}
	for _, m := range mounts {
		opts.Mounts = append(opts.Mounts, kuberuntime.Mount{ContainerPath: m.ContainerPath, HostPath: m.HostPath, ReadOnly: m.ReadOnly})
	}
	if shouldMountHostsFile(pod, c, podIPs) {
		m, err := h.hostsMount(pod, podIPs)
		if err != nil {
			return nil, err
		}
		opts.Mounts = append(opts.Mounts, m)
	}
	// The container's own directory, where kuberuntime makes its termination message file.
	if c.TerminationMessagePath != "" {
		dir := filepath.Join(h.rootDir, "pods", string(pod.UID), "containers", c.Name)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		opts.PodContainerDir = dir
	}
	return opts, nil
}

// hostsMount writes the pod's hosts file, <root>/pods/<uid>/etc-hosts, and mounts it read-write
// at /etc/hosts (upstream makeHostsMount).
func (h *runtimeHelper) hostsMount(pod *corev1.Pod, podIPs []string) (kuberuntime.Mount, error) {
	nodeHostsFile := h.nodeHostsFile
	if nodeHostsFile == "" {
		nodeHostsFile = etcHostsPath
	}
	content, err := hostsFileContent(pod, podIPs, h.clusterDomain, nodeHostsFile)
	if err != nil {
		return kuberuntime.Mount{}, err
	}
	dir := filepath.Join(h.rootDir, "pods", string(pod.UID))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return kuberuntime.Mount{}, err
	}
	path := filepath.Join(dir, "etc-hosts")
	if err := writeHostsFile(path, content); err != nil {
		return kuberuntime.Mount{}, fmt.Errorf("write the pod's hosts file: %w", err)
	}
	return kuberuntime.Mount{ContainerPath: etcHostsPath, HostPath: path}, nil
}

// setUpVolumes writes (or refreshes) the pod's projected volumes; called on every sync, so a
// changed Secret or ConfigMap, or a service account token the token manager refreshed (at 80 %
// of its TTL), reaches its files within the sync period.
// A failure returns err, retried on the pod's mount back-off (a podworkers.RetryAfterError), and
// the volumes' errors to report now as FailedMount Events (see mountErrorsToReport).
func (h *runtimeHelper) setUpVolumes(ctx context.Context, pod *corev1.Pod) (report []error, err error) {
	dirs, err := h.projector.SetUpPod(ctx, pod)
	now := h.mountBackoff.Clock.Now()
	id := string(pod.UID)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hostDirs[pod.UID] = dirs
	if err == nil {
		h.mountBackoff.Reset(id)
		delete(h.failingSince, pod.UID)
		return nil, nil
	}
	since, failing := h.failingSince[pod.UID]
	if !failing {
		since = now
		h.failingSince[pod.UID] = now
	}
	h.mountBackoff.Next(id, now)
	report = mountErrorsToReport(volumeErrors(err), since, now)
	// Nothing to report yet (the authorizer's lag): a quiet wait in the log too, not an error.
	return report, &podworkers.RetryAfterError{Err: err, After: h.mountBackoff.Get(id), Quiet: len(report) == 0}
}

// authorizerLag is how long a pod's volumes may fail because the API server has not caught up
// with the pod's binding before that is reported. The node authorizer lets a node read a Secret,
// a ConfigMap or a service account token only once its graph links the object to the node
// through a pod bound to it, and NodeRestriction checks a token's pod in its informer cache; both
// follow the binding a moment after the kubelet's watch can see it, well under a second on an
// idle control plane. 15 s covers a loaded one (the back-off tries at 0.5, 1.5, 3.5, 7.5 and
// 15.5 s); a Forbidden that lasts longer is real (RBAC, a pod bound to another node).
const authorizerLag = 15 * time.Second

// mountErrorsToReport decides which of a pod's volume errors become FailedMount Events now;
// failingSince is when its volumes started failing. Upstream's operation generator records a
// FailedMount for each failed attempt (its eventRecorderFunc), a "MountVolume.SetUp failed for
// volume …" per volume; those are its only ones, as SyncPod's "Unable to attach or mount
// volumes: …" is skipped when WaitForAttachAndMount merely timed out (after 2 min 3 s: the error
// is wait.Interrupted). Upstream's volume manager mounts a moment after the pod arrives (its
// populator and reconciler loops run every 100 ms), so it meets the API server's lag behind the
// binding less often; ours mounts in the pod's first sync and meets it on a busy node (one pod in
// 30 started at once, in test/e2e/pods). So ours keeps quiet about an error that is that lag
// (isAuthorizerLag) for authorizerLag, and reports every other error at once, as upstream.
func mountErrorsToReport(errs []error, failingSince, now time.Time) []error {
	if now.Sub(failingSince) >= authorizerLag {
		return errs
	}
	var report []error
	for _, err := range errs {
		if !isAuthorizerLag(err) {
			report = append(report, err)
		}
	}
	return report
}

// isAuthorizerLag reports whether err may only mean that the API server has not yet seen the
// pod bound to this node: Forbidden (the node authorizer's "no relationship found between node
// … and this object", NodeRestriction's "node requested token bound to a pod scheduled on a
// different node"), or the token request's pod not found. A missing Secret or ConfigMap is not.
// An aggregate (a projected volume's sources) is when all its errors are.
func isAuthorizerLag(err error) bool {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if !isAuthorizerLag(e) {
				return false
			}
		}
		return len(agg.Errors()) > 0
	}
	if apierrors.IsForbidden(err) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	kind := status.Status().Details.Kind
	return kind == "pods" || kind == "pod" // the token REST's pods.Get; NodeRestriction's lister
}

// volumeErrors splits the projector's aggregate into one error per volume, as upstream reports
// each volume's failure in its own Event.
func volumeErrors(err error) []error {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		return agg.Errors()
	}
	return []error{err}
}

// cleanupVolumes removes the directories of pods under <root>/pods that are not in keep, and
// forgets their volumes and service account tokens (upstream: the projected volume's TearDown
// calls DeleteServiceAccountToken), and every expired token. One failure does not stop the others.
func (h *runtimeHelper) cleanupVolumes(rootDir string, keep map[types.UID]bool) error {
	h.tokens.CleanupPods(keep)
	h.mu.Lock()
	for uid := range h.hostDirs {
		if !keep[uid] {
			delete(h.hostDirs, uid)
			delete(h.failingSince, uid)
			h.mountBackoff.Reset(string(uid))
		}
	}
	h.mu.Unlock()
	entries, err := os.ReadDir(filepath.Join(rootDir, "pods"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if uid := types.UID(e.Name()); !keep[uid] {
			errs = append(errs, h.projector.CleanupPod(uid))
		}
	}
	return errors.Join(errs...)
}
