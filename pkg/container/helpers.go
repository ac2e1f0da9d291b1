package container

import (
	corev1 "k8s.io/api/core/v1"
)

// IsRestartableInitContainer reports whether c is a sidecar: an init container with
// restartPolicy Always, which starts in order with the init containers but keeps running beside
// the app (KEP-753; upstream podutil.IsRestartableInitContainer).
func IsRestartableInitContainer(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
