package secretmanager

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func secretKeyRef(name string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}
}

func configMapKeyRef(name string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}
}

func envFromSecret(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func envFromConfigMap(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

// Pins upstream VisitPodSecretNames / VisitPodConfigmapNames (pkg/api/v1/pod/util.go): every
// container kind (init, regular, ephemeral), env and envFrom, plain and projected volumes,
// imagePullSecrets for secrets only, empty names skipped, duplicates counted once.
func TestReferencedNames(t *testing.T) {
	tests := []struct {
		name           string
		spec           corev1.PodSpec
		wantSecrets    []string
		wantConfigMaps []string
	}{
		{name: "empty pod"},
		{
			name:        "imagePullSecrets are secrets",
			spec:        corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}, {Name: ""}}},
			wantSecrets: []string{"registry"},
		},
		{
			name: "env valueFrom of a regular container",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Env: []corev1.EnvVar{
				{Name: "A", ValueFrom: secretKeyRef("s-env")},
				{Name: "B", ValueFrom: configMapKeyRef("c-env")},
				{Name: "C", Value: "literal"},
				{Name: "D", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			}}}},
			wantSecrets:    []string{"s-env"},
			wantConfigMaps: []string{"c-env"},
		},
		{
			name: "envFrom of an init container",
			spec: corev1.PodSpec{InitContainers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{
				envFromSecret("s-init"), envFromConfigMap("c-init"),
			}}}},
			wantSecrets:    []string{"s-init"},
			wantConfigMaps: []string{"c-init"},
		},
		{
			name: "env and envFrom of an ephemeral container",
			spec: corev1.PodSpec{EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Env:     []corev1.EnvVar{{Name: "A", ValueFrom: secretKeyRef("s-debug")}},
				EnvFrom: []corev1.EnvFromSource{envFromConfigMap("c-debug")},
			}}}},
			wantSecrets:    []string{"s-debug"},
			wantConfigMaps: []string{"c-debug"},
		},
		{
			name: "secret and configMap volumes",
			spec: corev1.PodSpec{Volumes: []corev1.Volume{
				{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s-vol"}}},
				{Name: "b", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c-vol"}}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			}},
			wantSecrets:    []string{"s-vol"},
			wantConfigMaps: []string{"c-vol"},
		},
		{
			name: "projected volume sources",
			spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s-proj"}}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "c-proj"}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{}},
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				},
			}}}}},
			wantSecrets:    []string{"s-proj"},
			wantConfigMaps: []string{"c-proj"},
		},
		{
			name: "one name referenced many ways counts once",
			spec: corev1.PodSpec{
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "shared"}},
				Containers: []corev1.Container{
					{EnvFrom: []corev1.EnvFromSource{envFromSecret("shared")}},
					{Env: []corev1.EnvVar{{Name: "A", ValueFrom: secretKeyRef("shared")}}},
				},
				Volumes: []corev1.Volume{{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "shared"}}}},
			},
			wantSecrets: []string{"shared"},
		},
		{
			name: "in-tree plugin secretRefs are not collected (simplification)",
			spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "r", VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{
				SecretRef: &corev1.LocalObjectReference{Name: "ceph"}}}}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tc.spec}
			if got, want := SecretNames(pod), sets.New(tc.wantSecrets...); !got.Equal(want) {
				t.Errorf("SecretNames = %v, want %v", sets.List(got), sets.List(want))
			}
			if got, want := ConfigMapNames(pod), sets.New(tc.wantConfigMaps...); !got.Equal(want) {
				t.Errorf("ConfigMapNames = %v, want %v", sets.List(got), sets.List(want))
			}
		})
	}
}
