package framework

import (
	"errors"
	"fmt"
	"strings"
)

// StopComponent stops one component of the local control plane by its recorded PID (SIGTERM,
// then SIGKILL after 20 s), e.g. "kube-apiserver"; the others keep running. It needs the local
// control plane: an external cluster is not ours to stop.
func (c *Cluster) StopComponent(name string) error {
	return c.clusterVerb("stop-component", name)
}

// StartComponent starts a component stopped by StopComponent again, with the same flags, ports
// and certificates, and returns once it is healthy (for kube-apiserver: /readyz answers 200).
// Its new PID is recorded, so Stop stops it too.
func (c *Cluster) StartComponent(name string) error {
	return c.clusterVerb("start-component", name)
}

// Status returns an error naming every component of the local control plane that is not running
// (`cluster status`), with the tail of its log.
func (c *Cluster) Status() error {
	return c.clusterVerb("status")
}

func (c *Cluster) clusterVerb(args ...string) error {
	if c.supervisor == nil {
		return errors.New("managing components needs the local control plane, not MINIKUBELET_E2E_KUBECONFIG")
	}
	if out, err := upSh(append(args, "--state-dir", c.stateDir)...).CombinedOutput(); err != nil {
		return fmt.Errorf("hack/cluster/up.sh %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
