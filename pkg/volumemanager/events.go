package volumemanager

// Which mount failures become FailedMount Events now.

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

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
