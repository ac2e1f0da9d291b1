package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	"k8s.io/utils/ptr"
)

// metrics-server on the local control plane: `cluster metrics-server` (hack/cluster/up.sh
// metrics-server) starts it as a local process beside the control plane and registers it as the
// aggregated API metrics.k8s.io/v1beta1, which `kubectl top` reads. What upstream's manifests
// (sigs.k8s.io/metrics-server manifests/base) do in a cluster, done here without pods or images:
//
//	kubectl top ──▶ kube-apiserver ──(aggregation: front-proxy-client cert, X-Remote-User)──▶
//	    metrics-server on 127.0.0.1:<port> ──(its client cert, every --metric-resolution)──▶
//	    each node's kubelet API, GET /metrics/resource, verified against the cluster CA
//
// How kube-apiserver finds it. An APIService names a Service; without --enable-aggregator-routing
// the aggregator dials the Service's cluster IP, or for an ExternalName Service the external name
// (k8s.io/apiserver/pkg/util/proxy ResolveCluster), with the APIService's port. With no kube-proxy
// there is nothing behind a cluster IP, and --enable-aggregator-routing would dial an endpoint of
// an EndpointSlice, where 127.0.0.1 is refused by validation (loopback). So the Service is of type
// ExternalName, "localhost", and the APIService's port is the port metrics-server listens on. The
// aggregator verifies metrics-server's serving certificate against the APIService's caBundle (the
// cluster CA) for the name <service>.<namespace>.svc, which the certificate carries; TLS
// verification is never switched off.
//
// Identity. Upstream runs it as the ServiceAccount kube-system/metrics-server; here it is the user
// system:metrics-server of a client certificate (as kube-scheduler is system:kube-scheduler), with
// upstream's RBAC bound to that user. It authenticates to the kubelets with the same certificate,
// and a kubelet asks the API server (SubjectAccessReview) whether it may get nodes/metrics.

const (
	msName         = "metrics-server"
	msNamespace    = metav1.NamespaceSystem
	msUser         = "system:metrics-server"
	apiServiceName = "v1beta1.metrics.k8s.io"
)

type metricsServerOptions struct {
	bin        string        // the metrics-server binary (hack/cluster/metrics-server.sh builds it)
	resolution time.Duration // --metric-resolution: how often it scrapes every node (at least 10 s)
}

// metricsServer starts metrics-server on the running control plane, or reports the one running,
// and waits until the APIService is Available. With --foreground it stays, and stops
// metrics-server and removes its APIService on SIGTERM/SIGINT (the e2e tests' way).
func (c *cluster) metricsServer(ctx context.Context, o metricsServerOptions) error {
	s, err := c.readState()
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no control plane recorded in %s: start one first (make cluster-up)", c.stateDir)
	}
	if err != nil {
		return err
	}
	if dead := c.deadComponents(s); len(dead) > 0 {
		return fmt.Errorf("the control plane in %s is not running (%v): make cluster-down && make cluster-up", c.stateDir, dead)
	}
	if !slices.Contains(s.Commands["kube-apiserver"].Args, "--proxy-client-cert-file="+c.path("pki", "front-proxy-client.crt")) {
		return fmt.Errorf("the kube-apiserver in %s was started without the aggregation layer's client certificate "+
			"(--proxy-client-cert-file; an older hack/cluster started it), so it cannot reach metrics-server: "+
			"make cluster-down && make cluster-up starts one that can (or skip metrics-server: make run METRICS_SERVER=0)", c.stateDir)
	}
	if o.resolution < 10*time.Second {
		return fmt.Errorf("--metric-resolution %s: metrics-server needs at least 10s", o.resolution)
	}
	client, agg, err := c.adminClients()
	if err != nil {
		return err
	}
	running := isOurProcess(s.PIDs[msName], s.binDirOf(msName))
	if running && c.foreground {
		return fmt.Errorf("metrics-server is already running (pid %d): stop it first (up.sh stop-component metrics-server)", s.PIDs[msName])
	}
	if !running {
		if err := c.startMetricsServer(ctx, s, client, o); err != nil {
			return err
		}
	}
	if err := applyAPIService(ctx, client, agg, s.Ports[msName], c.path("pki", "ca.crt")); err != nil {
		return err
	}
	if err := waitAPIServiceAvailable(ctx, agg, c.path("logs", msName+".log")); err != nil {
		return err
	}
	fmt.Printf("metrics-server:         https://127.0.0.1:%d (pid %d), APIService %s Available\n", s.Ports[msName], s.PIDs[msName], apiServiceName)
	if !c.foreground {
		return nil
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	fmt.Println("metrics-server is ready")
	<-sig
	// Remove the APIService first: an aggregated API that does not answer makes discovery fail
	// (kubectl warns, and the namespace controller cannot delete namespaces).
	bg := context.Background()
	_ = agg.ApiregistrationV1().APIServices().Delete(bg, apiServiceName, metav1.DeleteOptions{})
	_ = client.CoreV1().Services(msNamespace).Delete(bg, msName, metav1.DeleteOptions{})
	if err := c.stopComponent(msName); err != nil {
		return err
	}
	// Forget it, so that `status` does not report a metrics-server that was stopped on purpose.
	if s, err = c.readState(); err != nil {
		return err
	}
	delete(s.PIDs, msName)
	delete(s.Ports, msName)
	delete(s.Commands, msName)
	delete(s.BinDirs, msName)
	return c.writeState(s)
}

// startMetricsServer issues its certificate and kubeconfig, applies its RBAC, starts it and
// waits until it is live.
func (c *cluster) startMetricsServer(ctx context.Context, s *state, client kubernetes.Interface, o metricsServerOptions) error {
	p := pki{dir: c.path("pki")}
	ca, caKey, err := p.loadCA("ca")
	if err != nil {
		return err
	}
	// Serving: the name the aggregator checks, and 127.0.0.1 for a health check. Client: the user
	// the API server and the kubelets see.
	if err := p.issue(ca, caKey, leaf{name: msName, cn: msUser, usage: bothUsage,
		dns: []string{msName + "." + msNamespace + ".svc", "localhost"}, ips: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}, time.Now()); err != nil {
		return err
	}
	apiURL := fmt.Sprintf("https://127.0.0.1:%d", s.Ports["kube-apiserver"])
	if err := writeCertKubeconfig(c.path(msName+".kubeconfig"), apiURL, p, msName); err != nil {
		return err
	}
	if err := applyMetricsServerRBAC(ctx, client); err != nil {
		return err
	}
	ports, err := freePorts(msName)
	if err != nil {
		return err
	}
	port := ports[msName]
	args := []string{
		"--kubeconfig=" + c.path(msName+".kubeconfig"),
		"--authentication-kubeconfig=" + c.path(msName+".kubeconfig"),
		"--authorization-kubeconfig=" + c.path(msName+".kubeconfig"),
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + p.path(msName+".crt"), "--tls-private-key-file=" + p.path(msName+".key"),
		// The kubelets: their serving certificates are CSR-issued (serverTLSBootstrap) and signed by
		// the cluster CA; each node's kubelet API is where its status says (minikubelet --nodes
		// gives every node its own port), at its InternalIP (the serving certificate's IP SAN).
		"--kubelet-certificate-authority=" + p.path("ca.crt"),
		"--kubelet-use-node-status-port",
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--metric-resolution=" + o.resolution.String(),
		// It must be shorter than 90 % of the resolution (metrics-server checks it).
		"--kubelet-request-timeout=" + min(10*time.Second, o.resolution/2).String(),
	}
	if s.BinDirs == nil {
		s.BinDirs = map[string]string{}
	}
	s.BinDirs[msName] = filepath.Dir(o.bin)
	s.Ports[msName] = port
	exited, err := c.start(s, msName, args)
	if err != nil {
		return err
	}
	health := fmt.Sprintf("https://127.0.0.1:%d/livez", port)
	s.Commands[msName] = command{Args: args, Health: health}
	if err := c.writeState(s); err != nil {
		return err
	}
	checker, err := newHealthChecker(p)
	if err != nil {
		return err
	}
	return checker.waitHealthy(ctx, msName, health, exited, c.path("logs", msName+".log"))
}

// adminClients are clients of the API server as the cluster admin (admin.kubeconfig): the core
// API groups, and the aggregator's APIServices.
func (c *cluster) adminClients() (kubernetes.Interface, aggregator.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.path("admin.kubeconfig"))
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	agg, err := aggregator.NewForConfig(cfg)
	return client, agg, err
}

// applyMetricsServerRBAC creates upstream's RBAC (manifests/base/rbac.yaml) for the user
// system:metrics-server, or updates it.
func applyMetricsServerRBAC(ctx context.Context, client kubernetes.Interface) error {
	user := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: msUser}}
	roles := []*rbacv1.ClusterRole{
		// What it reads: the nodes and pods to scrape, and each kubelet's /metrics/resource.
		{ObjectMeta: metav1.ObjectMeta{Name: "system:metrics-server"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
		}},
		// Who may read metrics: aggregated into the view, edit and admin roles.
		{ObjectMeta: metav1.ObjectMeta{Name: "system:aggregated-metrics-reader", Labels: map[string]string{
			"rbac.authorization.k8s.io/aggregate-to-view":  "true",
			"rbac.authorization.k8s.io/aggregate-to-edit":  "true",
			"rbac.authorization.k8s.io/aggregate-to-admin": "true",
		}}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
		}},
	}
	for _, r := range roles {
		if err := createOrUpdate(r.Name, func() error {
			_, err := client.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := client.RbacV1().ClusterRoles().Update(ctx, r, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	if err := createBindings(ctx, client, []*rbacv1.ClusterRoleBinding{
		userBinding("system:metrics-server", "system:metrics-server", msUser),
		// Delegated authentication and authorization: TokenReview and SubjectAccessReview.
		userBinding("metrics-server:system:auth-delegator", "system:auth-delegator", msUser),
	}); err != nil {
		return err
	}
	// The request-header CA and allowed names, from kube-system/extension-apiserver-authentication.
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-server-auth-reader", Namespace: msNamespace}, Subjects: user,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"}}
	if _, err := client.RbacV1().RoleBindings(msNamespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create RoleBinding %s: %w", rb.Name, err)
	}
	return nil
}

// applyAPIService points v1beta1.metrics.k8s.io at metrics-server on 127.0.0.1:port through an
// ExternalName Service "localhost" (see the comment at the top of this file).
func applyAPIService(ctx context.Context, client kubernetes.Interface, agg aggregator.Interface, port int, caFile string) error {
	caBundle, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: msName, Namespace: msNamespace, Labels: map[string]string{"k8s-app": msName}},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports:        []corev1.ServicePort{{Name: "https", Port: int32(port), TargetPort: intstr.FromInt32(int32(port))}},
		},
	}
	if err := createOrUpdate("Service "+msName, func() error {
		_, err := client.CoreV1().Services(msNamespace).Create(ctx, svc, metav1.CreateOptions{})
		return err
	}, func() error {
		old, err := client.CoreV1().Services(msNamespace).Get(ctx, msName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		svc.ResourceVersion = old.ResourceVersion
		_, err = client.CoreV1().Services(msNamespace).Update(ctx, svc, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return err
	}
	api := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: apiServiceName, Labels: map[string]string{"k8s-app": msName}},
		Spec: apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: msNamespace, Name: msName, Port: ptr.To(int32(port))},
			Group:                "metrics.k8s.io",
			Version:              "v1beta1",
			CABundle:             caBundle,
			GroupPriorityMinimum: 100,
			VersionPriority:      100,
		},
	}
	return createOrUpdate("APIService "+apiServiceName, func() error {
		_, err := agg.ApiregistrationV1().APIServices().Create(ctx, api, metav1.CreateOptions{})
		return err
	}, func() error {
		old, err := agg.ApiregistrationV1().APIServices().Get(ctx, apiServiceName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		api.ResourceVersion = old.ResourceVersion
		_, err = agg.ApiregistrationV1().APIServices().Update(ctx, api, metav1.UpdateOptions{})
		return err
	})
}

// waitAPIServiceAvailable waits until kube-apiserver reports the APIService Available (it reached
// metrics-server's discovery document through the Service, with TLS verified).
func waitAPIServiceAvailable(ctx context.Context, agg aggregator.Interface, logPath string) error {
	deadline := time.Now().Add(readyTimeout)
	var last string
	for time.Now().Before(deadline) {
		api, err := agg.ApiregistrationV1().APIServices().Get(ctx, apiServiceName, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
		} else {
			for _, cond := range api.Status.Conditions {
				if cond.Type == apiregistrationv1.Available {
					if cond.Status == apiregistrationv1.ConditionTrue {
						return nil
					}
					last = fmt.Sprintf("%s: %s", cond.Reason, cond.Message)
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	printLogTail(os.Stderr, msName, logPath)
	return fmt.Errorf("APIService %s not Available after %s (last: %s); metrics-server's log is in %s", apiServiceName, readyTimeout, last, logPath)
}

// createOrUpdate creates an object, or updates it when it exists.
func createOrUpdate(what string, create, update func() error) error {
	err := create()
	if apierrors.IsAlreadyExists(err) {
		err = update()
	}
	if err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	return nil
}
