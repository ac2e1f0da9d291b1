package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

// apiObjects is a fake of the kubelet's secret and configmap managers and token manager.
type apiObjects struct {
	mu         sync.Mutex
	secrets    map[string]*corev1.Secret // "ns/name"
	configMaps map[string]*corev1.ConfigMap
	token      string   // what the token manager returns now
	tokensFor  []string // "ns/serviceAccount pod" of every token asked for
}

func (a *apiObjects) GetServiceAccountToken(_ context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokensFor = append(a.tokensFor, ns+"/"+name+" "+tr.Spec.BoundObjectRef.Name)
	return &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: a.token}}, nil
}

func (a *apiObjects) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("secret"), name)
}

func (a *apiObjects) GetConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cm, ok := a.configMaps[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("configmap"), name)
}

func newProjector(t *testing.T, objs *apiObjects) (*Projector, string) {
	t.Helper()
	root := t.TempDir()
	p, err := New(Config{RootDir: root, GetSecret: objs.GetSecret, GetConfigMap: objs.GetConfigMap, GetServiceAccountToken: objs.GetServiceAccountToken})
	if err != nil {
		t.Fatal(err)
	}
	return p, root
}

func volumePod() *corev1.Pod {
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db-pass"}}},
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Items: []corev1.KeyToPath{{Key: "app.conf", Path: "conf/app.conf"}}}}},
		{Name: "kube-api-access-x1", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o644),
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			}}}},
		{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/logs"}}}, // a type we do not handle
	}
	return pod
}

func shopObjects() *apiObjects {
	return &apiObjects{
		secrets: map[string]*corev1.Secret{"shop/db-pass": {Data: map[string][]byte{"password": []byte("s3cret")}}},
		configMaps: map[string]*corev1.ConfigMap{
			"shop/app":              {Data: map[string]string{"app.conf": "debug=true"}},
			"shop/kube-root-ca.crt": {Data: map[string]string{"ca.crt": "CA"}},
		},
		token: "jwt-1",
	}
}

// Upstream layout: <root>/pods/<uid>/volumes/<escaped plugin name>/<volume name>, one
// directory per handled volume; other types (hostPath here) are not ours.
func TestSetUpVolumeWritesVolumes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	objs := shopObjects()
	p, root := newProjector(t, objs)
	pod := volumePod()

	dirs, err := setUpPod(ctx, p, pod)
	if err != nil {
		t.Fatal(err)
	}
	vols := filepath.Join(root, "pods", "uid-1", "volumes")
	wantDirs := map[string]string{
		"creds":              filepath.Join(vols, "kubernetes.io~secret", "creds"),
		"config":             filepath.Join(vols, "kubernetes.io~configmap", "config"),
		"kube-api-access-x1": filepath.Join(vols, "kubernetes.io~projected", "kube-api-access-x1"),
		"podinfo":            filepath.Join(vols, "kubernetes.io~downward-api", "podinfo"),
		"scratch":            filepath.Join(vols, "kubernetes.io~empty-dir", "scratch"),
	}
	for name, want := range wantDirs {
		if dirs[name] != want {
			t.Errorf("dir of %s = %q, want %q", name, dirs[name], want)
		}
	}
	if _, ok := dirs["host"]; ok || len(dirs) != len(wantDirs) {
		t.Errorf("dirs = %v, want exactly %v (nfs skipped)", dirs, wantDirs)
	}

	for file, want := range map[string]string{
		"creds/password":               "s3cret",
		"config/conf/app.conf":         "debug=true",
		"kube-api-access-x1/token":     "jwt-1",
		"kube-api-access-x1/ca.crt":    "CA",
		"kube-api-access-x1/namespace": "shop",
		"podinfo/labels":               "app=\"web\"\ntier=\"front\"",
	} {
		vol, rest, _ := strings.Cut(file, "/")
		if got := readFile(t, filepath.Join(dirs[vol], rest)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if info, err := os.Stat(filepath.Join(dirs["kube-api-access-x1"], "token")); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("token file = (%v, %v), want mode 0644 (the volume's defaultMode)", info, err)
	}
	if want := []string{"shop/web-sa web"}; !slices.Equal(objs.tokensFor, want) {
		t.Errorf("tokens asked for %v, want %v (the pod's service account, bound to the pod)", objs.tokensFor, want)
	}
	if info, err := os.Stat(dirs["scratch"]); err != nil || info.Mode().Perm() != 0o777 {
		t.Errorf("emptyDir = (%v, %v), want a 0777 directory", info, err)
	}
}

// The volume manager calls SetUpVolume after every sync: unchanged objects leave the volume alone, a
// changed object is projected (upstream: secrets and configmaps in volumes are eventually
// updated; env variables are not), and so is a refreshed service account token.
func TestSetUpVolumeRefreshesChangedObjects(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	objs := shopObjects()
	p, _ := newProjector(t, objs)
	pod := volumePod()

	dirs, err := setUpPod(ctx, p, pod)
	if err != nil {
		t.Fatal(err)
	}
	dataDirOf := func(vol string) string {
		t.Helper()
		ts, err := os.Readlink(filepath.Join(dirs[vol], dataDirName))
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	credsBefore, configBefore, tokenBefore := dataDirOf("creds"), dataDirOf("config"), dataDirOf("kube-api-access-x1")

	if _, err := setUpPod(ctx, p, pod); err != nil {
		t.Fatal(err)
	}
	if dataDirOf("kube-api-access-x1") != tokenBefore {
		t.Error("the same token rewrote the kube-api-access volume")
	}

	objs.mu.Lock()
	objs.secrets["shop/db-pass"] = &corev1.Secret{Data: map[string][]byte{"password": []byte("rotated"), "user": []byte("admin")}}
	objs.token = "jwt-2" // the token manager refreshed it
	objs.mu.Unlock()
	if _, err := setUpPod(ctx, p, pod); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dirs["creds"], "password")); got != "rotated" {
		t.Errorf("password = %q after the Secret changed, want %q", got, "rotated")
	}
	if got := readFile(t, filepath.Join(dirs["creds"], "user")); got != "admin" {
		t.Errorf("user = %q, want the new key projected", got)
	}
	if dataDirOf("creds") == credsBefore {
		t.Error("the changed Secret's volume kept its data directory")
	}
	if dataDirOf("config") != configBefore {
		t.Error("an unchanged ConfigMap's volume was rewritten")
	}
	if got := readFile(t, filepath.Join(dirs["kube-api-access-x1"], "token")); got != "jwt-2" || dataDirOf("kube-api-access-x1") == tokenBefore {
		t.Errorf("token = %q after a refresh, want jwt-2 in a new data directory", got)
	}
}

// Upstream: a volume that cannot be set up fails the pod's sync with "MountVolume.SetUp failed
// for volume ..."; the other volumes are still set up, and an optional one that is missing
// becomes an empty volume.
func TestSetUpVolumeErrors(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	p, _ := newProjector(t, shopObjects())
	pod := volumePod()
	pod.Spec.Volumes = append(pod.Spec.Volumes,
		corev1.Volume{Name: "missing", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope"}}},
		corev1.Volume{Name: "maybe", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope", Optional: ptr.To(true)}}},
	)

	dirs, err := setUpPod(ctx, p, pod)
	if err == nil || err.Error() != `MountVolume.SetUp failed for volume "missing" : secret "nope" not found` {
		t.Fatalf("error = %v, want the missing Secret named", err)
	}
	if _, ok := dirs["creds"]; !ok {
		t.Error("a failing volume stopped the others from being set up")
	}
	if _, ok := dirs["missing"]; ok {
		t.Error("the failed volume has a directory in the result")
	}
	if got := visible(t, dirs["maybe"]); len(got) != 0 {
		t.Errorf("optional missing Secret volume holds %v, want nothing", got)
	}

	bad := testPod()
	bad.UID = ".."
	if _, err := p.SetUpVolume(ctx, bad, &corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}); err == nil {
		t.Error("a pod UID of \"..\" was accepted")
	}
}

// Upstream's pod cleanup removes <root>/pods/<uid> once the pod is gone; other pods stay.
func TestCleanupPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	p, root := newProjector(t, shopObjects())
	a, b := volumePod(), volumePod()
	b.UID = "uid-2"
	for _, pod := range []*corev1.Pod{a, b} {
		if _, err := setUpPod(ctx, p, pod); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.CleanupPod(a.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "pods", "uid-1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod directory still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "pods", "uid-2", "volumes")); err != nil {
		t.Errorf("another pod's directory was touched: %v", err)
	}
	if err := p.CleanupPod(a.UID); err != nil {
		t.Errorf("cleaning up a pod twice = %v, want nil", err)
	}
	for _, uid := range []string{"", ".", "..", "a/b"} {
		if err := p.CleanupPod(types.UID(uid)); err == nil {
			t.Errorf("CleanupPod(%q) was accepted", uid)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "pods", "uid-2")); err != nil {
		t.Errorf("an invalid UID removed other pods: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	objs := shopObjects()
	for name, cfg := range map[string]Config{
		"no root":       {GetSecret: objs.GetSecret, GetConfigMap: objs.GetConfigMap},
		"relative root": {RootDir: "var/lib/minikubelet", GetSecret: objs.GetSecret, GetConfigMap: objs.GetConfigMap},
		"no getters":    {RootDir: "/var/lib/minikubelet"},
		"no tokens":     {RootDir: "/var/lib/minikubelet", GetSecret: objs.GetSecret, GetConfigMap: objs.GetConfigMap},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

// Upstream makeMounts: one mount per volumeMount, read-only when asked and always for volumes
// whose plugin says so (secret, configMap, projected, downwardAPI).
func TestMounts(t *testing.T) {
	pod := volumePod()
	dirs := map[string]string{"creds": "/r/creds", "scratch": "/r/scratch", "podinfo": "/r/podinfo"}
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "creds", MountPath: "/etc/creds"},
		{Name: "scratch", MountPath: "/tmp"},
		{Name: "scratch", MountPath: "/data", ReadOnly: true},
		{Name: "host", MountPath: "/var/log"}, // no host directory: left out
		{Name: "podinfo", MountPath: "/etc/podinfo"},
	}}
	want := []Mount{
		{ContainerPath: "/etc/creds", HostPath: "/r/creds", ReadOnly: true},
		{ContainerPath: "/tmp", HostPath: "/r/scratch"},
		{ContainerPath: "/data", HostPath: "/r/scratch", ReadOnly: true},
		{ContainerPath: "/etc/podinfo", HostPath: "/r/podinfo", ReadOnly: true},
	}
	if got, err := Mounts(pod, c, dirs, MountConfig{}); err != nil || !slices.Equal(got, want) {
		t.Errorf("Mounts = %v,\n  %+v\nwant\n  %+v", err, got, want)
	}
}

// setUpPod sets up every volume of the pod that Handles, as the volume manager's reconciler
// does one by one, and returns volume name → directory and the failures named as upstream's
// events name them.
func setUpPod(ctx context.Context, p *Projector, pod *corev1.Pod) (map[string]string, error) {
	dirs := map[string]string{}
	var errs []error
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if !Handles(vol) || vol.HostPath != nil {
			continue
		}
		dir, err := p.SetUpVolume(ctx, pod, vol)
		if err != nil {
			errs = append(errs, fmt.Errorf("MountVolume.SetUp failed for volume %q : %w", vol.Name, err))
			continue
		}
		dirs[vol.Name] = dir
	}
	return dirs, errors.Join(errs...)
}
