package container

// The decisions about a container's restart that the runtime (computePodActions), the pod
// phase and the prober share, each written once here (upstream: podutil in
// pkg/api/v1/pod/util.go and kubecontainer.ShouldContainerBeRestarted in
// pkg/kubelet/container/helpers.go).

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// IsRestartableInitContainer reports whether c has restartPolicy Always: an init container that
// does is a sidecar, which starts in order with the init containers but keeps running beside the
// app (KEP-753; upstream podutil.IsRestartableInitContainer). It does not check that c is an init
// container: since KEP-5307 a regular container may have a restartPolicy too.
func IsRestartableInitContainer(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// ShouldContainerBeRestarted decides whether c, not running, should be started (again): never
// once the pod is being deleted; always if it has no instance (never ran, or was removed), was
// only created, or is in an unknown state; otherwise, after an exit, as ContainerShouldRestart
// says for its exit code (upstream kubecontainer.ShouldContainerBeRestarted with the
// ContainerRestartRules gate on, its v1.36 default). Pure.
func ShouldContainerBeRestarted(c *corev1.Container, pod *corev1.Pod, status *PodStatus) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	var cs *ContainerStatus
	if status != nil {
		cs = status.FindContainer(c.Name)
	}
	switch {
	case cs == nil:
		return true
	case cs.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
		return false
	case cs.State == runtimeapi.ContainerState_CONTAINER_CREATED || cs.State == runtimeapi.ContainerState_CONTAINER_UNKNOWN:
		return true
	}
	return ContainerShouldRestart(c, &pod.Spec, cs.ExitCode)
}

// ContainerShouldRestart decides whether c, exited with exitCode, runs again (upstream
// podutil.ContainerShouldRestart, KEP-5307 ContainerRestartRules, on by default since v1.35):
//
//  1. when c has its own restartPolicy, the first of its restartPolicyRules that matches the
//     exit code: action Restart restarts it, even under a pod restartPolicy Never;
//  2. then c's own restartPolicy (Always, OnFailure, Never), which overrides the pod's;
//  3. then the pod's restartPolicy (Always when unset).
//
// A matching RestartAllContainers rule (KEP-5532, beta in v1.36) restarts c as Restart does:
// minikubelet restarts only that container, not the pod's others (see doc.go). Pure.
func ContainerShouldRestart(c *corev1.Container, spec *corev1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := FindMatchingContainerRestartRule(c, exitCode); ok &&
			(rule.Action == corev1.ContainerRestartRuleActionRestart || rule.Action == corev1.ContainerRestartRuleActionRestartAllContainers) {
			return true
		}
		switch *c.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	default:
		return true
	}
}

// RestartsWithoutExitCode decides whether c runs again after it is stopped for a reason that has
// no exit code to match rules against — a failed liveness or startup probe, an unknown state: c's
// own restartPolicy when set (anything but Never restarts), else the pod's (anything but Never).
// Upstream writes this inline in computePodActions and computeInitContainerActions ("only
// container-level restart policy is used"). Pure.
func RestartsWithoutExitCode(c *corev1.Container, spec *corev1.PodSpec) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != corev1.ContainerRestartPolicyNever
	}
	return spec.RestartPolicy != corev1.RestartPolicyNever
}

// RunsOnce reports whether c, once it has succeeded (exited 0), is not started again in a new
// sandbox: c's own restartPolicy OnFailure, or, when c has none, the pod's OnFailure (upstream
// computePodActions, the containers to start in a new sandbox). Pure.
func RunsOnce(c *corev1.Container, spec *corev1.PodSpec) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy == corev1.ContainerRestartPolicyOnFailure
	}
	return spec.RestartPolicy == corev1.RestartPolicyOnFailure
}

// FindMatchingContainerRestartRule returns the first of c's restartPolicyRules whose exit codes
// match exitCode (operator In: one of the values; NotIn: none of them), and true; or false
// (upstream podutil.FindMatchingContainerRestartRule). Pure.
func FindMatchingContainerRestartRule(c *corev1.Container, exitCode int32) (corev1.ContainerRestartRule, bool) {
	for _, rule := range c.RestartPolicyRules {
		if rule.ExitCodes == nil {
			continue
		}
		in := false
		for _, v := range rule.ExitCodes.Values {
			in = in || v == exitCode
		}
		switch rule.ExitCodes.Operator {
		case corev1.ContainerRestartRuleOnExitCodesOpIn:
			if in {
				return rule, true
			}
		case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !in {
				return rule, true
			}
		}
	}
	return corev1.ContainerRestartRule{}, false
}
