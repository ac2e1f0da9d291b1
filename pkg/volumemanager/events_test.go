package volumemanager

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The errors the API server answers while it has not caught up with a pod's binding, and others.
var (
	errNoRelationship = apierrors.NewForbidden(corev1.Resource("serviceaccounts"), "default",
		errors.New("no relationship found between node 'vm' and this object"))
	errDifferentNode = apierrors.NewForbidden(corev1.Resource("serviceaccounts"), "default",
		errors.New("node requested token bound to a pod scheduled on a different node"))
	errTokenPodNotFound = apierrors.NewNotFound(corev1.Resource("pods"), "web")
	errSecretNotFound   = apierrors.NewNotFound(corev1.Resource("secrets"), "creds")
	errDisk             = errors.New("write /var/lib/minikubelet/pods/uid-1/volumes: no space left on device")
)

// Upstream records a FailedMount for each failed attempt; ours holds back, for authorizerLag
// after the pod's volumes started failing, only what can be the API server lagging behind the
// pod's binding. A missing Secret is told at once, and a Forbidden that lasts is told.
func TestMountErrorsToReport(t *testing.T) {
	start := time.Now()
	wrap := func(err error) error { // as the projector and the token manager wrap them
		return fmt.Errorf("MountVolume.SetUp failed for volume %q : %w", "kube-api-access-x",
			fmt.Errorf("request a token for service account shop/default bound to pod %q: %w", "web", err))
	}
	for _, tc := range []struct {
		name    string
		errs    []error
		after   time.Duration
		wantLen int
	}{
		{"node authorizer not linked yet", []error{wrap(errNoRelationship)}, 0, 0},
		{"NodeRestriction cache behind the binding", []error{wrap(errDifferentNode)}, 0, 0},
		{"the token's pod not found yet", []error{wrap(errTokenPodNotFound)}, 7 * time.Second, 0},
		{"still forbidden just before the lag is over", []error{wrap(errNoRelationship)}, authorizerLag - time.Millisecond, 0},
		{"forbidden for authorizerLag: real", []error{wrap(errNoRelationship)}, authorizerLag, 1},
		{"a missing Secret at once", []error{wrap(errSecretNotFound)}, 0, 1},
		{"a local failure at once", []error{errDisk}, 0, 1},
		{"a projected volume with one source lagging and one missing", []error{fmt.Errorf("MountVolume.SetUp failed for volume %q : %w",
			"kube-api-access-x", utilerrors.NewAggregate([]error{errNoRelationship, errSecretNotFound}))}, 0, 1},
		{"a projected volume whose sources all lag", []error{fmt.Errorf("MountVolume.SetUp failed for volume %q : %w",
			"kube-api-access-x", utilerrors.NewAggregate([]error{errNoRelationship, errDifferentNode}))}, 0, 0},
		{"only the real one of two", []error{wrap(errNoRelationship), wrap(errSecretNotFound)}, time.Second, 1},
		{"both once the lag is over", []error{wrap(errNoRelationship), wrap(errSecretNotFound)}, 20 * time.Second, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mountErrorsToReport(tc.errs, start, start.Add(tc.after))
			if len(got) != tc.wantLen {
				t.Errorf("reported %v, want %d errors", got, tc.wantLen)
			}
		})
	}
}
