package doctor

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

const goodToken = "abcdef.0123456789abcdef"

// selfSigned returns a PEM certificate and key for cn, valid from notBefore to notAfter.
func selfSigned(t *testing.T, cn string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// apiServerStub is a TLS server on loopback; ca is the PEM of the CA that verifies it.
func apiServerStub(t *testing.T) (url string, ca []byte) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }))
	t.Cleanup(srv.Close)
	return srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func writeKubeconfig(t *testing.T, server string, cluster *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cluster.Server = server
	cfg.Clusters["c"] = cluster
	cfg.AuthInfos["tls-bootstrap-token-user"] = user
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "tls-bootstrap-token-user"}
	cfg.CurrentContext = "ctx"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// The bootstrap kubeconfig check tells apart what a user can get wrong about reaching the API
// server, each with its own fix, and never accepts a kubeconfig that does not verify the server.
func TestCheckBootstrapKubeconfig(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	server, ca := apiServerStub(t)
	otherCA, _ := selfSigned(t, "some-other-ca", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	refused := "https://127.0.0.1:" + strconv.Itoa(freePort(t))
	localhost := strings.Replace(server, "127.0.0.1", "localhost", 1) // httptest's certificate names 127.0.0.1, not localhost
	token := &clientcmdapi.AuthInfo{Token: goodToken}

	tests := []struct {
		name             string
		server           string
		cluster          *clientcmdapi.Cluster
		user             *clientcmdapi.AuthInfo
		want             Status
		wantMsg, wantFix string
	}{
		{"right CA", server, &clientcmdapi.Cluster{CertificateAuthorityData: ca}, token, OK, "reachable, CA verifies", ""},
		{"wrong CA", server, &clientcmdapi.Cluster{CertificateAuthorityData: otherCA}, token, Fail, "wrong CA", "--certificate-authority="},
		{"cluster not running", refused, &clientcmdapi.Cluster{CertificateAuthorityData: ca}, token, Fail, "refused the connection", "make cluster-up"},
		{"name not in the certificate", localhost, &clientcmdapi.Cluster{CertificateAuthorityData: ca}, token, Fail, "not valid for this address", "subjectAltName"},
		{"TLS verification off", server, &clientcmdapi.Cluster{InsecureSkipTLSVerify: true}, token, Fail, "never skips TLS verification", "certificate-authority-data"},
		{"no CA", server, &clientcmdapi.Cluster{}, token, Fail, "no certificate-authority", "certificate-authority-data"},
		{"plain http", strings.Replace(server, "https", "http", 1), &clientcmdapi.Cluster{CertificateAuthorityData: ca}, token, Fail, "not https://", ""},
		{"no token", server, &clientcmdapi.Cluster{CertificateAuthorityData: ca}, &clientcmdapi.AuthInfo{}, Fail, "no credentials", "token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeKubeconfig(t, tc.server, tc.cluster, tc.user)
			s, got := checkBootstrapKubeconfig(ctx, Config{BootstrapKubeconfig: path, Kubeconfig: "/none", Timeout: 5 * time.Second}, false)
			if got.Status != tc.want || !strings.Contains(got.Message, tc.wantMsg) || !strings.Contains(got.Fix, tc.wantFix) {
				t.Errorf("got %s; want %v with %q and fix with %q", got, tc.want, tc.wantMsg, tc.wantFix)
			}
			if (s != nil) != (tc.want == OK) {
				t.Errorf("returned API server %v for a %v result", s, got.Status)
			}
		})
	}
}

// The node's kubeconfig is used only while its certificate is valid; otherwise minikubelet
// bootstraps again, so an expired certificate is a warning, and a missing kubeconfig is fine.
func TestCheckNodeKubeconfig(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	server, ca := apiServerStub(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	cert, key := selfSigned(t, "system:node:n1", now.Add(-time.Hour), now.Add(time.Hour))
	path := writeKubeconfig(t, server, &clientcmdapi.Cluster{CertificateAuthorityData: ca}, &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key})
	cfg := Config{Kubeconfig: path, CertDir: "/pki", Timeout: 5 * time.Second}

	cfg.Clock = clocktesting.NewFakePassiveClock(now)
	s, got := checkNodeKubeconfig(ctx, cfg)
	if got.Status != OK || s == nil || s.certSubject != "system:node:n1" || !strings.Contains(got.Message, "valid until 2026-11-21T13:00:00Z") {
		t.Errorf("valid certificate: %s (server %v); want OK for system:node:n1", got, s)
	}

	cfg.Clock = clocktesting.NewFakePassiveClock(now.Add(2 * time.Hour))
	if s, got := checkNodeKubeconfig(ctx, cfg); got.Status != Warn || s != nil || !strings.Contains(got.Fix, "bootstrap again") {
		t.Errorf("expired certificate: %s (server %v); want WARN, minikubelet bootstraps again", got, s)
	}

	cfg.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if s, got := checkNodeKubeconfig(ctx, cfg); got.Status != OK || s != nil || !strings.Contains(got.Message, "not written yet") {
		t.Errorf("no kubeconfig yet: %s; want OK, not written yet", got)
	}
}

func fakeAPIServer(client *fake.Clientset) *apiServer {
	return &apiServer{path: "/etc/boot.kubeconfig", userName: "tls-bootstrap-token-user", config: &rest.Config{BearerToken: goodToken}, client: client}
}

// A bootstrap token is system:bootstrap:<id> in system:bootstrappers; a 401 means it is wrong,
// expired or deleted, and the fix says how to make a new one. The secret is never printed.
func TestCheckBootstrapToken(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	review := func(user string, groups ...string) clienttesting.ReactionFunc {
		return func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{
				UserInfo: authenticationv1.UserInfo{Username: user, Groups: groups}}}, nil
		}
	}
	unauthorized := func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewUnauthorized("Unauthorized")
	}
	tests := []struct {
		name             string
		react            clienttesting.ReactionFunc
		want             Status
		wantMsg, wantFix string
	}{
		{"bootstrap token", review("system:bootstrap:abcdef", "system:bootstrappers", kubeadmTokenGroup), OK, "accepted: system:bootstrap:abcdef", ""},
		{"rejected", unauthorized, Fail, "401", "kubeadm token create"},
		{"not a bootstrap token", review("alice", "system:authenticated"), Warn, "not as a bootstrap token", "kubeadm token create"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			client.PrependReactor("create", "selfsubjectreviews", tc.react)
			_, got := checkBootstrapToken(ctx, fakeAPIServer(client))
			if got.Status != tc.want || !strings.Contains(got.Message, tc.wantMsg) || !strings.Contains(got.Fix, tc.wantFix) {
				t.Errorf("got %s; want %v with %q and fix with %q", got, tc.want, tc.wantMsg, tc.wantFix)
			}
			if strings.Contains(got.String(), "0123456789abcdef") {
				t.Errorf("the token's secret was printed: %s", got)
			}
			if got.Status == Fail && !strings.Contains(got.Fix, "kubectl config set-credentials tls-bootstrap-token-user --kubeconfig=/etc/boot.kubeconfig") {
				t.Errorf("the fix does not say how to put the new token into the kubeconfig: %s", got.Fix)
			}
		})
	}
}

// kube-controller-manager's CSR approver approves a node's first certificate only if its
// requester may create certificatesigningrequests/nodeclient (sarapprove.go). The check asks
// exactly that, and a denial names kubeadm's binding for the token's own group.
func TestCheckCSRRule(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	who := &identity{user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers", kubeadmTokenGroup, "system:authenticated"}}
	for _, allowed := range []bool{true, false} {
		t.Run(strconv.FormatBool(allowed), func(t *testing.T) {
			client := fake.NewClientset()
			var asked *authorizationv1.ResourceAttributes
			client.PrependReactor("create", "selfsubjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
				sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
				asked = sar.Spec.ResourceAttributes
				sar.Status.Allowed = allowed
				return true, sar, nil
			})
			got := checkCSRRule(ctx, fakeAPIServer(client), bootstrapCSRRules[1], who)
			want := authorizationv1.ResourceAttributes{Verb: "create", Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "nodeclient"}
			if asked == nil || *asked != want {
				t.Fatalf("asked %+v, want %+v", asked, want)
			}
			wantFix := "kubectl create clusterrolebinding kubeadm:node-autoapprove-bootstrap " +
				"--clusterrole=system:certificates.k8s.io:certificatesigningrequests:nodeclient --group=" + kubeadmTokenGroup
			switch {
			case allowed && got.Status != OK:
				t.Errorf("allowed: %s; want OK", got)
			case !allowed && (got.Status != Fail || !strings.Contains(got.Fix, wantFix)):
				t.Errorf("denied: %s; want FAIL with fix %q", got, wantFix)
			}
		})
	}
}

// The binding's subject: a fixed group (system:nodes for rotation), else the token's most
// specific bootstrappers group, else the user itself.
func TestBindingSubject(t *testing.T) {
	tokenUser := &identity{user: "system:bootstrap:abcdef", groups: []string{"system:authenticated", "system:bootstrappers", "system:bootstrappers:worker"}}
	if got := bindingSubject(rotationCSRRule, tokenUser); got != "--group=system:nodes" {
		t.Errorf("rotation rule: %s", got)
	}
	if got := bindingSubject(bootstrapCSRRules[0], tokenUser); got != "--group=system:bootstrappers:worker" {
		t.Errorf("token: %s", got)
	}
	if got := bindingSubject(bootstrapCSRRules[0], &identity{user: "alice", groups: []string{"system:authenticated"}}); got != "--user=alice" {
		t.Errorf("other user: %s", got)
	}
}
