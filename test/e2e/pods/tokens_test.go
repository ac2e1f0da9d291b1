package pods

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/volume"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// tokenReview asks the API server who the token is, for the given audiences (none: its own).
func tokenReview(t *testing.T, token string, audiences ...string) authenticationv1.TokenReviewStatus {
	t.Helper()
	tr, err := cluster.Client.AuthenticationV1().TokenReviews().Create(context.Background(), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status
}

// checkBoundToken fails unless the token authenticates as the pod's service account, bound to
// the pod (its name and UID in the extra fields) on node.
func checkBoundToken(t *testing.T, what, token string, pod *corev1.Pod, node string, audiences ...string) {
	t.Helper()
	st := tokenReview(t, token, audiences...)
	if !st.Authenticated {
		t.Fatalf("%s: TokenReview not authenticated: %s", what, st.Error)
	}
	if want := "system:serviceaccount:" + pod.Namespace + ":default"; st.User.Username != want {
		t.Errorf("%s: user %q, want %q", what, st.User.Username, want)
	}
	for key, want := range map[string]string{
		"authentication.kubernetes.io/pod-name":  pod.Name,
		"authentication.kubernetes.io/pod-uid":   string(pod.UID),
		"authentication.kubernetes.io/node-name": node,
	} {
		if got := st.User.Extra[key]; !slices.Equal(got, authenticationv1.ExtraValue{want}) {
			t.Errorf("%s: extra %s = %v, want [%s]", what, key, got, want)
		}
	}
}

// runningPodWithToken creates the pod and waits until it runs and its token file exists.
func runningPodWithToken(t *testing.T, n *node, ns, name string, spec corev1.PodSpec, vol string) (*corev1.Pod, string) {
	t.Helper()
	pod := runningPod(t, ns, name, spec)
	if vol == "" { // the admission plugin's kube-api-access-<random>
		for _, v := range pod.Spec.Volumes {
			if strings.HasPrefix(v.Name, "kube-api-access-") {
				vol = v.Name
			}
		}
	}
	file := filepath.Join(n.rootDir, "pods", string(pod.UID), "volumes", volume.ProjectedPluginDir, vol, "token")
	return pod, file
}

func readToken(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil || len(data) == 0 {
		t.Fatalf("token file %s: %q, %v", file, data, err)
	}
	return string(data)
}

// withoutRace builds ./cmd/minikubelet without the race detector, for a node that runs at -v=10:
// from -v=9 client-go's debugging round tripper traces each request's dial, and its trace
// callbacks race with the request when a dial outlives it (k8s.io/client-go@v0.36.3
// transport/round_trippers.go: ConnectDone writes reqInfo.Dialing from the dial's goroutine while
// RoundTrip reads it). That race is client-go's, in logging only; test/e2e/security does the same.
func withoutRace(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "minikubelet-norace")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/minikubelet")
	cmd.Dir = framework.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/minikubelet: %v\n%s", err, out)
	}
	return bin
}

// Upstream's token manager and projected serviceAccountToken source, against the real API server
// with its node authorizer and NodeRestriction: the admission plugin's kube-api-access volume
// gets a token of the pod's service account, bound to the pod and this node; an explicit
// projected source keeps its audience and expirationSeconds even with
// automountServiceAccountToken false; the node may not request tokens for another node's pods;
// a new token replaces the file atomically; a deleted pod's token is no longer valid; no token
// reaches the log at -v=10.
//
// The refresh at 80 % of the TTL (8 minutes for the 600 s minimum) is pinned by pkg/token's
// unit tests on a fake clock; here a restart of the kubelet (empty cache) makes it request new
// tokens, which exercises the same rewrite of the volume. (The race detector is off for this
// node, see withoutRace; pkg/token's unit tests run with -race.)
func TestServiceAccountTokens(t *testing.T) {
	bin := withoutRace(t)
	n := startNodeWith(t, bin, "e2e-pods-tokens", "-v", "10")
	ns := namespace(t)
	ctx := context.Background()
	framework.Eventually(t, time.Minute, "the namespace's default service account", func() (bool, string) {
		_, err := cluster.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, "kube-controller-manager has not created it yet"
	})

	// The default volume: the pod lets the ServiceAccount admission plugin mount kube-api-access-*.
	auto := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	auto.AutomountServiceAccountToken = nil
	autoPod, autoFile := runningPodWithToken(t, n, ns, "auto", auto, "")
	autoToken := readToken(t, autoFile)
	checkBoundToken(t, "kube-api-access token", autoToken, autoPod, n.name)
	if info, err := os.Stat(autoFile); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("token file: %v, %v; want mode 0644 (the volume's defaultMode)", info, err)
	}
	for _, f := range []string{"ca.crt", "namespace"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(autoFile), f)); err != nil {
			t.Errorf("kube-api-access volume lacks %s: %v", f, err)
		}
	}
	id := autoPod.Status.ContainerStatuses[0].ContainerID
	if out, err := execIn(t, n, id[strings.Index(id, "://")+3:], "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token"); err != nil || out != autoToken {
		t.Errorf("the container reads %q (err %v) at the service account mount, want the token", out, err)
	}

	// automountServiceAccountToken false: no kube-api-access volume; an explicit projected
	// source still gets its token, with its audience and lifetime.
	explicit := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	explicit.Volumes = []corev1.Volume{{Name: "vault-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Path: "token", Audience: "vault", ExpirationSeconds: ptr.To[int64](600)}}}}}}}
	explicit.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "vault-token", MountPath: "/var/run/vault"}}
	explicitPod, explicitFile := runningPodWithToken(t, n, ns, "explicit", explicit, "vault-token")
	if len(explicitPod.Spec.Volumes) != 1 {
		t.Errorf("automountServiceAccountToken false: volumes %v, want only vault-token", explicitPod.Spec.Volumes)
	}
	explicitToken := readToken(t, explicitFile)
	checkBoundToken(t, "audience vault token", explicitToken, explicitPod, n.name, "vault")
	if st := tokenReview(t, explicitToken); st.Authenticated {
		t.Error("the audience vault token authenticates for the API server's own audience")
	}

	// The node authorizer and NodeRestriction: as system:node:<name>, only tokens for service
	// accounts of pods on this node, bound to such a pod.
	nodeCfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(n.rootDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	asNode := kubernetes.NewForConfigOrDie(nodeCfg)
	if _, err := cluster.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "unused"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	elsewhere := podSpec("e2e-pods-tokens-elsewhere", corev1.RestartPolicyAlways, "sleep", "infinity")
	elsewhere.NodeName = "e2e-pods-tokens-elsewhere"
	otherPod := createPod(t, ns, "elsewhere", elsewhere)
	t.Cleanup(func() { // no kubelet will finish its deletion
		_ = cluster.Client.CoreV1().Pods(ns).Delete(ctx, "elsewhere", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	bound := func(p *corev1.Pod) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}}}
	}
	for what, req := range map[string]struct {
		sa string
		tr *authenticationv1.TokenRequest
	}{
		"a service account no pod on the node uses": {"unused", bound(autoPod)},
		"a pod on another node":                     {"default", bound(otherPod)},
		"no bound pod":                              {"default", &authenticationv1.TokenRequest{}},
	} {
		if _, err := asNode.CoreV1().ServiceAccounts(ns).CreateToken(ctx, req.sa, req.tr, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("as the node, a token for %s: %v, want Forbidden", what, err)
		}
	}

	// A restarted kubelet has no cached token: it requests new ones, and the next sync swaps
	// them into the volumes (the same rewrite as a refresh at 80 %).
	dataDir := func() string {
		target, err := os.Readlink(filepath.Join(filepath.Dir(autoFile), "..data"))
		if err != nil {
			t.Fatal(err)
		}
		return target
	}
	before := dataDir()
	if err := n.proc.Signal(15); err != nil {
		t.Fatal(err)
	}
	if code, err := n.proc.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("SIGTERM: exit %d, %v", code, err)
	}
	restarted := framework.StartProcess(t, bin, n.args...)
	var newToken string
	framework.Eventually(t, time.Minute, "a new token in the kube-api-access volume", func() (bool, string) {
		data, err := os.ReadFile(autoFile)
		newToken = string(data)
		return err == nil && len(data) > 0 && newToken != autoToken, "still the first token"
	})
	if after := dataDir(); after == before {
		t.Errorf("the new token did not move ..data (still %s): not written through the atomic writer", after)
	}
	checkBoundToken(t, "new kube-api-access token", newToken, autoPod, n.name)

	// A token bound to a deleted pod stops being valid, though it has not expired (after the API
	// server's token authentication cache, 10 s for a success, forgets it).
	if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, "auto", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "the pod gone from the API", func() (bool, string) {
		_, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "auto", metav1.GetOptions{})
		return apierrors.IsNotFound(err), "still there"
	})
	framework.Eventually(t, time.Minute, "the deleted pod's token rejected", func() (bool, string) {
		st := tokenReview(t, newToken)
		return !st.Authenticated, "still authenticates as " + st.User.Username
	})

	// -v=10 logs every request and response; the bodies are filtered (internal/logsafe) and the token
	// manager logs the service account and pod, never a token.
	for i, log := range []string{n.proc.Log(), restarted.Log()} {
		if !strings.Contains(log, "Requested a service account token") || !strings.Contains(log, "omitted: API bodies") {
			t.Errorf("log %d: no token request or filtered body at -v=10; is the check looking at the right log?", i)
		}
		for what, token := range map[string]string{"first kube-api-access": autoToken, "new kube-api-access": newToken, "vault": explicitToken} {
			signature := token[strings.LastIndexByte(token, '.')+1:]
			if strings.Contains(log, token) || strings.Contains(log, signature) {
				t.Errorf("log %d holds the %s token", i, what)
			}
		}
	}
}
