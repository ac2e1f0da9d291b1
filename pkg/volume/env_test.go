package volume

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

type fakeObjects struct {
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
	calls      []string
}

func (f *fakeObjects) getSecret(ns, name string) (*corev1.Secret, error) {
	f.calls = append(f.calls, "secret "+ns+"/"+name)
	if name == "broken" {
		return nil, errors.New("connection refused")
	}
	if s, ok := f.secrets[name]; ok {
		return s, nil
	}
	// A client-go style NotFound (plural resource); MakeEnvironment must still say "secret".
	return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
}

func (f *fakeObjects) getConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	f.calls = append(f.calls, "configmap "+ns+"/"+name)
	return f.configMaps[name], nil // nil, nil means missing
}

func newFakeObjects() *fakeObjects {
	return &fakeObjects{
		secrets: map[string]*corev1.Secret{
			"db-pass": {Data: map[string][]byte{"password": []byte("s3cret"), "user": []byte("admin")}},
		},
		configMaps: map[string]*corev1.ConfigMap{
			"app": {Data: map[string]string{"LOG_LEVEL": "debug", "MODE": "prod", "bad=key": "x", "": "y"}},
		},
	}
}

func secretKey(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
}

func configMapKey(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
}

func resourceField(res, container string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: res, ContainerName: container}}
}

// testEnvConfig: one pod IP, one host IP, a 4-core 8Gi node.
func testEnvConfig(objs *fakeObjects) EnvConfig {
	return EnvConfig{
		PodIPs:  []string{"10.0.0.7"},
		HostIPs: []string{"192.168.1.2"},
		NodeAllocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		},
		GetSecret:    objs.getSecret,
		GetConfigMap: objs.getConfigMap,
	}
}

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
}

// Upstream makeEnvironmentVariables.
func TestMakeEnvironment(t *testing.T) {
	tests := []struct {
		name            string
		c               corev1.Container
		podIPs, hostIPs []string
		serviceEnv      map[string]string
		want            []EnvVar
		wantErr         string
	}{
		{
			name: "env in declaration order, $(VAR) refers to earlier variables only",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "HOST", Value: "db"},
				{Name: "URL", Value: "postgres://$(HOST):$(PORT)/$$(HOST)"},
				{Name: "PORT", Value: "5432"},
				{Name: "EMPTY"},
			}},
			want: []EnvVar{{"HOST", "db"}, {"URL", "postgres://db:$(PORT)/$(HOST)"}, {"PORT", "5432"}, {"EMPTY", ""}},
		},
		{
			name: "envFrom first (keys sorted, prefixed, invalid names skipped), env overrides in place",
			c: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}},
					{Prefix: "DB_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db-pass"}}},
				},
				Env: []corev1.EnvVar{
					{Name: "MODE", Value: "dev-$(MODE)"},
					{Name: "DSN", Value: "$(DB_user):$(DB_password)"},
				},
			},
			want: []EnvVar{
				{"LOG_LEVEL", "debug"}, {"MODE", "dev-prod"},
				{"DB_password", "s3cret"}, {"DB_user", "admin"},
				{"DSN", "admin:s3cret"},
			},
		},
		{
			name: "secretKeyRef and configMapKeyRef",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "PASSWORD", ValueFrom: secretKey("db-pass", "password", false)},
				{Name: "LEVEL", ValueFrom: configMapKey("app", "LOG_LEVEL", false)},
			}},
			want: []EnvVar{{"PASSWORD", "s3cret"}, {"LEVEL", "debug"}},
		},
		{
			name: "optional references to missing objects and keys are skipped",
			c: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}},
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}},
				},
				Env: []corev1.EnvVar{
					{Name: "A", ValueFrom: secretKey("gone", "k", true)},
					{Name: "B", ValueFrom: secretKey("db-pass", "nokey", true)},
					{Name: "C", ValueFrom: configMapKey("gone", "k", true)},
					{Name: "D", ValueFrom: configMapKey("app", "nokey", true)},
					{Name: "E", Value: "kept"},
				},
			},
			want: []EnvVar{{"E", "kept"}},
		},
		{
			name: "fieldRefs",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "POD_NAME", ValueFrom: fieldRef("metadata.name")},
				{Name: "POD_NAMESPACE", ValueFrom: fieldRef("metadata.namespace")},
				{Name: "POD_UID", ValueFrom: fieldRef("metadata.uid")},
				{Name: "POD_IP", ValueFrom: fieldRef("status.podIP")},
				{Name: "HOST_IP", ValueFrom: fieldRef("status.hostIP")},
				{Name: "NODE", ValueFrom: fieldRef("spec.nodeName")},
				{Name: "SA", ValueFrom: fieldRef("spec.serviceAccountName")},
				{Name: "APP", ValueFrom: fieldRef("metadata.labels['app']")},
				{Name: "ADDR", Value: "$(POD_IP):8080"},
			}},
			want: []EnvVar{
				{"POD_NAME", "web"}, {"POD_NAMESPACE", "shop"}, {"POD_UID", "uid-1"},
				{"POD_IP", "10.0.0.7"}, {"HOST_IP", "192.168.1.2"}, {"NODE", "node-1"}, {"SA", "web-sa"},
				{"APP", "web"}, {"ADDR", "10.0.0.7:8080"},
			},
		},
		{
			name:    "missing required Secret: the secret manager's wording",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("gone", "password", false)}}},
			wantErr: `secret "gone" not found`,
		},
		{
			name:    "missing required Secret key",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("db-pass", "token", false)}}},
			wantErr: `couldn't find key token in Secret shop/db-pass`,
		},
		{
			name:    "missing required ConfigMap",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "P", ValueFrom: configMapKey("gone", "k", false)}}},
			wantErr: `configmap "gone" not found`,
		},
		{
			name:    "missing required ConfigMap key",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "P", ValueFrom: configMapKey("app", "nokey", false)}}},
			wantErr: `couldn't find key nokey in ConfigMap shop/app`,
		},
		{
			name: "missing required envFrom Secret",
			c: corev1.Container{EnvFrom: []corev1.EnvFromSource{
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}}}},
			wantErr: `secret "gone" not found`,
		},
		{
			name:    "an optional reference does not hide a failing API server",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("broken", "k", true)}}},
			wantErr: `couldn't get secret shop/broken: connection refused`,
		},
		{
			name: "status.podIPs and status.hostIPs are every IP, comma-separated; podIP and hostIP the first",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "POD_IPS", ValueFrom: fieldRef("status.podIPs")},
				{Name: "HOST_IPS", ValueFrom: fieldRef("status.hostIPs")},
			}},
			podIPs:  []string{"10.0.0.7", "fd00::7"},
			hostIPs: []string{"192.168.1.2", "fd00::2"},
			want:    []EnvVar{{"POD_IPS", "10.0.0.7,fd00::7"}, {"HOST_IPS", "192.168.1.2,fd00::2"}},
		},
		{
			name: "resourceFieldRef: the container's limit, else the node's allocatable",
			c: corev1.Container{
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
				Env: []corev1.EnvVar{
					{Name: "MEMORY_LIMIT", ValueFrom: resourceField("limits.memory", "")},
					{Name: "CPU_LIMIT", ValueFrom: resourceField("limits.cpu", "")},
					{Name: "CPU_REQUEST", ValueFrom: resourceField("requests.cpu", "")},
				},
			},
			want: []EnvVar{{"MEMORY_LIMIT", "67108864"}, {"CPU_LIMIT", "4"}, {"CPU_REQUEST", "0"}},
		},
		{
			name:    "resourceFieldRef to a resource the kubelet does not know",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "GPU", ValueFrom: resourceField("limits.nvidia.com/gpu", "")}}},
			wantErr: `unsupported container resource : limits.nvidia.com/gpu`,
		},
		{
			name: "service links come last, sorted, and never replace the container's own variables",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "DB_SERVICE_PORT", Value: "mine"},
				{Name: "DB_URL", Value: "http://$(DB_SERVICE_HOST):$(DB_SERVICE_PORT)"},
			}},
			serviceEnv: map[string]string{"DB_SERVICE_PORT": "5432", "DB_SERVICE_HOST": "10.96.0.9", "A_SERVICE_HOST": "10.96.0.1"},
			want: []EnvVar{
				{"DB_SERVICE_PORT", "mine"}, {"DB_URL", "http://10.96.0.9:mine"},
				{"A_SERVICE_HOST", "10.96.0.1"}, {"DB_SERVICE_HOST", "10.96.0.9"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := newFakeObjects()
			cfg := testEnvConfig(objs)
			if tc.podIPs != nil {
				cfg.PodIPs, cfg.HostIPs = tc.podIPs, tc.hostIPs
			}
			cfg.ServiceEnv = tc.serviceEnv
			got, err := MakeEnvironment(testPod(), &tc.c, cfg)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("env =\n  %v\nwant\n  %v", got, tc.want)
			}
		})
	}
}

// Upstream caches each object per call (the configMaps/secrets maps in
// makeEnvironmentVariables), so one container reading five keys costs one lookup.
func TestMakeEnvironmentFetchesEachObjectOnce(t *testing.T) {
	objs := newFakeObjects()
	c := &corev1.Container{
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db-pass"}}}},
		Env: []corev1.EnvVar{
			{Name: "A", ValueFrom: secretKey("db-pass", "user", false)},
			{Name: "B", ValueFrom: secretKey("db-pass", "password", false)},
			{Name: "C", ValueFrom: configMapKey("app", "MODE", false)},
			{Name: "D", ValueFrom: configMapKey("app", "LOG_LEVEL", false)},
		},
	}
	if _, err := MakeEnvironment(testPod(), c, testEnvConfig(objs)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"secret shop/db-pass", "configmap shop/app"}; !slices.Equal(objs.calls, want) {
		t.Errorf("lookups = %v, want %v", objs.calls, want)
	}
}
