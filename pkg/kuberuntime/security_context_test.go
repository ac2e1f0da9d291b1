package kuberuntime

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func scPod(psc *corev1.PodSecurityContext, csc *corev1.SecurityContext) (*corev1.Pod, *corev1.Container) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{
			SecurityContext: psc,
			Containers:      []corev1.Container{{Name: "app", Image: "busybox", SecurityContext: csc}},
		},
	}
	return pod, &pod.Spec.Containers[0]
}

// The container's CRI security context follows upstream determineEffectiveSecurityContext: the
// container's fields win over the pod's, the image's USER is the fallback for runAsUser,
// no_new_privs only for an explicit allowPrivilegeEscalation: false, fsGroup before the
// supplemental groups, seccomp Unconfined unless asked (seccompDefault is false), the default
// masked and read-only /proc paths.
func TestContainerSecurityContext(t *testing.T) {
	unmasked := corev1.UnmaskedProcMount
	tests := []struct {
		name     string
		psc      *corev1.PodSecurityContext
		csc      *corev1.SecurityContext
		imageUID *int64
		imageUsr string
		check    func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext)
	}{
		{"nothing set: the image's uid, no no_new_privs, unconfined seccomp, default paths", nil, nil, ptr.To[int64](0), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetRunAsUser() == nil || sc.GetRunAsUser().GetValue() != 0 || sc.GetNoNewPrivs() || sc.GetPrivileged() || sc.GetReadonlyRootfs() {
					t.Errorf("got %v", sc)
				}
				if sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_Unconfined || sc.GetApparmor() != nil {
					t.Errorf("seccomp %v apparmor %v", sc.GetSeccomp(), sc.GetApparmor())
				}
				if !slices.Contains(sc.GetMaskedPaths(), "/proc/kcore") || !slices.Contains(sc.GetReadonlyPaths(), "/proc/sys") {
					t.Errorf("masked %v readonly %v", sc.GetMaskedPaths(), sc.GetReadonlyPaths())
				}
				if sc.GetNamespaceOptions().GetPid() != runtimeapi.NamespaceMode_CONTAINER {
					t.Errorf("namespaces %v", sc.GetNamespaceOptions())
				}
			}},
		{"an image user by name is passed on as a name", nil, nil, nil, "nobody",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetRunAsUser() != nil || sc.GetRunAsUsername() != "nobody" {
					t.Errorf("got user %v name %q", sc.GetRunAsUser(), sc.GetRunAsUsername())
				}
			}},
		{"the container's runAsUser wins over the pod's and the image's", &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](3000)},
			&corev1.SecurityContext{RunAsUser: ptr.To[int64](2000)}, ptr.To[int64](1234), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetRunAsUser().GetValue() != 2000 || sc.GetRunAsGroup().GetValue() != 3000 || sc.GetRunAsUsername() != "" {
					t.Errorf("got %v", sc)
				}
			}},
		{"the pod's runAsUser wins over the image's", &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, nil, ptr.To[int64](1234), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetRunAsUser().GetValue() != 1000 {
					t.Errorf("got %v", sc.GetRunAsUser())
				}
			}},
		{"allowPrivilegeEscalation: false sets no_new_privs", nil, &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)}, ptr.To[int64](0), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !sc.GetNoNewPrivs() {
					t.Error("no_new_privs not set")
				}
			}},
		{"allowPrivilegeEscalation: true does not", nil, &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}, ptr.To[int64](0), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetNoNewPrivs() {
					t.Error("no_new_privs set")
				}
			}},
		{"privileged, read-only rootfs, capabilities", nil, &corev1.SecurityContext{Privileged: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}}}, ptr.To[int64](0), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !sc.GetPrivileged() || !sc.GetReadonlyRootfs() ||
					!slices.Equal(sc.GetCapabilities().GetAddCapabilities(), []string{"NET_ADMIN"}) || !slices.Equal(sc.GetCapabilities().GetDropCapabilities(), []string{"ALL"}) {
					t.Errorf("got %v", sc)
				}
			}},
		{"fsGroup first, then the supplemental groups; Strict policy", &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000), SupplementalGroups: []int64{10, 20},
			SupplementalGroupsPolicy: ptr.To(corev1.SupplementalGroupsPolicyStrict)}, nil, ptr.To[int64](0), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if !slices.Equal(sc.GetSupplementalGroups(), []int64{2000, 10, 20}) || sc.GetSupplementalGroupsPolicy() != runtimeapi.SupplementalGroupsPolicy_Strict {
					t.Errorf("groups %v policy %v", sc.GetSupplementalGroups(), sc.GetSupplementalGroupsPolicy())
				}
			}},
		{"the container's seccomp profile wins over the pod's", &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
			&corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}, ptr.To[int64](0), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault {
					t.Errorf("seccomp %v", sc.GetSeccomp())
				}
			}},
		{"the pod's AppArmor profile, in both forms", &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("k8s-deny")}},
			nil, ptr.To[int64](0), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetApparmor().GetProfileType() != runtimeapi.SecurityProfile_Localhost || sc.GetApparmor().GetLocalhostRef() != "k8s-deny" {
					t.Errorf("apparmor %v", sc.GetApparmor())
				}
			}},
		{"procMount Unmasked: no masked or read-only paths", nil, &corev1.SecurityContext{ProcMount: &unmasked}, ptr.To[int64](0), "",
			func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
				if sc.GetMaskedPaths() == nil || len(sc.GetMaskedPaths()) != 0 || len(sc.GetReadonlyPaths()) != 0 {
					t.Errorf("masked %v readonly %v", sc.GetMaskedPaths(), sc.GetReadonlyPaths())
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod, c := scPod(tc.psc, tc.csc)
			sc, err := containerSecurityContext(pod, c, tc.imageUID, tc.imageUsr)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, sc)
		})
	}
}

// Profiles that cannot be applied are the container's error (CreateContainerConfigError), not
// a silent default.
func TestContainerSecurityContextErrors(t *testing.T) {
	tests := []struct {
		name string
		csc  *corev1.SecurityContext
		want string
	}{
		{"seccomp Localhost without a name", &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}, "localhostProfile must be set"},
		{"seccomp Localhost", &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("audit.json")}}, "not supported"},
		{"AppArmor Localhost without a name", &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost}}, "missing localhost apparmor profile name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod, c := scPod(nil, tc.csc)
			if _, err := containerSecurityContext(pod, c, ptr.To[int64](0), ""); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// The deprecated per-container annotation is read when the container sets no AppArmor field
// (static pods may carry only the annotation), and before the pod's field. The profile also
// comes in the deprecated string form, the only one containerd 1.6 reads.
func TestAppArmorProfile(t *testing.T) {
	pod, c := scPod(&corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}, nil)
	pod.Annotations = map[string]string{corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "app": "runtime/default"}
	p, old, err := appArmorProfile(pod, c)
	if err != nil || p.GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault || old != "runtime/default" {
		t.Errorf("annotation: got %v %q %v", p, old, err)
	}
	c.SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("k8s-deny")}}
	p, old, err = appArmorProfile(pod, c)
	if err != nil || p.GetLocalhostRef() != "k8s-deny" || old != "localhost/k8s-deny" {
		t.Errorf("the container's field: got %v %q %v", p, old, err)
	}
	pod.Annotations, c.SecurityContext = nil, nil
	if p, old, err = appArmorProfile(pod, c); err != nil || p.GetProfileType() != runtimeapi.SecurityProfile_Unconfined || old != "unconfined" {
		t.Errorf("the pod's field: got %v %q %v", p, old, err)
	}
}

// Upstream verifyRunAsNonRoot and its messages, which the container's Waiting state shows.
func TestVerifyRunAsNonRoot(t *testing.T) {
	nonRoot := &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
	tests := []struct {
		name     string
		psc      *corev1.PodSecurityContext
		csc      *corev1.SecurityContext
		imageUID *int64
		imageUsr string
		want     string // "" = allowed
	}{
		{"runAsNonRoot unset: anything goes", nil, nil, ptr.To[int64](0), "", ""},
		{"runAsNonRoot false", nil, &corev1.SecurityContext{RunAsNonRoot: ptr.To(false)}, ptr.To[int64](0), "", ""},
		{"explicit runAsUser 0", nil, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](0)}, ptr.To[int64](1234), "",
			`container's runAsUser breaks non-root policy (pod: "web_default(uid-1)", container: app)`},
		{"explicit non-root runAsUser, root image", nil, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000)}, ptr.To[int64](0), "", ""},
		{"the pod's runAsUser counts", &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, nonRoot, ptr.To[int64](0), "", ""},
		{"the pod's runAsNonRoot counts", &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, nil, ptr.To[int64](0), "",
			`container has runAsNonRoot and image will run as root (pod: "web_default(uid-1)", container: app)`},
		{"image runs as root", nil, nonRoot, ptr.To[int64](0), "",
			`container has runAsNonRoot and image will run as root (pod: "web_default(uid-1)", container: app)`},
		{"image runs as 1234", nil, nonRoot, ptr.To[int64](1234), "", ""},
		{"image user by name", nil, nonRoot, nil, "nobody",
			`container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root (pod: "web_default(uid-1)", container: app)`},
		{"image uid out of range", nil, nonRoot, ptr.To[int64](-5), "", "container has runAsNonRoot and image has an invalid user id (-5)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod, c := scPod(tc.psc, tc.csc)
			err := verifyRunAsNonRoot(pod, c, tc.imageUID, tc.imageUsr)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// The sandbox gets the pod-level fields (upstream generatePodSandboxLinuxConfig): sysctls in
// dotted form, user and group, fsGroup then the supplemental groups, the runtime's default
// seccomp profile, and Privileged when any container (init ones too) is privileged.
func TestSandboxLinuxConfig(t *testing.T) {
	pod, _ := scPod(&corev1.PodSecurityContext{
		RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](3000), FSGroup: ptr.To[int64](2000), SupplementalGroups: []int64{5},
		Sysctls: []corev1.Sysctl{{Name: "kernel/shm_rmid_forced", Value: "1"}, {Name: "net.ipv4.ip_local_port_range", Value: "1024 65535"}},
	}, nil)
	pod.Spec.InitContainers = []corev1.Container{{Name: "setup", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
	lc := sandboxLinuxConfig(pod)
	sc := lc.GetSecurityContext()
	if sc.GetRunAsUser().GetValue() != 1000 || sc.GetRunAsGroup().GetValue() != 3000 || !slices.Equal(sc.GetSupplementalGroups(), []int64{2000, 5}) {
		t.Errorf("user %v group %v groups %v", sc.GetRunAsUser(), sc.GetRunAsGroup(), sc.GetSupplementalGroups())
	}
	if !sc.GetPrivileged() || sc.GetSeccomp().GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("privileged %v seccomp %v", sc.GetPrivileged(), sc.GetSeccomp())
	}
	if lc.GetSysctls()["kernel.shm_rmid_forced"] != "1" || lc.GetSysctls()["net.ipv4.ip_local_port_range"] != "1024 65535" || len(lc.GetSysctls()) != 2 {
		t.Errorf("sysctls %v", lc.GetSysctls())
	}

	plain, _ := scPod(nil, &corev1.SecurityContext{Privileged: ptr.To(false)})
	if sc := sandboxLinuxConfig(plain).GetSecurityContext(); sc.GetPrivileged() || sc.GetRunAsUser() != nil || sc.GetNamespaceOptions() == nil {
		t.Errorf("a pod without privileged containers or securityContext: %v", sc)
	}
}

// Upstream component-helpers sysctl.NormalizeName.
func TestNormalizeSysctlName(t *testing.T) {
	for in, want := range map[string]string{
		"kernel.shm_rmid_forced":           "kernel.shm_rmid_forced",
		"kernel/shm_rmid_forced":           "kernel.shm_rmid_forced",
		"net/ipv4/conf/eno2.100/rp_filter": "net.ipv4.conf.eno2/100.rp_filter",
		"net.ipv4.conf.eno2/100.rp_filter": "net.ipv4.conf.eno2/100.rp_filter",
		"":                                 "",
	} {
		if got := NormalizeSysctlName(in); got != want {
			t.Errorf("NormalizeSysctlName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The hostname is cut to the kernel's 63 characters and loses a trailing '-' or '.' (upstream
// truncatePodHostnameIfNeeded); runc's sethostname fails on a longer one, so a pod with a long
// name never started.
func TestPodHostname(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b" + strings.Repeat("c", 10) // 74 characters, '-' at 63
	tests := []struct {
		name     string
		podName  string
		hostname string
		override *string
		want     string
	}{
		{"the pod's name", "web", "", nil, "web"},
		{"spec.hostname", "web", "db", nil, "db"},
		{"spec.hostnameOverride wins", "web", "db", ptr.To("db.example.com"), "db.example.com"},
		{"exactly 63", strings.Repeat("x", 63), "", nil, strings.Repeat("x", 63)},
		{"cut at 63, trailing '-' dropped", long, "", nil, strings.Repeat("a", 62)},
		{"cut at 63", strings.Repeat("y", 70), "", nil, strings.Repeat("y", 63)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.podName}, Spec: corev1.PodSpec{Hostname: tc.hostname, HostnameOverride: tc.override}}
			if got := podHostname(pod); got != tc.want {
				t.Errorf("podHostname = %q, want %q", got, tc.want)
			}
		})
	}
}

// Through SyncPod on the fake runtime, whose images have no USER (so root): a container with
// runAsNonRoot is not created and waits as CreateContainerConfigError with upstream's message;
// with a non-root runAsUser it runs.
func TestRunAsNonRootThroughSyncPod(t *testing.T) {
	m, _, ctx, _ := newFakeRuntime(t)
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
	res := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod))
	want := `container has runAsNonRoot and image will run as root (pod: "web_default(uid-1)", container: app)`
	if e := res.ContainerErrors["app"]; e.Reason != ReasonCreateConfigError || e.Message != want {
		t.Fatalf("container errors %+v, want %s: %q", res.ContainerErrors, ReasonCreateConfigError, want)
	}
	if c := podStatus(t, ctx, m, pod).FindContainer("app"); c != nil {
		t.Fatalf("a container was created: %+v", c)
	}

	pod.Spec.Containers[0].SecurityContext.RunAsUser = ptr.To[int64](1000)
	if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
		t.Fatal(err)
	}
	if c := podStatus(t, ctx, m, pod).FindContainer("app"); c == nil || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container %+v, want it running", c)
	}
}
