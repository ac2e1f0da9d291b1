package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/testing/exectest"
)

const testNode = "node-a"

// fakeHost is a Host with one pod, default/web, whose container "app" is running.
type fakeHost struct {
	pods []*corev1.Pod

	// logs is what ContainerLogs writes to stdout, then stderr.
	logStdout, logStderr string
	// release, if set, makes ContainerLogs block after writing stdout until it is closed
	// (a following `kubectl logs -f`).
	release chan struct{}

	mu      sync.Mutex
	logCall *logCall
}

type logCall struct {
	namespace, pod, container string
	opts                      *corev1.PodLogOptions
}

var _ Host = (*fakeHost)(nil)

func (h *fakeHost) GetPods() []*corev1.Pod { return h.pods }

func (h *fakeHost) ResolveContainer(namespace, podName string, podUID types.UID, container string) (string, string, error) {
	if namespace != "default" || podName != "web" || container != "app" || (podUID != "" && podUID != "uid-1") {
		return "", "", apierrors.NewNotFound(corev1.Resource("pods"), namespace+"/"+podName)
	}
	return "ctr-app", "sandbox-web", nil
}

func (h *fakeHost) ResolvePodSandbox(namespace, podName string, podUID types.UID) (string, error) {
	if namespace != "default" || podName != "web" || (podUID != "" && podUID != "uid-1") {
		return "", apierrors.NewNotFound(corev1.Resource("pods"), namespace+"/"+podName)
	}
	return "sandbox-web", nil
}

func (h *fakeHost) ContainerLogs(ctx context.Context, namespace, podName, container string, opts *corev1.PodLogOptions, stdout, stderr io.Writer) error {
	h.mu.Lock()
	h.logCall = &logCall{namespace: namespace, pod: podName, container: container, opts: opts}
	h.mu.Unlock()
	if podName != "web" {
		return apierrors.NewNotFound(corev1.Resource("pods"), podName)
	}
	if _, err := io.WriteString(stdout, h.logStdout); err != nil {
		return err
	}
	if h.release != nil {
		select {
		case <-h.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	_, err := io.WriteString(stderr, h.logStderr)
	return err
}

func (h *fakeHost) lastLogCall() *logCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logCall
}

// fakeStreaming is the CRI runtime: exectest.Runtime answers Exec, Attach and PortForward with
// streaming URLs under its URL and records the requests; ExecSync answers syncResp.
type fakeStreaming struct {
	exectest.Runtime

	mu       sync.Mutex
	syncResp *runtimeapi.ExecSyncResponse
	syncReqs []*runtimeapi.ExecSyncRequest
}

var _ Streaming = (*fakeStreaming)(nil)

func (f *fakeStreaming) ExecSync(_ context.Context, in *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncReqs = append(f.syncReqs, in)
	return f.syncResp, nil
}

// testPod is the pod the fake host runs.
func testPod() *corev1.Pod {
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name, pod.UID = "default", "web", "uid-1"
	pod.Spec.NodeName = testNode
	pod.Spec.Containers = []corev1.Container{{Name: "app", Image: "nginx"}}
	return pod
}

// openConfig is a Config that lets every request in (anonymous, allow-all), for handler tests
// that are not about authentication.
func openConfig(t *testing.T, host Host, streaming Streaming) Config {
	t.Helper()
	return Config{
		NodeName:  testNode,
		CertDir:   t.TempDir(),
		NodeIPs:   []net.IP{net.ParseIP("127.0.0.1")},
		Anonymous: true,
		Host:      host,
		Streaming: streaming,
	}
}

// testCA is a certificate authority made for one test.
type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// clientCert issues a client certificate for user (CN) and groups (O).
func (ca *testCA) clientCert(t *testing.T, user string, groups ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func mustReadAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(fmt.Errorf("read body: %w", err))
	}
	return string(b)
}

// fakeReviewAPI is the slice of a kube-apiserver the delegating authenticator and authorizer
// call: POST tokenreviews and subjectaccessreviews. (client-go's fake clientset cannot stand in:
// k8s.io/apiserver's webhook clients post through AuthenticationV1().RESTClient() and
// AuthorizationV1().RESTClient(), which the fake clientset leaves nil, so its reactors are never
// reached.) review fills in the status of each review it is sent.
type fakeReviewAPI struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
	sars   []authorizationv1.SubjectAccessReviewSpec
}

func newFakeReviewAPI(t *testing.T, authenticate func(token string) *authenticationv1.UserInfo, allow func(spec authorizationv1.SubjectAccessReviewSpec) bool) (*fakeReviewAPI, kubernetes.Interface) {
	t.Helper()
	api := &fakeReviewAPI{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /apis/authentication.k8s.io/v1/tokenreviews", func(w http.ResponseWriter, r *http.Request) {
		var tr authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		api.mu.Lock()
		api.tokens = append(api.tokens, tr.Spec.Token)
		api.mu.Unlock()
		if u := authenticate(tr.Spec.Token); u != nil {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: *u}
		}
		writeTestJSON(w, &tr)
	})
	mux.HandleFunc("POST /apis/authorization.k8s.io/v1/subjectaccessreviews", func(w http.ResponseWriter, r *http.Request) {
		var sar authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		api.mu.Lock()
		api.sars = append(api.sars, sar.Spec)
		api.mu.Unlock()
		sar.Status.Allowed = allow(sar.Spec)
		writeTestJSON(w, &sar)
	})
	api.Server = httptest.NewServer(mux)
	t.Cleanup(api.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return api, client
}

func (api *fakeReviewAPI) sentTokens() []string {
	api.mu.Lock()
	defer api.mu.Unlock()
	return append([]string(nil), api.tokens...)
}

func (api *fakeReviewAPI) sentSARs() []authorizationv1.SubjectAccessReviewSpec {
	api.mu.Lock()
	defer api.mu.Unlock()
	return append([]authorizationv1.SubjectAccessReviewSpec(nil), api.sars...)
}

func writeTestJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
