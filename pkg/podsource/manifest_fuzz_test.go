package podsource

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// FuzzManifestToPod feeds arbitrary file content to the static pod decoder. Whatever is in the
// manifest directory, the kubelet must not crash (upstream runs the same decode on every file it
// finds): it either gets a pod it can run and name — name, namespace, UID, node set, the name a
// valid pod name — or an error with one of the two event reasons. Pure: it writes nothing.
//
//	go test -run '^$' -fuzz FuzzManifestToPod -fuzztime 60s ./pkg/podsource
func FuzzManifestToPod(f *testing.F) {
	for _, seed := range []string{
		goodManifest,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"kube-system"},"spec":{"containers":[{"name":"c","image":"i"}]}}`,
		// A kubeadm-style control plane manifest: probes, resources, host paths, quantities.
		`apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
  labels: {component: etcd, tier: control-plane}
  annotations: {kubeadm.kubernetes.io/etcd.advertise-client-urls: "https://10.0.0.1:2379"}
spec:
  hostNetwork: true
  priorityClassName: system-node-critical
  securityContext: {seccompProfile: {type: RuntimeDefault}}
  initContainers:
  - {name: init, image: "busybox:1.36", command: [sh, -c, "true"]}
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.6.4-0
    command: [etcd, --data-dir=/var/lib/etcd]
    env: [{name: GOMAXPROCS, value: "2"}]
    resources: {requests: {cpu: 100m, memory: 100Mi}, limits: {memory: 1e3Mi}}
    livenessProbe: {httpGet: {host: 127.0.0.1, path: /livez, port: 2381, scheme: HTTP}, failureThreshold: 8}
    volumeMounts: [{mountPath: /var/lib/etcd, name: etcd-data}]
  volumes:
  - {name: etcd-data, hostPath: {path: /var/lib/etcd, type: DirectoryOrCreate}}
`,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: Web_1}\nspec: {containers: [{name: c, image: i}]}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}",
		"apiVersion: v1\nkind: Pod\nspec: [",
		"a: &a [*a, *a]\nb: *a\n",
		"---\napiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const nodeName = "Node-1"
		pod, reason, err := manifestToPod(data, "/etc/kubernetes/manifests/fuzz.yaml", nodeName)
		if err != nil {
			if pod != nil {
				t.Errorf("an error (%v) and a pod %s/%s", err, pod.Namespace, pod.Name)
			}
			if reason != ReasonFailedToParseManifest && reason != ReasonInvalidManifest {
				t.Errorf("error %q with reason %q, want %s or %s", err, reason, ReasonFailedToParseManifest, ReasonInvalidManifest)
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Errorf("an empty error message (reason %s)", reason)
			}
			return
		}
		if pod == nil {
			t.Fatal("no pod and no error")
		}
		if pod.Name == "" || pod.Namespace == "" || pod.UID == "" || pod.Spec.NodeName != nodeName {
			t.Errorf("pod %q/%q uid %q node %q: want name, namespace, UID and node set", pod.Namespace, pod.Name, pod.UID, pod.Spec.NodeName)
		}
		if msgs := validation.IsDNS1123Subdomain(pod.Name); len(msgs) > 0 {
			t.Errorf("pod name %q is not a valid pod name: %v", pod.Name, msgs)
		}
		if msgs := validation.IsDNS1123Label(pod.Namespace); len(msgs) > 0 {
			t.Errorf("namespace %q is not a valid namespace: %v", pod.Namespace, msgs)
		}
		if len(pod.Spec.Containers) == 0 || !kubecontainer.IsStaticPod(pod) {
			t.Errorf("a pod without containers or not marked static: %d containers, annotations %v", len(pod.Spec.Containers), pod.Annotations)
		}
	})
}
