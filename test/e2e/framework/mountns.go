package framework

import (
	"os"
)

// inMountNSEnv marks the re-executed test binary that already runs in its private mount namespace.
const inMountNSEnv = "MINIKUBELET_E2E_MOUNTNS"

// InPrivateMounts runs this test binary again in a mount namespace of its own (`unshare --mount
// --propagation private`), so the mounts the processes it starts make — containerd's rootfs
// overlays, a kubelet's tmpfs for an emptyDir with medium Memory — stay inside it and vanish with
// it; the host's mount table never changes. The processes share the namespace, so containerd sees
// what minikubelet mounts, as on a real node.
//
// Call it first in TestMain, as root. In the outer process it returns done=true and the inner
// run's exit code; in the inner process done=false.
func InPrivateMounts() (done bool, code int) {
	if os.Getenv(inMountNSEnv) == "1" {
		return false, 0
	}
	return runUnshared([]string{"--mount", "--propagation", "private"}, append(os.Environ(), inMountNSEnv+"=1"))
}
