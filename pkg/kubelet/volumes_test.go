package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/podsource"
)

// fakeServices is the Service informer's view: the given Services, synced or not yet.
func fakeServices(t *testing.T, synced bool, svcs ...*corev1.Service) *services {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range svcs {
		if err := indexer.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return &services{lister: corelisters.NewServiceLister(indexer), synced: func() bool { return synced }}
}

func envMap(opts *kuberuntime.RunContainerOptions) map[string]string {
	m := map[string]string{}
	for _, e := range opts.Envs {
		m[e.Name] = e.Value
	}
	return m
}

// Upstream GenerateRunContainerOptions: env with service links, the downward API's IPs and
// default limits, and the managed /etc/hosts mount.
func TestGenerateRunContainerOptions(t *testing.T) {
	apiServer := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	nodeHosts := filepath.Join(t.TempDir(), "node-hosts")
	if err := os.WriteFile(nodeHosts, []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
		{Name: "CPU_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
		{Name: "API", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
	}
	tests := []struct {
		name        string
		hostNetwork bool
		static      bool
		synced      bool
		mounts      []corev1.VolumeMount
		podIP       string
		wantEnv     map[string]string
		wantHosts   string // the start of the hosts file; "" for no /etc/hosts mount
		wantErr     string
	}{
		{name: "pod network", synced: true, podIP: "10.88.0.7",
			wantEnv: map[string]string{"POD_IP": "10.88.0.7", "HOST_IP": "10.213.0.1", "CPU_LIMIT": "3",
				"API": "https://10.96.0.1:443", "KUBERNETES_SERVICE_HOST": "10.96.0.1"},
			wantHosts: managedHostsHeader},
		{name: "host network: the pod's IP is the node's, the node's hosts file", hostNetwork: true, synced: true,
			wantEnv:   map[string]string{"POD_IP": "10.213.0.1", "HOST_IP": "10.213.0.1"},
			wantHosts: managedHostsHeaderWithHostNetwork + "127.0.0.1 localhost\n"},
		{name: "no pod IP yet: no managed /etc/hosts", synced: true,
			wantEnv: map[string]string{"POD_IP": ""}},
		{name: "a container mounting /etc/hosts itself keeps it", synced: true, podIP: "10.88.0.7",
			mounts: []corev1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}, wantEnv: map[string]string{"POD_IP": "10.88.0.7"}},
		{name: "Services not listed yet: an API pod waits", podIP: "10.88.0.7",
			wantErr: "services have not yet been read at least once, cannot construct envvars"},
		{name: "Services not listed yet: a static pod does not wait", static: true, podIP: "10.88.0.7",
			wantEnv: map[string]string{"POD_IP": "10.88.0.7", "KUBERNETES_SERVICE_HOST": "10.96.0.1"}, wantHosts: managedHostsHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			h := &runtimeHelper{
				services: fakeServices(t, tc.synced, apiServer), hostIP: "10.213.0.1",
				allocatable:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")},
				nodeHostsFile: nodeHosts, rootDir: root,
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"},
				Spec:       corev1.PodSpec{HostNetwork: tc.hostNetwork, Containers: []corev1.Container{{Name: "app", Env: env, VolumeMounts: tc.mounts}}},
			}
			if tc.static {
				pod.Annotations = map[string]string{podsource.ConfigSourceAnnotationKey: podsource.FileSource}
			}
			opts, err := h.GenerateRunContainerOptions(context.Background(), pod, &pod.Spec.Containers[0], tc.podIP)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := envMap(opts)
			for k, v := range tc.wantEnv {
				if got[k] != v {
					t.Errorf("env %s = %q, want %q", k, got[k], v)
				}
			}
			i := slices.IndexFunc(opts.Mounts, func(m kuberuntime.Mount) bool { return m.ContainerPath == "/etc/hosts" })
			if tc.wantHosts == "" {
				if i >= 0 {
					t.Errorf("unexpected /etc/hosts mount %+v", opts.Mounts[i])
				}
				return
			}
			if i < 0 {
				t.Fatalf("no /etc/hosts mount in %+v", opts.Mounts)
			}
			m := opts.Mounts[i]
			if want := filepath.Join(root, "pods", "uid-1", "etc-hosts"); m.HostPath != want || m.ReadOnly {
				t.Errorf("mount = %+v, want %s read-write", m, want)
			}
			data, err := os.ReadFile(m.HostPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), tc.wantHosts) {
				t.Errorf("hosts file =\n%s\nwant it to start with\n%s", data, tc.wantHosts)
			}
		})
	}
}

// Upstream translateMountPropagation: a volumeMount's mountPropagation as CRI's, private when
// unset, and an unknown mode is an error rather than a silently private mount.
func TestTranslateMountPropagation(t *testing.T) {
	for _, tc := range []struct {
		mode    *corev1.MountPropagationMode
		want    runtimeapi.MountPropagation
		wantErr string
	}{
		{nil, runtimeapi.MountPropagation_PROPAGATION_PRIVATE, ""},
		{ptr.To(corev1.MountPropagationNone), runtimeapi.MountPropagation_PROPAGATION_PRIVATE, ""},
		{ptr.To(corev1.MountPropagationHostToContainer), runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, ""},
		{ptr.To(corev1.MountPropagationBidirectional), runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, ""},
		{ptr.To(corev1.MountPropagationMode("Sideways")), 0, `invalid MountPropagation mode: "Sideways"`},
	} {
		got, err := translateMountPropagation(tc.mode)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%v: error %v, want %q", *tc.mode, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.mode, got, err, tc.want)
		}
	}
}
