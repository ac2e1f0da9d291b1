// Package floor is the body of two tiny programs make bench runs to show what minikubelet's RSS
// is made of: the least a process pays for talking to the API server as minikubelet does
// (clientgo/), and the same with the k8s.io/apiserver packages for the kubelet API's
// authentication and authorization linked in (apiserverauth/). Their RSS, next to minikubelet's
// and the hollow node's, says how far a target can go without dropping those libraries.
package floor

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Main uses the kubeconfig in os.Args[1] as a kubelet's clients do — a typed clientset, a list of
// Nodes, a list of Leases, a watch of the pods bound to a node — prints "ready", and holds the
// watch open until SIGINT or SIGTERM. It exits 1 with the reason if anything fails.
func Main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: %s KUBECONFIG", os.Args[0])
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Args[1])
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if _, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	if _, err := client.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("list leases: %w", err)
	}
	w, err := client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "floor").String()})
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	defer w.Stop()
	fmt.Println("ready")
	<-ctx.Done()
	return nil
}
