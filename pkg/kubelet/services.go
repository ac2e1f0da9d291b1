package kubelet

// The kubelet's view of the cluster's Services, for the service-link environment of containers
// (upstream: pkg/kubelet/kubelet.go NewMainKubelet, serviceLister and serviceHasSynced;
// kubelet_pods.go makeEnvironmentVariables and getServiceEnvVarMap).

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/volume"
)

// services holds every Service of the cluster but the headless ones, kept up to date by an
// informer (LIST, then WATCH).
type services struct {
	lister corelisters.ServiceLister
	synced cache.InformerSynced // true once the first LIST is in
}

// startServiceInformer lists and watches the Services, as upstream does from NewMainKubelet on:
// every Service except headless ones (spec.clusterIP=None, issue 122394), which have no
// variables. The pods' containers read them when they start. With --nodes, the nodes of the
// process share one (shared.go).
func (k *Kubelet) startServiceInformer(context.Context) (component, error) {
	if k.shared != nil {
		k.services = k.shared.sharedServices(k.client)
		return nop()
	}
	var run component
	k.services, run = newServiceInformer(k.client)
	return run, nil
}

// newServiceInformer makes the informer and what runs it until ctx ends.
func newServiceInformer(client kubernetes.Interface) (*services, component) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermNotEqualSelector("spec.clusterIP", corev1.ClusterIPNone).String()
	}))
	informer := factory.Core().V1().Services()
	return &services{lister: informer.Lister(), synced: informer.Informer().HasSynced}, runFunc(func(ctx context.Context) error {
		factory.StartWithContext(ctx)
		<-ctx.Done()
		factory.Shutdown() // waits for the informer's goroutines
		return nil
	})
}

// env is the service-link environment of pod's containers (volume.ServiceEnv). Until the first
// LIST is in, a pod from the API server waits, with upstream's error as its containers' waiting
// message (CreateContainerConfigError), rather than start without KUBERNETES_SERVICE_HOST: the
// next sync tries again. A static pod does not wait: it may run before the API server does. A
// nil services (a kubelet without the informer) gives no variables.
func (s *services) env(pod *corev1.Pod) (map[string]string, error) {
	if s == nil {
		return nil, nil
	}
	if !kubecontainer.IsStaticPod(pod) && !s.synced() {
		return nil, errors.New("services have not yet been read at least once, cannot construct envvars")
	}
	list, err := s.lister.List(labels.Everything())
	if err != nil {
		return nil, errors.New("failed to list services when setting up env vars")
	}
	// The API server defaults enableServiceLinks to true; our static pods are not defaulted.
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	return volume.ServiceEnv(list, pod.Namespace, links), nil
}
