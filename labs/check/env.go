package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/internal/journal"
)

// fakeSandbox and fakeContainer are what the fake runtime's /state lists.
type (
	fakeSandbox   = fakeruntime.SandboxState
	fakeContainer = fakeruntime.ContainerState
)

// config says where the cluster and the node are.
type config struct {
	kubeconfig          string // an admin kubeconfig
	bootstrapKubeconfig string // the node's bootstrap kubeconfig (its token)
	rootDir             string // the node's --root-dir
	nodeName            string
	namespace           string // where the labs' pods are
	repoDir             string // the repository's top directory: lab 00 reads its files there
}

// env is what checks read through: the API server as the admin, the node's files, its fake
// runtime's admin socket and its kubelet API.
type env struct {
	cfg        config
	restConfig *rest.Config
	client     kubernetes.Interface
	loadErr    error // why there is no client; the API server check reports it
}

func newEnv(cfg config) *env {
	e := &env{cfg: cfg}
	restConfig, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		e.loadErr = err
		return e
	}
	restConfig.Timeout = 20 * time.Second
	restConfig.UserAgent = "minikubelet-lab-check"
	e.restConfig = restConfig
	e.client, e.loadErr = kubernetes.NewForConfig(restConfig)
	return e
}

// path is a file under the node's root directory.
func (e *env) path(elem ...string) string {
	return filepath.Join(append([]string{e.cfg.rootDir}, elem...)...)
}

// certDir is the node's --cert-dir as make run leaves it: <root>/pki.
func (e *env) certDir() string { return e.path("pki") }

func (e *env) node(ctx context.Context) (*corev1.Node, error) {
	return e.client.CoreV1().Nodes().Get(ctx, e.cfg.nodeName, metav1.GetOptions{})
}

// pod returns the lab pod name in the labs' namespace; nil (and no error) if it does not exist.
func (e *env) pod(ctx context.Context, name string) (*corev1.Pod, error) {
	pod, err := e.client.CoreV1().Pods(e.cfg.namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return pod, err
}

func (e *env) podRef(name string) string { return e.cfg.namespace + "/" + name }

// fakeState asks the node's built-in fake runtime what it holds (GET /state on its admin socket,
// as `minikubelet fake-runtime state` does).
func (e *env) fakeState(ctx context.Context) (fakeruntime.State, error) {
	socket := e.path("fake-runtime.sock.admin")
	st, err := fakeruntime.NewAdminClient(socket).State(ctx)
	if err != nil {
		return st, fmt.Errorf("cannot ask the fake runtime (%s): %v — is minikubelet running with the built-in fake runtime and --root-dir %s?", socket, err, e.cfg.rootDir)
	}
	return st, nil
}

// execResult is what a command run in a container through the API server printed, and how it ended.
type execResult struct {
	stdout, stderr string
	exitCode       int // -1 when the stream failed before the command ended
	err            error
}

// exec runs cmd in the pod's first container through the API server (POST pods/exec, as kubectl
// exec does): API server → kubelet API /exec → CRI Exec → the runtime's streaming server.
func (e *env) exec(ctx context.Context, pod string, stdin io.Reader, cmd ...string) execResult {
	req := e.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(e.cfg.namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	executor, err := remotecommand.NewSPDYExecutor(e.restConfig, http.MethodPost, req.URL())
	if err != nil {
		return execResult{exitCode: -1, err: err}
	}
	var stdout, stderr bytes.Buffer
	err = executor.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: &stdout, Stderr: &stderr})
	res := execResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
	var exit interface{ ExitStatus() int }
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.exitCode, res.err = exit.ExitStatus(), nil
	default:
		res.exitCode = -1
	}
	return res
}

// portForward forwards a free local port to port of the pod through the API server (POST
// pods/portforward, as kubectl port-forward does), sends payload over one connection and returns
// what came back (as many bytes as were sent).
func (e *env) portForward(ctx context.Context, pod string, port int, payload []byte) ([]byte, error) {
	transport, upgrader, err := spdy.RoundTripperFor(e.restConfig)
	if err != nil {
		return nil, err
	}
	url := e.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(e.cfg.namespace).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, err
	}
	forwarded := make(chan error, 1)
	go func() { forwarded <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-forwarded:
		return nil, fmt.Errorf("port-forward: %w", err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		return nil, fmt.Errorf("port-forward: no local port: %v", err)
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local))), 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(payload); err != nil {
		return nil, err
	}
	got := make([]byte, len(payload))
	n, err := io.ReadFull(conn, got)
	return got[:n], err
}

// journal reads the node's journal of the pod namespace/name through the kubelet API (GET
// /debug/journal?pod=…, as `minikubelet journal` does): what the kubelet did for it since it started.
func (e *env) journal(ctx context.Context, name string) ([]journal.Event, error) {
	body, err := e.kubeletGet(ctx, journal.Path+"?"+url.Values{"pod": {e.podRef(name)}}.Encode())
	if err != nil {
		return nil, fmt.Errorf("the kubelet's journal: %w", err)
	}
	return decodePage(body)
}

// decodePage is the events of a journal page as GET /debug/journal returns it.
func decodePage(body []byte) ([]journal.Event, error) {
	var page journal.Page
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("the kubelet's journal is not a journal page: %w", err)
	}
	return page.Events, nil
}

// kubeletGet GETs path on the node's kubelet API (where the Node's status says it is, as the API
// server finds it), authenticated with the admin's client certificate. The serving certificate is
// trusted if it is the node's self-signed <cert-dir>/kubelet.crt or signed by the cluster CA.
func (e *env) kubeletGet(ctx context.Context, path string) ([]byte, error) {
	node, err := e.node(ctx)
	if err != nil {
		return nil, err
	}
	host := ""
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			host = a.Address
			break
		}
	}
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if host == "" || port == 0 {
		return nil, fmt.Errorf("node %s reports no InternalIP or kubelet port in its status", node.Name)
	}
	tlsConfig, err := rest.TLSConfigFor(e.restConfig)
	if err != nil || tlsConfig == nil || tlsConfig.GetClientCertificate == nil && len(tlsConfig.Certificates) == 0 {
		return nil, fmt.Errorf("the kubeconfig %s has no client certificate to show the kubelet API (%v)", e.cfg.kubeconfig, err)
	}
	roots := x509.NewCertPool()
	if pem, err := os.ReadFile(filepath.Join(e.certDir(), "kubelet.crt")); err == nil {
		roots.AppendCertsFromPEM(pem)
	}
	if len(e.restConfig.CAData) > 0 {
		roots.AppendCertsFromPEM(e.restConfig.CAData)
	} else if pem, err := os.ReadFile(e.restConfig.CAFile); err == nil {
		roots.AppendCertsFromPEM(pem)
	}
	tlsConfig.RootCAs = roots
	tlsConfig.MinVersion = tls.VersionTLS12
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: 15 * time.Second}
	url := "https://" + net.JoinHostPort(host, strconv.Itoa(int(port))) + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}
