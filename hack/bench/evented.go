package main

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/fakeruntime"
)

// The EventedPLEG rows: minikubelet measured twice, with the gate off and on. Besides what
// measure gives every side (pod startup, idle CPU), the kubelet's own counter of relists over
// the idle window, and how long a container killed behind the kubelet's back (the fake runtime's
// kill-container fault) takes to show in the API.

// eventedSide is minikubeletSide with --feature-gates EventedPLEG=true.
func eventedSide(bin, bootstrapKubeconfig string) side {
	s := minikubeletSide(bin, bootstrapKubeconfig)
	plain := s.cmd
	s.label, s.node = "minikubelet EventedPLEG", "bench-evented"
	s.cmd = func(node, dir string, port int) *exec.Cmd {
		cmd := plain(node, dir, port)
		cmd.Args = append(cmd.Args, "--feature-gates", "EventedPLEG=true")
		return cmd
	}
	return s
}

// relistCount reads kubelet_pleg_relist_duration_seconds_count from the kubelet API's /metrics,
// as the cluster admin, verifying the kubelet's self-signed certificate from its cert dir.
func relistCount(ctx context.Context, admin *rest.Config, dir string, port int) (float64, error) {
	tlsCfg, err := rest.TLSConfigFor(admin)
	if err != nil {
		return 0, err
	}
	servingPEM, err := os.ReadFile(filepath.Join(dir, "pki", "kubelet.crt"))
	if err != nil {
		return 0, err
	}
	tlsCfg.RootCAs = x509.NewCertPool()
	if !tlsCfg.RootCAs.AppendCertsFromPEM(servingPEM) {
		return 0, fmt.Errorf("no certificate in %s/pki/kubelet.crt", dir)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		if v, ok := strings.CutPrefix(scanner.Text(), "kubelet_pleg_relist_duration_seconds_count "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no kubelet_pleg_relist_duration_seconds_count in /metrics")
}

// killToAPI runs one pod on node, kills its container through the fake runtime's admin socket in
// dir, and returns how long until the API shows the container terminated or restarted.
func (b *bench) killToAPI(ctx context.Context, node, dir string) (time.Duration, error) {
	client := b.client.CoreV1()
	ns := "bench-kill-" + node
	if _, err := client.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	defer func() { _ = client.Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{}) }()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: ns}, Spec: corev1.PodSpec{NodeName: node,
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"}}}}}
	if _, err := client.Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	w, err := client.Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "victim").String()})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	deadline := time.After(2 * time.Minute)
	var killedAt time.Time
	admin := fakeruntime.NewAdminClient(filepath.Join(dir, "fake-runtime.sock.admin"))
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-deadline:
			return 0, fmt.Errorf("the killed container did not show in the API within 2 minutes")
		case e, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("the pod watch ended")
			}
			p, isPod := e.Object.(*corev1.Pod)
			if !isPod || len(p.Status.ContainerStatuses) == 0 {
				continue
			}
			cs := p.Status.ContainerStatuses[0]
			if killedAt.IsZero() {
				if cs.State.Running == nil || cs.ContainerID == "" {
					continue
				}
				_, id, _ := strings.Cut(cs.ContainerID, "://")
				killedAt = time.Now()
				if err := admin.KillContainer(ctx, id, 137); err != nil {
					return 0, fmt.Errorf("kill the container through the fake runtime's admin socket in %s: %w", dir, err)
				}
				continue
			}
			if cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil || cs.RestartCount > 0 {
				return time.Since(killedAt), nil
			}
		}
	}
}
