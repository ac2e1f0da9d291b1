package prober

// What happens to a container after a probe verdict or an exit: will it run again (so its worker
// stays). The grace period of the kill that follows a failure is kuberuntime's
// (killGracePeriod).

import (
	corev1 "k8s.io/api/core/v1"
)

// willRestart reports whether c, not running and exited with exitCode, will be started again,
// so that its worker should wait for the new container (upstream doProbe with the v1.36 default
// gates ContainerRestartRules and RestartAllContainersOnContainerExits:
// podutil.ContainerShouldRestart || kubecontainer.ShouldAllContainersRestart). Pure.
func willRestart(pod *corev1.Pod, c *corev1.Container, status *corev1.PodStatus, exitCode int32) bool {
	return containerShouldRestart(c, &pod.Spec, exitCode) || allContainersRestarting(pod, status)
}

// containerShouldRestart: a matching restart rule (Restart, RestartAllContainers), then the
// container's restartPolicy, then the pod's (Always when unset).
func containerShouldRestart(c *corev1.Container, spec *corev1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := matchingRestartRule(c, exitCode); ok &&
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

// allContainersRestarting: the pod has the AllContainersRestarting condition, or one of its
// containers exited with a code whose rule says RestartAllContainers.
func allContainersRestarting(pod *corev1.Pod, status *corev1.PodStatus) bool {
	for _, cond := range status.Conditions {
		if cond.Type == corev1.AllContainersRestarting && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	exited := map[string]int32{}
	for _, list := range [][]corev1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses} {
		for _, cs := range list {
			if cs.State.Terminated != nil {
				exited[cs.Name] = cs.State.Terminated.ExitCode
			}
		}
	}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			code, ok := exited[list[i].Name]
			if !ok {
				continue
			}
			if rule, ok := matchingRestartRule(&list[i], code); ok && rule.Action == corev1.ContainerRestartRuleActionRestartAllContainers {
				return true
			}
		}
	}
	return false
}

// matchingRestartRule returns the first of c's restartPolicyRules whose exit codes match.
func matchingRestartRule(c *corev1.Container, exitCode int32) (corev1.ContainerRestartRule, bool) {
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
