package doctor

import (
	"context"
	"errors"
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// maxOlderMinors is how many minor versions a kubelet may lag behind kube-apiserver (the version
// skew policy, https://kubernetes.io/releases/version-skew-policy/, since Kubernetes 1.28).
const maxOlderMinors = 3

// checkVersion reads the API server's /version through the first of servers that answers (the
// node's credential, then the bootstrap token, then anonymously) and compares it with kubelet.
func checkVersion(ctx context.Context, kubelet string, servers ...*apiServer) Result {
	apiserver, err := serverVersion(ctx, servers)
	if err != nil {
		return skipped("version skew", err.Error())
	}
	return versionSkew(kubelet, apiserver.GitVersion)
}

func serverVersion(ctx context.Context, servers []*apiServer) (*version.Info, error) {
	var clients []kubernetes.Interface
	var anonymous *rest.Config
	for _, s := range servers {
		if s == nil {
			continue
		}
		clients = append(clients, s.client)
		if anonymous == nil && s.config != nil {
			anonymous = rest.AnonymousClientConfig(s.config) // keeps its CA and its timeout
		}
	}
	if len(clients) == 0 {
		return nil, errors.New("no API server was reached")
	}
	if anonymous != nil {
		if c, err := kubernetes.NewForConfig(anonymous); err == nil {
			clients = append(clients, c)
		}
	}
	var err error
	for _, c := range clients {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var info *version.Info
		if info, err = c.Discovery().ServerVersion(); err == nil {
			return info, nil
		}
	}
	return nil, fmt.Errorf("the API server did not tell its /version: %w", err)
}

// versionSkew applies the version skew policy to a kubelet and the kube-apiserver it joins: the
// kubelet must not be newer (FAIL), and may be up to three minor versions older (else WARN).
func versionSkew(kubelet, apiserver string) Result {
	kv, kerr := utilversion.ParseGeneric(kubelet)
	av, aerr := utilversion.ParseGeneric(apiserver)
	if kerr != nil || aerr != nil {
		return Result{Status: Warn, Message: fmt.Sprintf("version skew: cannot compare kubelet %q with kube-apiserver %q", kubelet, apiserver),
			Fix: "build minikubelet with `make build` (go build records the k8s.io module versions it mirrors)"}
	}
	versions := fmt.Sprintf("kubelet %s, kube-apiserver %s", kubelet, apiserver)
	switch {
	case kv.Major() != av.Major():
		return Result{Status: Fail, Message: "version skew: " + versions + ": different major versions",
			Fix: "use a minikubelet built against the k8s.io modules of the cluster's release"}
	case kv.Minor() > av.Minor():
		return Result{Status: Fail,
			Message: fmt.Sprintf("version skew: %s: the kubelet is newer than kube-apiserver, which the version skew policy does not allow", versions),
			Fix: fmt.Sprintf("upgrade the control plane to v%d.%d or newer first (kubeadm upgrade apply), or use a minikubelet built against k8s.io modules v0.%d",
				kv.Major(), kv.Minor(), av.Minor())}
	case av.Minor()-kv.Minor() > maxOlderMinors:
		return Result{Status: Warn,
			Message: fmt.Sprintf("version skew: %s: the kubelet is %d minor versions older; the version skew policy supports %d",
				versions, av.Minor()-kv.Minor(), maxOlderMinors),
			Fix: fmt.Sprintf("use a minikubelet built against k8s.io modules v0.%d to v0.%d", av.Minor()-maxOlderMinors, av.Minor())}
	case kv.Minor() == av.Minor():
		return Result{Status: OK, Message: "version skew: " + versions + ": same minor version"}
	}
	return Result{Status: OK, Message: fmt.Sprintf("version skew: %s: the kubelet is %d minor version(s) older, within the supported %d",
		versions, av.Minor()-kv.Minor(), maxOlderMinors)}
}
