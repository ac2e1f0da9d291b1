package volume

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func equalPayload(a, b map[string]FileProjection) bool {
	return maps.EqualFunc(a, b, func(x, y FileProjection) bool {
		return string(x.Data) == string(y.Data) && x.Mode == y.Mode
	})
}

func checkPayload(t *testing.T, got map[string]FileProjection, err error, want map[string]FileProjection, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || err.Error() != wantErr {
			t.Fatalf("error = %v, want %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !equalPayload(got, want) {
		t.Errorf("payload = %v, want %v", got, want)
	}
}

// Upstream secret.MakePayload and the secret plugin's SetUpAt.
func TestSecretPayload(t *testing.T) {
	secret := &corev1.Secret{Data: map[string][]byte{"user": []byte("admin"), "pass": []byte("s3cret")}}
	tests := []struct {
		name    string
		vol     corev1.SecretVolumeSource
		secret  *corev1.Secret
		want    map[string]FileProjection
		wantErr string
	}{
		{
			name:   "all keys with the default mode 0644",
			vol:    corev1.SecretVolumeSource{SecretName: "db"},
			secret: secret,
			want:   map[string]FileProjection{"user": fp("admin", 0o644), "pass": fp("s3cret", 0o644)},
		},
		{
			name:   "defaultMode applies to every key",
			vol:    corev1.SecretVolumeSource{SecretName: "db", DefaultMode: ptr.To[int32](0o400)},
			secret: secret,
			want:   map[string]FileProjection{"user": fp("admin", 0o400), "pass": fp("s3cret", 0o400)},
		},
		{
			name: "items select keys, rename them, and may set their own mode",
			vol: corev1.SecretVolumeSource{SecretName: "db", DefaultMode: ptr.To[int32](0o440), Items: []corev1.KeyToPath{
				{Key: "pass", Path: "creds/password", Mode: ptr.To[int32](0o400)},
				{Key: "user", Path: "username"},
			}},
			secret: secret,
			want:   map[string]FileProjection{"creds/password": fp("s3cret", 0o400), "username": fp("admin", 0o440)},
		},
		{
			name:    "an item naming a missing key is an error",
			vol:     corev1.SecretVolumeSource{SecretName: "db", Items: []corev1.KeyToPath{{Key: "token", Path: "t"}}},
			secret:  secret,
			wantErr: `secret "db" references non-existent secret key: token`,
		},
		{
			name: "an optional volume skips missing keys",
			vol: corev1.SecretVolumeSource{SecretName: "db", Optional: ptr.To(true), Items: []corev1.KeyToPath{
				{Key: "token", Path: "t"}, {Key: "user", Path: "u"},
			}},
			secret: secret,
			want:   map[string]FileProjection{"u": fp("admin", 0o644)},
		},
		{
			name:    "a missing Secret is an error with the API's wording",
			vol:     corev1.SecretVolumeSource{SecretName: "db"},
			wantErr: `secret "db" not found`,
		},
		{
			name: "a missing optional Secret is an empty volume",
			vol:  corev1.SecretVolumeSource{SecretName: "db", Optional: ptr.To(true), Items: []corev1.KeyToPath{{Key: "user", Path: "u"}}},
			want: map[string]FileProjection{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SecretPayload(&tc.vol, tc.secret)
			checkPayload(t, got, err, tc.want, tc.wantErr)
		})
	}
}

// Upstream configmap.MakePayload: data and binaryData, items, modes, optional.
func TestConfigMapPayload(t *testing.T) {
	cm := &corev1.ConfigMap{
		Data:       map[string]string{"app.conf": "debug=true"},
		BinaryData: map[string][]byte{"logo.png": {0x89, 'P', 'N', 'G'}},
	}
	ref := corev1.LocalObjectReference{Name: "app"}
	tests := []struct {
		name    string
		vol     corev1.ConfigMapVolumeSource
		cm      *corev1.ConfigMap
		want    map[string]FileProjection
		wantErr string
	}{
		{
			name: "all keys of data and binaryData",
			vol:  corev1.ConfigMapVolumeSource{LocalObjectReference: ref},
			cm:   cm,
			want: map[string]FileProjection{"app.conf": fp("debug=true", 0o644), "logo.png": fp("\x89PNG", 0o644)},
		},
		{
			name: "items may name binaryData keys",
			vol: corev1.ConfigMapVolumeSource{LocalObjectReference: ref, DefaultMode: ptr.To[int32](0o600), Items: []corev1.KeyToPath{
				{Key: "logo.png", Path: "img/logo.png", Mode: ptr.To[int32](0o444)},
				{Key: "app.conf", Path: "app.conf"},
			}},
			cm:   cm,
			want: map[string]FileProjection{"img/logo.png": fp("\x89PNG", 0o444), "app.conf": fp("debug=true", 0o600)},
		},
		{
			name:    "an item naming a missing key is an error",
			vol:     corev1.ConfigMapVolumeSource{LocalObjectReference: ref, Items: []corev1.KeyToPath{{Key: "nope", Path: "x"}}},
			cm:      cm,
			wantErr: `configmap "app" references non-existent config key: nope`,
		},
		{
			name: "an optional volume skips missing keys",
			vol:  corev1.ConfigMapVolumeSource{LocalObjectReference: ref, Optional: ptr.To(true), Items: []corev1.KeyToPath{{Key: "nope", Path: "x"}}},
			cm:   cm,
			want: map[string]FileProjection{},
		},
		{
			name:    "a missing ConfigMap is an error with the API's wording",
			vol:     corev1.ConfigMapVolumeSource{LocalObjectReference: ref},
			wantErr: `configmap "app" not found`,
		},
		{
			name: "a missing optional ConfigMap is an empty volume",
			vol:  corev1.ConfigMapVolumeSource{LocalObjectReference: ref, Optional: ptr.To(true)},
			want: map[string]FileProjection{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConfigMapPayload(&tc.vol, tc.cm)
			checkPayload(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "uid-1",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": `say "hi"`},
		},
		Spec: corev1.PodSpec{NodeName: "node-1", ServiceAccountName: "web-sa"},
	}
}

// Upstream downwardapi.CollectData with fieldpath.ExtractFieldPathAsString and FormatMap.
func TestDownwardAPIPayload(t *testing.T) {
	item := func(path, field string) corev1.DownwardAPIVolumeFile {
		return corev1.DownwardAPIVolumeFile{Path: path, FieldRef: &corev1.ObjectFieldSelector{FieldPath: field}}
	}
	tests := []struct {
		name    string
		vol     corev1.DownwardAPIVolumeSource
		want    map[string]FileProjection
		wantErr string
	}{
		{
			name: "metadata and spec fields",
			vol: corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				item("name", "metadata.name"), item("ns", "metadata.namespace"), item("uid", "metadata.uid"),
				item("node", "spec.nodeName"),
			}},
			want: map[string]FileProjection{"name": fp("web", 0o644), "ns": fp("shop", 0o644), "uid": fp("uid-1", 0o644), "node": fp("node-1", 0o644)},
		},
		{
			name: "labels and annotations as sorted key=\"value\" lines, or one by subscript",
			vol: corev1.DownwardAPIVolumeSource{DefaultMode: ptr.To[int32](0o400), Items: []corev1.DownwardAPIVolumeFile{
				item("labels", "metadata.labels"), item("annotations", "metadata.annotations"),
				item("app", "metadata.labels['app']"),
			}},
			want: map[string]FileProjection{
				"labels":      fp("app=\"web\"\ntier=\"front\"", 0o400),
				"annotations": fp(`note="say \"hi\""`, 0o400),
				"app":         fp("web", 0o400),
			},
		},
		{
			name: "an item's mode overrides defaultMode; paths are cleaned",
			vol: corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "./meta//name", Mode: ptr.To[int32](0o600), FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			}},
			want: map[string]FileProjection{"meta/name": fp("web", 0o600)},
		},
		{
			name: "resourceFieldRef: a request, a limit, an unset limit from the node's allocatable (upstream CollectData)",
			vol: corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "cpu_request", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "requests.cpu", Divisor: resource.MustParse("1m")}},
				{Path: "memory_limit", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
				{Path: "cpu_limit", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}},
			}},
			want: map[string]FileProjection{"cpu_request": fp("250", 0o644), "memory_limit": fp("64", 0o644), "cpu_limit": fp("3", 0o644)},
		},
		{
			name: "resourceFieldRef to a container the pod does not have",
			vol: corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "x", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}}}},
			wantErr: `downward API item "x": container nope not found`,
		},
		{
			name:    "an unsupported field is an error",
			vol:     corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{item("x", "status.phase")}},
			wantErr: `downward API item "x": unsupported fieldPath: status.phase`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.Containers = []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}}
			allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
			got, err := DownwardAPIPayload(&tc.vol, pod, allocatable)
			checkPayload(t, got, err, tc.want, tc.wantErr)
		})
	}
}

// Upstream projectedVolumeMounter.collectData: sources merged, optional honoured per source,
// errors of all sources reported; a serviceAccountToken source is a file holding the token the
// token manager returns for the pod's service account, with the volume's defaultMode.
func TestProjectedPayload(t *testing.T) {
	secrets := map[string]*corev1.Secret{"db": {Data: map[string][]byte{"pass": []byte("s3cret")}}}
	configMaps := map[string]*corev1.ConfigMap{"kube-root-ca.crt": {Data: map[string]string{"ca.crt": "CA"}}}
	getSecret := func(name string) (*corev1.Secret, error) {
		if name == "broken" {
			return nil, errors.New("connection refused")
		}
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
	}
	getConfigMap := func(name string) (*corev1.ConfigMap, error) {
		return configMaps[name], nil // nil, nil also means missing
	}
	getToken := func(sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		if len(tr.Spec.Audiences) == 1 && tr.Spec.Audiences[0] == "forbidden" {
			return nil, errors.New(`serviceaccounts "web-sa" is forbidden`)
		}
		return &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
			Token: fmt.Sprintf("jwt:%s:%v:%d", sa, tr.Spec.Audiences, ptr.Deref(tr.Spec.ExpirationSeconds, 0))}}, nil
	}
	kubeAPIAccess := []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
			Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}
	tests := []struct {
		name    string
		vol     corev1.ProjectedVolumeSource
		want    map[string]FileProjection
		wantErr string
	}{
		{
			name: "kube-api-access volume: token, ca.crt and namespace",
			vol:  corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o644), Sources: kubeAPIAccess},
			want: map[string]FileProjection{"token": fp("jwt:web-sa:[]:3607", 0o644), "ca.crt": fp("CA", 0o644), "namespace": fp("shop", 0o644)},
		},
		{
			name: "a token with an audience takes the volume's defaultMode",
			vol: corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o600), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "vault/token", Audience: "vault", ExpirationSeconds: ptr.To[int64](600)}},
			}},
			want: map[string]FileProjection{"vault/token": fp("jwt:web-sa:[vault]:600", 0o600)},
		},
		{
			name: "a refused TokenRequest fails the source",
			vol: corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", Audience: "forbidden"}},
			}},
			wantErr: `projected source 0: serviceaccounts "web-sa" is forbidden`,
		},
		{
			name: "defaultMode of the volume applies to every source, items may override",
			vol: corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o400), Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt", Mode: ptr.To[int32](0o444)}}}},
			}},
			want: map[string]FileProjection{"pass": fp("s3cret", 0o400), "ca.crt": fp("CA", 0o444)},
		},
		{
			name: "missing optional sources add nothing",
			vol: corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptr.To(true)}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}},
			}},
			want: map[string]FileProjection{"pass": fp("s3cret", 0o644)},
		},
		{
			name: "every failing source is reported",
			vol: corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "broken"}, Optional: ptr.To(true)}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "missing", Path: "m"}}}},
			}},
			wantErr: `[projected source 0: secret "gone" not found, ` +
				`projected source 1: couldn't get secret shop/broken: connection refused, ` +
				`projected source 2: configmap "kube-root-ca.crt" references non-existent config key: missing]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ProjectedPayload(&tc.vol, getSecret, getConfigMap, getToken, testPod(), nil)
			checkPayload(t, got, err, tc.want, tc.wantErr)
		})
	}
	noSA := testPod()
	noSA.Spec.ServiceAccountName = ""
	_, err := ProjectedPayload(&corev1.ProjectedVolumeSource{Sources: kubeAPIAccess}, getSecret, getConfigMap, getToken, noSA, nil)
	if err == nil || !strings.Contains(err.Error(), "names no service account") {
		t.Errorf("a pod without serviceAccountName: error %v, want advice", err)
	}
}

// Upstream collectData's TokenRequest: bound to the pod (v1 Pod, name, UID), the source's
// audience (none: the API server's) and expirationSeconds (nil: the API default).
func TestTokenRequest(t *testing.T) {
	pod := testPod()
	bound := &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "uid-1"}
	tests := []struct {
		name string
		src  corev1.ServiceAccountTokenProjection
		want authenticationv1.TokenRequestSpec
	}{
		{
			name: "kube-api-access",
			src:  corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)},
			want: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3607), BoundObjectRef: bound},
		},
		{
			name: "audience",
			src:  corev1.ServiceAccountTokenProjection{Path: "token", Audience: "vault", ExpirationSeconds: ptr.To[int64](600)},
			want: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}, ExpirationSeconds: ptr.To[int64](600), BoundObjectRef: bound},
		},
		{
			name: "no expirationSeconds: the API server's default",
			src:  corev1.ServiceAccountTokenProjection{Path: "token"},
			want: authenticationv1.TokenRequestSpec{BoundObjectRef: bound},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tokenRequest(&tc.src, pod); !apiequality.Semantic.DeepEqual(got.Spec, tc.want) {
				t.Errorf("tokenRequest = %+v, want %+v", got.Spec, tc.want)
			}
		})
	}
}
