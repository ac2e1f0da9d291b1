package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// bootstrappersGroup holds every bootstrap token's identity (system:bootstrap:<token-id>).
	bootstrappersGroup = "system:bootstrappers"
	// kubeadmTokenGroup is the extra group kubeadm gives node bootstrap tokens; its RBAC binds to it.
	kubeadmTokenGroup = "system:bootstrappers:kubeadm:default-node-token"
	// nodesGroup holds every node's identity (system:node:<name>).
	nodesGroup = "system:nodes"
)

// bootstrapTokenRE is the format of a bootstrap token, <token-id>.<token-secret>
// (k8s.io/cluster-bootstrap/token/api BootstrapTokenPattern).
var bootstrapTokenRE = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)

// apiServer is a kubeconfig that loaded and whose API server answered a TLS handshake verified
// with the kubeconfig's CA.
type apiServer struct {
	path        string // the kubeconfig file
	userName    string // the kubeconfig's current user entry, for `kubectl config set-credentials`
	config      *rest.Config
	client      kubernetes.Interface
	certSubject string // the client certificate's common name (the node kubeconfig only)
}

// identity is who the API server says a credential is.
type identity struct {
	user   string
	groups []string
}

// checkNodeKubeconfig checks --kubeconfig, if TLS bootstrap has written it. It returns the API
// server only when minikubelet would use this kubeconfig (its certificate is valid now) and the
// server was reached with the CA verified.
func checkNodeKubeconfig(ctx context.Context, cfg Config) (*apiServer, Result) {
	path := cfg.Kubeconfig
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, Result{Status: OK, Message: fmt.Sprintf("kubeconfig %s not written yet: TLS bootstrap will write it", path)}
	}
	// minikubelet bootstraps again, and overwrites the kubeconfig, when it cannot use it
	// (pkg/bootstrap LoadOrBootstrap): so these are warnings.
	bootstrapAgain := fmt.Sprintf("nothing to do if the bootstrap kubeconfig works: minikubelet will bootstrap again and overwrite %s", path)
	restCfg, userName, err := loadKubeconfig(path, cfg.Timeout)
	if err != nil {
		return nil, Result{Status: Warn, Message: fmt.Sprintf("kubeconfig %s cannot be used: %v", path, err), Fix: bootstrapAgain}
	}
	leaf, err := clientCertificate(restCfg)
	if err != nil {
		return nil, Result{Status: Warn, Message: fmt.Sprintf("kubeconfig %s: its client certificate cannot be loaded: %v", path, err), Fix: bootstrapAgain}
	}
	if now := cfg.Clock.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		return nil, Result{Status: Warn, Fix: bootstrapAgain, Message: fmt.Sprintf("kubeconfig %s: its client certificate is valid only from %s to %s",
			path, leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))}
	}
	if err := probeTLS(ctx, restCfg, cfg.Timeout); err != nil {
		caFix := fmt.Sprintf("the cluster was recreated since this node joined (it has a new CA): remove %s and %s/kubelet-client-*.pem\n"+
			"so minikubelet joins again with --bootstrap-kubeconfig", path, cfg.CertDir)
		msg, fix := explainUnreachable(restCfg.Host, path, err, caFix, cfg.Timeout)
		return nil, Result{Status: Fail, Message: "kubeconfig " + path + ": " + msg, Fix: fix}
	}
	client, err := newClient(restCfg)
	if err != nil {
		return nil, Result{Status: Fail, Message: fmt.Sprintf("kubeconfig %s: %v", path, err)}
	}
	return &apiServer{path: path, userName: userName, config: restCfg, client: client, certSubject: leaf.Subject.CommonName},
		Result{Status: OK, Message: fmt.Sprintf("kubeconfig %s: API server %s reachable, CA verifies; client certificate %s valid until %s",
			path, restCfg.Host, leaf.Subject.CommonName, leaf.NotAfter.UTC().Format(time.RFC3339))}
}

// checkBootstrapKubeconfig checks --bootstrap-kubeconfig: it loads, holds a credential, and its
// API server is reached with its CA verifying the server's certificate.
func checkBootstrapKubeconfig(ctx context.Context, cfg Config, nodeHasCert bool) (*apiServer, Result) {
	path := cfg.BootstrapKubeconfig
	if path == "" {
		if nodeHasCert {
			return nil, Result{Status: OK, Message: "no --bootstrap-kubeconfig: not needed while --kubeconfig has a working client certificate"}
		}
		return nil, Result{Status: Fail,
			Message: fmt.Sprintf("no --bootstrap-kubeconfig, and --kubeconfig %s has no usable client certificate", cfg.Kubeconfig),
			Fix: "pass --bootstrap-kubeconfig with a kubeconfig holding the API server, its CA and a bootstrap token\n" +
				"(the local control plane writes _output/cluster/bootstrap.kubeconfig)"}
	}
	restCfg, userName, err := loadKubeconfig(path, cfg.Timeout)
	if err == nil && restCfg.BearerToken == "" && restCfg.BearerTokenFile == "" && restCfg.CertFile == "" && len(restCfg.CertData) == 0 {
		err = errors.New("it has no credentials")
	}
	if err != nil {
		return nil, Result{Status: Fail, Message: fmt.Sprintf("bootstrap kubeconfig %s cannot be used: %v", path, err),
			Fix: "give a kubeconfig with server: https://…, certificate-authority-data: <the cluster CA> and a user with token: <id>.<secret>"}
	}
	if err := probeTLS(ctx, restCfg, cfg.Timeout); err != nil {
		caFix := fmt.Sprintf("put the cluster's CA into %s:\n"+
			"kubectl config set-cluster <cluster> --kubeconfig=%s --certificate-authority=<ca.crt> --embed-certs\n"+
			"(kubeadm: /etc/kubernetes/pki/ca.crt on a control-plane node). Never skip TLS verification.", path, path)
		msg, fix := explainUnreachable(restCfg.Host, path, err, caFix, cfg.Timeout)
		return nil, Result{Status: Fail, Message: "bootstrap kubeconfig " + path + ": " + msg, Fix: fix}
	}
	client, err := newClient(restCfg)
	if err != nil {
		return nil, Result{Status: Fail, Message: fmt.Sprintf("bootstrap kubeconfig %s: %v", path, err)}
	}
	return &apiServer{path: path, userName: userName, config: restCfg, client: client},
		Result{Status: OK, Message: fmt.Sprintf("bootstrap kubeconfig %s: API server %s reachable, CA verifies", path, restCfg.Host)}
}

// loadKubeconfig returns the client config of path's current context, with requests bounded by
// timeout, and its user's name. Like pkg/bootstrap, it refuses a kubeconfig that would not verify
// the server: no CA, no https, or insecure-skip-tls-verify.
func loadKubeconfig(path string, timeout time.Duration) (*rest.Config, string, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, "", err
	}
	restCfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, "", err
	}
	restCfg.Timeout = timeout
	var userName string
	if kctx := raw.Contexts[raw.CurrentContext]; kctx != nil {
		userName = kctx.AuthInfo
	}
	switch u, err := url.Parse(restCfg.Host); {
	case err != nil:
		return nil, "", fmt.Errorf("its server %q is not a URL: %w", restCfg.Host, err)
	case u.Scheme != "https":
		return nil, "", fmt.Errorf("its server %s is not https://, so nothing would verify the API server", restCfg.Host)
	case restCfg.Insecure:
		return nil, "", errors.New("it sets insecure-skip-tls-verify, and minikubelet never skips TLS verification: put the cluster CA in certificate-authority-data")
	case len(restCfg.CAData) == 0 && restCfg.CAFile == "":
		return nil, "", errors.New("it has no certificate-authority to verify the API server with")
	}
	return restCfg, userName, nil
}

// clientCertificate loads the kubeconfig's client certificate (checked against its key).
func clientCertificate(restCfg *rest.Config) (*x509.Certificate, error) {
	var pair tls.Certificate
	var err error
	switch {
	case len(restCfg.CertData) > 0:
		pair, err = tls.X509KeyPair(restCfg.CertData, restCfg.KeyData)
	case restCfg.CertFile != "":
		pair, err = tls.LoadX509KeyPair(restCfg.CertFile, restCfg.KeyFile)
	default:
		return nil, errors.New("it has no client-certificate")
	}
	if err != nil {
		return nil, err
	}
	if pair.Leaf != nil {
		return pair.Leaf, nil
	}
	return x509.ParseCertificate(pair.Certificate[0])
}

func newClient(restCfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(restCfg)
	c.UserAgent = "minikubelet-doctor"
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("create API client: %w", err)
	}
	return client, nil
}

// probeTLS opens a TLS connection to the API server with the kubeconfig's CA, and only its CA:
// the handshake fails unless that CA signed the server's certificate and the certificate names
// the server. No credential is sent.
func probeTLS(ctx context.Context, restCfg *rest.Config, timeout time.Duration) error {
	u, err := url.Parse(restCfg.Host)
	if err != nil {
		return err
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	tlsCfg, err := rest.TLSConfigFor(rest.AnonymousClientConfig(restCfg))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&tls.Dialer{Config: tlsCfg}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// explainUnreachable turns a failed TLS probe of server (from kubeconfig) into what went wrong
// and what to do. caFix is the advice for a CA that does not verify the server; it differs for
// the bootstrap kubeconfig (wrong CA copied) and the node's (the cluster was recreated).
func explainUnreachable(server, kubeconfig string, err error, caFix string, timeout time.Duration) (msg, fix string) {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		dnsErr           *net.DNSError
		netErr           net.Error
	)
	switch {
	case errors.As(err, &unknownAuthority):
		issuer := "an unknown issuer"
		if unknownAuthority.Cert != nil {
			issuer = fmt.Sprintf("%q", unknownAuthority.Cert.Issuer.String())
		}
		return fmt.Sprintf("API server %s reached, but its certificate (issued by %s) is not signed by the CA in this kubeconfig: wrong CA (%v)", server, issuer, err), caFix
	case errors.As(err, &hostname):
		return fmt.Sprintf("API server %s reached, but its certificate is not valid for this address (%v)", server, err),
			fmt.Sprintf("use a server address the API server's certificate names in %s (its subject alternative names: "+
				"openssl s_client -connect <host:port> </dev/null | openssl x509 -noout -ext subjectAltName)", kubeconfig)
	case errors.As(err, &invalid):
		return fmt.Sprintf("API server %s reached, but its certificate is not valid (%v)", server, err),
			"check this machine's clock (date -u); if the API server's certificate expired, renew it (kubeadm: kubeadm certs renew apiserver)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("API server %s refused the connection: nothing listens there, the cluster is not running", server),
			fmt.Sprintf("start the cluster (the local control plane: make cluster-up; see make cluster-status), or correct server: in %s", kubeconfig)
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("API server %s: its host name does not resolve (%v)", server, err),
			fmt.Sprintf("correct server: in %s", kubeconfig)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Sprintf("API server %s did not answer within %s", server, timeout),
			fmt.Sprintf("check server: in %s, that the API server runs, and that no firewall drops the traffic", kubeconfig)
	}
	return fmt.Sprintf("API server %s cannot be reached: %v", server, err),
		fmt.Sprintf("check server: in %s and that the API server runs", kubeconfig)
}

// checkBootstrapToken asks the API server who the bootstrap credential is (SelfSubjectReview,
// which any authenticated user may create). A bootstrap token is system:bootstrap:<id> in group
// system:bootstrappers; a 401 means the token is wrong, expired or deleted.
func checkBootstrapToken(ctx context.Context, s *apiServer) (*identity, Result) {
	token := describeToken(s.config.BearerToken)
	review, err := s.client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsUnauthorized(err):
		msg := fmt.Sprintf("bootstrap token%s in %s rejected by the API server (401 Unauthorized): it is wrong, expired or deleted", token, s.path)
		if s.config.BearerToken != "" && !bootstrapTokenRE.MatchString(s.config.BearerToken) {
			msg += "; it is not even in the bootstrap token format <6 of [a-z0-9]>.<16 of [a-z0-9]>"
		}
		return nil, Result{Status: Fail, Message: msg, Fix: newTokenFix(s.path, s.userName)}
	case err != nil:
		return nil, Result{Status: Fail, Message: fmt.Sprintf("bootstrap token%s: cannot ask the API server who it is (SelfSubjectReview): %v", token, err),
			Fix: "the API server must serve authentication.k8s.io/v1 SelfSubjectReview (Kubernetes 1.28 or newer)"}
	}
	who := &identity{user: review.Status.UserInfo.Username, groups: review.Status.UserInfo.Groups}
	if !slices.Contains(who.groups, bootstrappersGroup) {
		return who, Result{Status: Warn,
			Message: fmt.Sprintf("bootstrap kubeconfig %s authenticates as %s (groups %s), not as a bootstrap token (group %s)", s.path, who.user, strings.Join(who.groups, ","), bootstrappersGroup),
			Fix:     "give --bootstrap-kubeconfig a bootstrap token, as the kubelet's TLS bootstrap expects; kubeadm's CSR RBAC is bound to its groups\n" + newTokenFix(s.path, s.userName)}
	}
	return who, Result{Status: OK, Message: fmt.Sprintf("bootstrap token%s accepted: %s in groups %s", token, who.user, strings.Join(who.groups, ","))}
}

// describeToken names a token without its secret: " abcdef.<secret>", or "" if it is no bootstrap token.
func describeToken(token string) string {
	if m := bootstrapTokenRE.FindStringSubmatch(token); m != nil {
		return " " + m[1] + ".<secret>"
	}
	return ""
}

func newTokenFix(path, userName string) string {
	if userName == "" {
		userName = "<user>"
	}
	return "create a new bootstrap token (as a cluster admin) and put it into " + path + ":\n" +
		"kubeadm token create    (on a kubeadm control-plane node; prints <id>.<secret>), or on any cluster:\n" +
		"kubectl -n kube-system create secret generic bootstrap-token-<id> --type=bootstrap.kubernetes.io/token " +
		"--from-literal=token-id=<id> --from-literal=token-secret=<secret> --from-literal=usage-bootstrap-authentication=true " +
		"--from-literal=auth-extra-groups=" + kubeadmTokenGroup + " --from-literal=expiration=<RFC 3339 time>\n" +
		"   (<id>: 6, <secret>: 16 characters of [a-z0-9]); then:\n" +
		"kubectl config set-credentials " + userName + " --kubeconfig=" + path + " --token=<id>.<secret>"
}

// csrRule is a permission kube-controller-manager's CSR approver (pkg/controller/certificates/
// approver/sarapprove.go) or TLS bootstrap needs, and the kubeadm ClusterRoleBinding granting it.
type csrRule struct {
	subresource string // of certificatesigningrequests; "" for creating CSRs at all
	binding     string // kubeadm's ClusterRoleBinding name
	clusterRole string
	group       string // the binding's subject; "" for the bootstrap token's own group
	granted     string // what the permission gives, for the OK line
	missing     string // what breaks without it, for the FAIL line
}

// bootstrapCSRRules are checked as the bootstrap token: it must create its CSR, and the approver
// approves it only if the requester may create certificatesigningrequests/nodeclient.
var bootstrapCSRRules = []csrRule{
	{
		binding: "kubeadm:kubelet-bootstrap", clusterRole: "system:node-bootstrapper",
		granted: "TLS bootstrap can request a certificate",
		missing: "TLS bootstrap cannot even create its CSR",
	},
	{
		subresource: "nodeclient", binding: "kubeadm:node-autoapprove-bootstrap",
		clusterRole: "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
		granted:     "kube-controller-manager auto-approves the node's first CSR",
		missing:     "kube-controller-manager will not approve the node's CSR and TLS bootstrap waits until --bootstrap-timeout",
	},
}

// rotationCSRRule is checked as the node: the approver approves a renewal only if the node may
// create certificatesigningrequests/selfnodeclient.
var rotationCSRRule = csrRule{
	subresource: "selfnodeclient", binding: "kubeadm:node-autoapprove-certificate-rotation",
	clusterRole: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", group: nodesGroup,
	granted: "kube-controller-manager auto-approves the node's renewal CSRs",
	missing: "kube-controller-manager will not approve the node's renewal CSRs, and the node loses its identity when its certificate expires",
}

func (r csrRule) resource() string {
	if r.subresource == "" {
		return "certificatesigningrequests"
	}
	return "certificatesigningrequests/" + r.subresource
}

// checkCSRRule asks the API server whether who (the credential of s) may create the rule's
// resource (SelfSubjectAccessReview, which any authenticated user may create).
func checkCSRRule(ctx context.Context, s *apiServer, rule csrRule, who *identity) Result {
	review, err := s.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "create", Group: certificatesv1.GroupName, Resource: "certificatesigningrequests", Subresource: rule.subresource,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return Result{Status: Fail, Message: fmt.Sprintf("RBAC: cannot ask whether %s may create %s (SelfSubjectAccessReview): %v", who.user, rule.resource(), err)}
	}
	if review.Status.Allowed {
		return Result{Status: OK, Message: fmt.Sprintf("RBAC: %s may create %s: %s", who.user, rule.resource(), rule.granted)}
	}
	return Result{Status: Fail,
		Message: fmt.Sprintf("RBAC: %s may not create %s: %s", who.user, rule.resource(), rule.missing),
		Fix: fmt.Sprintf("as a cluster admin, bind %s as kubeadm does:\nkubectl create clusterrolebinding %s --clusterrole=%s %s",
			rule.clusterRole, rule.binding, rule.clusterRole, bindingSubject(rule, who))}
}

// bindingSubject is the kubectl flag naming who a missing ClusterRoleBinding is for: the rule's
// group, else the token's most specific bootstrappers group (kubeadm binds
// system:bootstrappers:kubeadm:default-node-token), else the user.
func bindingSubject(rule csrRule, who *identity) string {
	if rule.group != "" {
		return "--group=" + rule.group
	}
	best := ""
	for _, g := range who.groups {
		if g == bootstrappersGroup || strings.HasPrefix(g, bootstrappersGroup+":") {
			if len(g) > len(best) {
				best = g
			}
		}
	}
	if best != "" {
		return "--group=" + best
	}
	return "--user=" + who.user
}
