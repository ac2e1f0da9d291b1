package kuberuntime

// The pod's and containers' securityContext in CRI terms (upstream:
// pkg/kubelet/kuberuntime/security_context.go determineEffectiveSecurityContext and
// convertToRuntimeSecurityContext; security_context_others.go verifyRunAsNonRoot; helpers.go
// getSeccompProfile and getAppArmorProfile; kuberuntime_sandbox.go
// generatePodSandboxLinuxConfig; pkg/securitycontext/util.go; pkg/security/apparmor/helpers.go).
//
// Two levels, one rule: a container's own securityContext wins, field by field, over the pod's.
// The sandbox gets the pod-level fields (user, groups, sysctls) and is privileged as soon as one
// of the pod's containers is.

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandboxLinuxConfig is the Linux part of a pod's PodSandboxConfig (upstream
// generatePodSandboxLinuxConfig, without the cgroup parent and user namespaces).
func sandboxLinuxConfig(pod *corev1.Pod) *runtimeapi.LinuxPodSandboxConfig {
	sc := &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: namespaceOptions(pod),
		// The runtime must allow what a privileged container will do in the pod's namespaces.
		Privileged: hasPrivilegedContainer(pod),
		// The pause process always runs under the runtime's default profile, so that a pod may
		// ask for a stricter one than its sandbox could live with (upstream issue #84623).
		Seccomp: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
	}
	lc := &runtimeapi.LinuxPodSandboxConfig{SecurityContext: sc, Sysctls: map[string]string{}}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return lc
	}
	// Sysctls are set in the sandbox's namespaces, which its containers share. runc only knows
	// the dotted form, so kernel/shm_rmid_forced becomes kernel.shm_rmid_forced (upstream
	// ConvertPodSysctlsVariableToDotsSeparator, before RunPodSandbox).
	for _, s := range psc.Sysctls {
		lc.Sysctls[NormalizeSysctlName(s.Name)] = s.Value
	}
	if psc.RunAsUser != nil {
		sc.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
	}
	if psc.RunAsGroup != nil {
		sc.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
	}
	if psc.FSGroup != nil {
		sc.SupplementalGroups = append(sc.SupplementalGroups, *psc.FSGroup)
	}
	sc.SupplementalGroups = append(sc.SupplementalGroups, psc.SupplementalGroups...)
	// The API server admits only Merge and Strict, which CRI spells the same; anything else
	// stays at CRI's default, Merge (upstream returns an error there).
	if p, err := supplementalGroupsPolicy(psc.SupplementalGroupsPolicy); err == nil {
		sc.SupplementalGroupsPolicy = p
	}
	sc.SelinuxOptions = seLinuxOptions(psc.SELinuxOptions)
	return lc
}

// containerSecurityContext is the CRI security context of container c (upstream
// determineEffectiveSecurityContext). imageUID and imageUser are the image's USER, as
// imageUser reports it; they apply only when neither the pod nor the container sets runAsUser.
func containerSecurityContext(pod *corev1.Pod, c *corev1.Container, imageUID *int64, imageUser string) (*runtimeapi.LinuxContainerSecurityContext, error) {
	eff := effectiveSecurityContext(pod, c)
	sc := &runtimeapi.LinuxContainerSecurityContext{
		Capabilities:     capabilities(eff.Capabilities),
		SelinuxOptions:   seLinuxOptions(eff.SELinuxOptions),
		Privileged:       eff.Privileged != nil && *eff.Privileged,
		ReadonlyRootfs:   eff.ReadOnlyRootFilesystem != nil && *eff.ReadOnlyRootFilesystem,
		NamespaceOptions: namespaceOptions(pod),
		// Only an explicit allowPrivilegeEscalation: false sets no_new_privs; unset, a setuid
		// binary still works (upstream securitycontext.AddNoNewPrivileges). The API server
		// rejects false together with privileged or CAP_SYS_ADMIN.
		NoNewPrivs: eff.AllowPrivilegeEscalation != nil && !*eff.AllowPrivilegeEscalation,
		// The default procMount masks and write-protects parts of /proc and /sys; Unmasked
		// (which needs a user namespace) leaves them alone.
		MaskedPaths:   maskedPaths(eff.ProcMount),
		ReadonlyPaths: readonlyPaths(eff.ProcMount),
	}
	if eff.RunAsUser != nil {
		sc.RunAsUser = &runtimeapi.Int64Value{Value: *eff.RunAsUser}
	} else {
		if imageUID != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *imageUID}
		}
		sc.RunAsUsername = imageUser
	}
	if eff.RunAsGroup != nil {
		sc.RunAsGroup = &runtimeapi.Int64Value{Value: *eff.RunAsGroup}
	}
	var err error
	if sc.Seccomp, err = seccompProfile(pod, c); err != nil {
		return nil, err
	}
	// Both AppArmor fields, as upstream: containerd 1.6 (Debian 12) reads only the deprecated one.
	if sc.Apparmor, sc.ApparmorProfile, err = appArmorProfile(pod, c); err != nil { //nolint:staticcheck // SA1019: see above
		return nil, err
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.FSGroup != nil {
			sc.SupplementalGroups = append(sc.SupplementalGroups, *psc.FSGroup)
		}
		sc.SupplementalGroups = append(sc.SupplementalGroups, psc.SupplementalGroups...)
		if sc.SupplementalGroupsPolicy, err = supplementalGroupsPolicy(psc.SupplementalGroupsPolicy); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// effectiveSecurityContext is the pod's user fields and SELinux options overlaid by the
// container's own securityContext, field by field (upstream
// securitycontext.DetermineEffectiveSecurityContext). The result is a copy; never nil.
func effectiveSecurityContext(pod *corev1.Pod, c *corev1.Container) *corev1.SecurityContext {
	eff := &corev1.SecurityContext{}
	if psc := pod.Spec.SecurityContext; psc != nil {
		eff.SELinuxOptions = psc.SELinuxOptions
		eff.RunAsUser, eff.RunAsGroup, eff.RunAsNonRoot = psc.RunAsUser, psc.RunAsGroup, psc.RunAsNonRoot
	}
	csc := c.SecurityContext
	if csc == nil {
		return eff.DeepCopy()
	}
	pick := func(dst **int64, src *int64) {
		if src != nil {
			*dst = src
		}
	}
	pickBool := func(dst **bool, src *bool) {
		if src != nil {
			*dst = src
		}
	}
	pick(&eff.RunAsUser, csc.RunAsUser)
	pick(&eff.RunAsGroup, csc.RunAsGroup)
	pickBool(&eff.RunAsNonRoot, csc.RunAsNonRoot)
	pickBool(&eff.Privileged, csc.Privileged)
	pickBool(&eff.ReadOnlyRootFilesystem, csc.ReadOnlyRootFilesystem)
	pickBool(&eff.AllowPrivilegeEscalation, csc.AllowPrivilegeEscalation)
	if csc.SELinuxOptions != nil {
		eff.SELinuxOptions = csc.SELinuxOptions
	}
	eff.Capabilities, eff.ProcMount = csc.Capabilities, csc.ProcMount
	return eff.DeepCopy()
}

// verifyRunAsNonRoot refuses to run a container with runAsNonRoot whose user is, or may be,
// root: an explicit runAsUser 0, an image USER 0 (or none, which is root), or an image USER
// given by name, which the kubelet cannot resolve (upstream security_context_others.go). The
// error becomes the container's CreateContainerConfigError.
func verifyRunAsNonRoot(pod *corev1.Pod, c *corev1.Container, imageUID *int64, imageUser string) error {
	eff := effectiveSecurityContext(pod, c)
	if eff.RunAsNonRoot == nil || !*eff.RunAsNonRoot {
		return nil
	}
	who := fmt.Sprintf("(pod: %q, container: %s)", podDesc(pod), c.Name)
	switch {
	case eff.RunAsUser != nil && *eff.RunAsUser == 0:
		return fmt.Errorf("container's runAsUser breaks non-root policy %s", who)
	case eff.RunAsUser != nil:
		return nil
	case imageUID == nil && imageUser != "":
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root %s", imageUser, who)
	case imageUID == nil:
		return nil
	case *imageUID == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root %s", who)
	}
	if errs := validation.IsValidUserID(*imageUID); len(errs) > 0 {
		return fmt.Errorf("container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)): %s %s",
			*imageUID, math.MaxInt32, strings.Join(errs, "; "), who)
	}
	return nil
}

// seccompProfile is the container's seccomp profile: its own, else the pod's, else Unconfined
// (upstream getSeccompProfile with the kubelet's seccompDefault at its default, false).
func seccompProfile(pod *corev1.Pod, c *corev1.Container) (*runtimeapi.SecurityProfile, error) {
	var p *corev1.SeccompProfile
	if psc := pod.Spec.SecurityContext; psc != nil {
		p = psc.SeccompProfile
	}
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		p = c.SecurityContext.SeccompProfile
	}
	switch {
	case p == nil:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
	case p.Type == corev1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	case p.Type == corev1.SeccompProfileTypeLocalhost:
		// Upstream reads <root-dir>/seccomp/<localhostProfile>; our kuberuntime is not given
		// the root directory, so it says so instead of handing the runtime a relative path.
		name := ""
		if p.LocalhostProfile != nil {
			name = *p.LocalhostProfile
		}
		if name == "" {
			return nil, errors.New("localhostProfile must be set if seccompProfile type is Localhost")
		}
		return nil, fmt.Errorf("seccomp profile %q: Localhost profiles are not supported by minikubelet (it has no <root-dir>/seccomp); use RuntimeDefault", filepath.Clean(name))
	default:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
	}
}

// appArmorProfile is the container's AppArmor profile, in the CRI field and in the deprecated
// string form older runtimes read; nil when neither the container, the deprecated
// container.apparmor.security.beta.kubernetes.io/<name> annotation nor the pod sets one — the
// runtime then applies its default (upstream getAppArmorProfile, apparmor.GetProfile).
func appArmorProfile(pod *corev1.Pod, c *corev1.Container) (*runtimeapi.SecurityProfile, string, error) {
	p := appArmorSpec(pod, c)
	if p == nil {
		return nil, "", nil
	}
	switch p.Type {
	case corev1.AppArmorProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, corev1.DeprecatedAppArmorBetaProfileRuntimeDefault, nil
	case corev1.AppArmorProfileTypeUnconfined:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, corev1.DeprecatedAppArmorBetaProfileNameUnconfined, nil
	case corev1.AppArmorProfileTypeLocalhost:
		if p.LocalhostProfile == nil {
			return nil, "", errors.New("missing localhost apparmor profile name")
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: *p.LocalhostProfile},
			corev1.DeprecatedAppArmorBetaProfileNamePrefix + *p.LocalhostProfile, nil
	default:
		return nil, "", fmt.Errorf("unknown apparmor profile type: %q", p.Type)
	}
}

// appArmorSpec: the container's field, else the deprecated annotation (static pods may carry
// only that), else the pod's field.
func appArmorSpec(pod *corev1.Pod, c *corev1.Container) *corev1.AppArmorProfile {
	if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
		return c.SecurityContext.AppArmorProfile
	}
	if v, ok := pod.Annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]; ok {
		switch {
		case v == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault:
			return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
		case v == corev1.DeprecatedAppArmorBetaProfileNameUnconfined:
			return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		case strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix):
			name := strings.TrimPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix)
			return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
		}
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		return psc.AppArmorProfile
	}
	return nil
}

func capabilities(c *corev1.Capabilities) *runtimeapi.Capability {
	if c == nil {
		return nil
	}
	out := &runtimeapi.Capability{AddCapabilities: []string{}, DropCapabilities: []string{}}
	for _, a := range c.Add {
		out.AddCapabilities = append(out.AddCapabilities, string(a))
	}
	for _, d := range c.Drop {
		out.DropCapabilities = append(out.DropCapabilities, string(d))
	}
	return out
}

func seLinuxOptions(o *corev1.SELinuxOptions) *runtimeapi.SELinuxOption {
	if o == nil {
		return nil
	}
	return &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
}

func supplementalGroupsPolicy(p *corev1.SupplementalGroupsPolicy) (runtimeapi.SupplementalGroupsPolicy, error) {
	if p == nil {
		return runtimeapi.SupplementalGroupsPolicy_Merge, nil
	}
	v, ok := runtimeapi.SupplementalGroupsPolicy_value[string(*p)]
	if !ok {
		return runtimeapi.SupplementalGroupsPolicy_Merge, fmt.Errorf("unsupported supplementalGroupsPolicy: %s", *p)
	}
	return runtimeapi.SupplementalGroupsPolicy(v), nil
}

// hasPrivilegedContainer: is any init, sidecar or regular container privileged (upstream
// kubecontainer.HasPrivilegedContainer)?
func hasPrivilegedContainer(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				return true
			}
		}
	}
	return false
}

// maskedPaths and readonlyPaths are what a container must not see or change of the host's /proc
// and /sys; the same lists as Docker and containerd use (upstream securitycontext
// ConvertToRuntimeMaskedPaths, ConvertToRuntimeReadonlyPaths). Unmasked: none.
func maskedPaths(procMount *corev1.ProcMountType) []string {
	if procMount != nil && *procMount == corev1.UnmaskedProcMount {
		return []string{}
	}
	paths := []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
		"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
	}
	// Upstream adds the thermal_throttle directory of every possible CPU that has one.
	thermal, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*/thermal_throttle") // the pattern is valid
	return append(paths, thermal...)
}

func readonlyPaths(procMount *corev1.ProcMountType) []string {
	if procMount != nil && *procMount == corev1.UnmaskedProcMount {
		return []string{}
	}
	return []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
}

// NormalizeSysctlName writes a sysctl with '/' separators in the dotted form, swapping the two
// characters: net/ipv4/conf/eno2.100/rp_filter is net.ipv4.conf.eno2/100.rp_filter (upstream
// component-helpers sysctl.NormalizeName). A name whose first separator is a dot is kept.
func NormalizeSysctlName(name string) string {
	i := strings.IndexAny(name, "./")
	if i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}
