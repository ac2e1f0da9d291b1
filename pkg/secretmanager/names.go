package secretmanager

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// SecretNames returns the names of the Secrets a pod references directly, in its own namespace:
// spec.imagePullSecrets; env[].valueFrom.secretKeyRef and envFrom[].secretRef of init, regular and
// ephemeral containers; and secret and projected-secret volumes. Empty names are skipped.
//
// It mirrors VisitPodSecretNames in pkg/api/v1/pod/util.go, without the in-tree volume plugins'
// secretRefs (azureFile, cephfs, cinder, flexVolume, iscsi, rbd, scaleIO, storageos) and the CSI
// nodePublishSecretRef, which minikubelet does not mount. Transitive references (pod → PVC → PV
// → secret) are not followed, as upstream.
func SecretNames(pod *corev1.Pod) sets.Set[string] {
	names := sets.New[string]()
	add := func(name string) {
		if name != "" {
			names.Insert(name)
		}
	}
	for _, ref := range pod.Spec.ImagePullSecrets {
		add(ref.Name)
	}
	visitEnv(&pod.Spec, func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, from := range envFrom {
			if from.SecretRef != nil {
				add(from.SecretRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	})
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.Secret != nil:
			add(vol.Secret.SecretName)
		case vol.Projected != nil:
			for _, src := range vol.Projected.Sources {
				if src.Secret != nil {
					add(src.Secret.Name)
				}
			}
		}
	}
	return names
}

// ConfigMapNames returns the names of the ConfigMaps a pod references directly, in its own
// namespace: env[].valueFrom.configMapKeyRef and envFrom[].configMapRef of init, regular and
// ephemeral containers; and configMap and projected-configMap volumes. Empty names are skipped.
// It mirrors VisitPodConfigmapNames in pkg/api/v1/pod/util.go.
func ConfigMapNames(pod *corev1.Pod) sets.Set[string] {
	names := sets.New[string]()
	add := func(name string) {
		if name != "" {
			names.Insert(name)
		}
	}
	visitEnv(&pod.Spec, func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, from := range envFrom {
			if from.ConfigMapRef != nil {
				add(from.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				add(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.ConfigMap != nil:
			add(vol.ConfigMap.Name)
		case vol.Projected != nil:
			for _, src := range vol.Projected.Sources {
				if src.ConfigMap != nil {
					add(src.ConfigMap.Name)
				}
			}
		}
	}
	return names
}

// visitEnv calls visit with the env and envFrom of every container of the pod: init containers,
// then regular containers, then ephemeral containers (upstream podutil.AllContainers).
func visitEnv(spec *corev1.PodSpec, visit func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource)) {
	for i := range spec.InitContainers {
		visit(spec.InitContainers[i].Env, spec.InitContainers[i].EnvFrom)
	}
	for i := range spec.Containers {
		visit(spec.Containers[i].Env, spec.Containers[i].EnvFrom)
	}
	for i := range spec.EphemeralContainers {
		visit(spec.EphemeralContainers[i].Env, spec.EphemeralContainers[i].EnvFrom)
	}
}
