package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/podsource"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/token"
	"github.com/minikubelet/minikubelet/pkg/volume"
)

// fakeServices is the Service informer's view: the given Services, synced or not yet.
func fakeServices(t *testing.T, synced bool, svcs ...*corev1.Service) *services {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range svcs {
		if err := indexer.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return &services{lister: corelisters.NewServiceLister(indexer), synced: func() bool { return synced }}
}

func envMap(opts *kuberuntime.RunContainerOptions) map[string]string {
	m := map[string]string{}
	for _, e := range opts.Envs {
		m[e.Name] = e.Value
	}
	return m
}

// Upstream GenerateRunContainerOptions: env with service links, the downward API's IPs and
// default limits, and the managed /etc/hosts mount.
func TestGenerateRunContainerOptions(t *testing.T) {
	apiServer := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	nodeHosts := filepath.Join(t.TempDir(), "node-hosts")
	if err := os.WriteFile(nodeHosts, []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
		{Name: "CPU_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
		{Name: "API", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
	}
	tests := []struct {
		name        string
		hostNetwork bool
		static      bool
		synced      bool
		mounts      []corev1.VolumeMount
		podIP       string
		wantEnv     map[string]string
		wantHosts   string // the start of the hosts file; "" for no /etc/hosts mount
		wantErr     string
	}{
		{name: "pod network", synced: true, podIP: "10.88.0.7",
			wantEnv: map[string]string{"POD_IP": "10.88.0.7", "HOST_IP": "10.213.0.1", "CPU_LIMIT": "3",
				"API": "https://10.96.0.1:443", "KUBERNETES_SERVICE_HOST": "10.96.0.1"},
			wantHosts: managedHostsHeader},
		{name: "host network: the pod's IP is the node's, the node's hosts file", hostNetwork: true, synced: true,
			wantEnv:   map[string]string{"POD_IP": "10.213.0.1", "HOST_IP": "10.213.0.1"},
			wantHosts: managedHostsHeaderWithHostNetwork + "127.0.0.1 localhost\n"},
		{name: "no pod IP yet: no managed /etc/hosts", synced: true,
			wantEnv: map[string]string{"POD_IP": ""}},
		{name: "a container mounting /etc/hosts itself keeps it", synced: true, podIP: "10.88.0.7",
			mounts: []corev1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}, wantEnv: map[string]string{"POD_IP": "10.88.0.7"}},
		{name: "Services not listed yet: an API pod waits", podIP: "10.88.0.7",
			wantErr: "services have not yet been read at least once, cannot construct envvars"},
		{name: "Services not listed yet: a static pod does not wait", static: true, podIP: "10.88.0.7",
			wantEnv: map[string]string{"POD_IP": "10.88.0.7", "KUBERNETES_SERVICE_HOST": "10.96.0.1"}, wantHosts: managedHostsHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			h := &runtimeHelper{
				services: fakeServices(t, tc.synced, apiServer), hostIP: "10.213.0.1",
				allocatable:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")},
				nodeHostsFile: nodeHosts, rootDir: root, hostDirs: map[types.UID]map[string]string{},
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"},
				Spec:       corev1.PodSpec{HostNetwork: tc.hostNetwork, Containers: []corev1.Container{{Name: "app", Env: env, VolumeMounts: tc.mounts}}},
			}
			if tc.static {
				pod.Annotations = map[string]string{podsource.ConfigSourceAnnotationKey: podsource.FileSource}
			}
			opts, err := h.GenerateRunContainerOptions(context.Background(), pod, &pod.Spec.Containers[0], tc.podIP)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := envMap(opts)
			for k, v := range tc.wantEnv {
				if got[k] != v {
					t.Errorf("env %s = %q, want %q", k, got[k], v)
				}
			}
			i := slices.IndexFunc(opts.Mounts, func(m kuberuntime.Mount) bool { return m.ContainerPath == "/etc/hosts" })
			if tc.wantHosts == "" {
				if i >= 0 {
					t.Errorf("unexpected /etc/hosts mount %+v", opts.Mounts[i])
				}
				return
			}
			if i < 0 {
				t.Fatalf("no /etc/hosts mount in %+v", opts.Mounts)
			}
			m := opts.Mounts[i]
			if want := filepath.Join(root, "pods", "uid-1", "etc-hosts"); m.HostPath != want || m.ReadOnly {
				t.Errorf("mount = %+v, want %s read-write", m, want)
			}
			data, err := os.ReadFile(m.HostPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), tc.wantHosts) {
				t.Errorf("hosts file =\n%s\nwant it to start with\n%s", data, tc.wantHosts)
			}
		})
	}
}

// A volume that fails is retried on upstream's volume back-off — 0.5 s, then doubling — not the
// pod worker's 10 s; success, or the pod's cleanup, starts the back-off over.
func TestFailedVolumeRetriesOnTheMountBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	forbidden := apierrors.NewForbidden(corev1.Resource("secrets"), "creds", errors.New("no relationship found between node 'n1' and this object"))
	var getErr error = forbidden
	projector, err := volume.New(volume.Config{RootDir: t.TempDir(),
		GetSecret: func(context.Context, string, string) (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{"k": []byte("v")}}, getErr
		},
		GetConfigMap: func(context.Context, string, string) (*corev1.ConfigMap, error) { return nil, nil },
		GetServiceAccountToken: func(context.Context, string, string, *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
			return nil, errors.New("unused")
		}})
	if err != nil {
		t.Fatal(err)
	}
	h := newTestRuntimeHelper(projector, clk)
	pod := podWithVolumes(secretVolume("creds"))
	retryIn := func() time.Duration {
		t.Helper()
		var soon *podworkers.RetryAfterError
		if _, err := h.setUpVolumes(context.Background(), pod); !errors.As(err, &soon) || !strings.Contains(err.Error(), `secrets "creds" is forbidden`) {
			t.Fatalf("setUpVolumes = %v, want a RetryAfterError with the Forbidden error", err)
		}
		return soon.After
	}
	for _, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
		if got := retryIn(); got != want {
			t.Errorf("retry in %s, want %s", got, want)
		}
		clk.Step(want)
	}
	getErr = nil
	if _, err := h.setUpVolumes(context.Background(), pod); err != nil {
		t.Fatalf("setUpVolumes once the secret is readable: %v", err)
	}
	getErr = forbidden
	if got := retryIn(); got != 500*time.Millisecond {
		t.Errorf("after a success: retry in %s, want 500ms again", got)
	}
}

func newTestRuntimeHelper(projector *volume.Projector, clk *clocktesting.FakeClock) *runtimeHelper {
	return &runtimeHelper{projector: projector, tokens: &token.Manager{}, hostDirs: map[types.UID]map[string]string{},
		mountBackoff: newMountBackoff(clk), failingSince: map[types.UID]time.Time{}}
}

func secretVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}
}

func podWithVolumes(vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"}, Spec: corev1.PodSpec{Volumes: vols}}
}

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

// A pod whose token request is forbidden right after its binding gets no FailedMount while it
// is retried on the back-off; if it is still forbidden after authorizerLag, each further failed
// attempt is reported, one error per volume with upstream's message; a success starts over.
func TestSetUpVolumesReportsOnlyLastingFailures(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	tokenErr := error(errNoRelationship)
	projector, err := volume.New(volume.Config{RootDir: t.TempDir(),
		GetSecret: func(context.Context, string, string) (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{"k": []byte("v")}}, nil
		},
		GetConfigMap: func(context.Context, string, string) (*corev1.ConfigMap, error) { return nil, nil },
		GetServiceAccountToken: func(context.Context, string, string, *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
			if tokenErr != nil {
				return nil, tokenErr
			}
			return &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "t",
				ExpirationTimestamp: metav1.NewTime(clk.Now().Add(time.Hour))}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	h := newTestRuntimeHelper(projector, clk)
	tokenVol := corev1.Volume{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}
	pod := podWithVolumes(tokenVol, secretVolume("creds"))
	pod.Spec.ServiceAccountName = "default"
	attempt := func() []error {
		t.Helper()
		report, err := h.setUpVolumes(context.Background(), pod)
		var soon *podworkers.RetryAfterError
		if !errors.As(err, &soon) {
			t.Fatalf("setUpVolumes = %v, want a RetryAfterError", err)
		}
		if soon.Quiet != (len(report) == 0) { // the pod worker logs a quiet wait at V(2), not as an error
			t.Fatalf("RetryAfterError.Quiet = %v with %d errors reported", soon.Quiet, len(report))
		}
		clk.Step(soon.After)
		return report
	}
	var elapsed time.Duration
	for elapsed < authorizerLag {
		before := clk.Now()
		if report := attempt(); len(report) != 0 {
			t.Fatalf("after %s: reported %v, want nothing while the API server may lag", elapsed, report)
		}
		elapsed += clk.Since(before)
	}
	report := attempt()
	if len(report) != 1 || !strings.HasPrefix(report[0].Error(), `MountVolume.SetUp failed for volume "kube-api-access-x" : `) ||
		!strings.Contains(report[0].Error(), "no relationship found") {
		t.Fatalf("after %s: reported %v, want the token volume's error with upstream's message", elapsed, report)
	}
	tokenErr = nil
	if report, err := h.setUpVolumes(context.Background(), pod); err != nil || len(report) != 0 {
		t.Fatalf("once the token is granted: %v, %v", report, err)
	}
	tokenErr = errDifferentNode
	if report := attempt(); len(report) != 0 {
		t.Errorf("a new failure after a success: reported %v, want the lag forgiven again", report)
	}
}
