package labs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Lab 10: the node restarted with the lab's reservations and capacity; one pod per QoS class
// (their resources in the runtime, one burning more cpu than its limit); a pod bound to the node
// past the scheduler that does not fit beside them; a container that allocates over its memory
// limit; a BestEffort pod that takes the node under memory.available. The check reads
// allocatable, the runtime's view over CRI, /stats/summary, the metrics API, the pods and Events.
func (n *node) lab10(t *testing.T) {
	n.ensureStarted(t)
	n.expectMissing(t, "10", "node "+n.name+" has ")
	dir := labDir("10-resource-management")
	// make run starts metrics-server, and the node with a serving certificate from a CSR, which
	// hack/run.sh approves (metrics-server verifies it against the cluster CA).
	cluster.StartMetricsServer(t, 10*time.Second)
	n.restart(t, "--config", filepath.Join(dir, "kubelet-resources.yaml"), "--node-capacity", "cpu=2,memory=4Gi", "--rotate-server-certificates")
	n.approveServingCSR(t)
	// The Node keeps its old status until the restarted kubelet's first PATCH.
	waitFor(t, 30*time.Second, "allocatable cpu 1700m, memory 3Gi (2 − 200m − 100m; 4Gi − 512Mi − 256Mi − 256Mi)", func() (bool, string) {
		got := kubectl(t, "get", "node", n.name, "-o", "jsonpath={.status.allocatable.cpu} {.status.allocatable.memory}")
		return got == "1700m 3Gi", got
	})

	kubectl(t, "apply", "-f", filepath.Join(dir, "qos.yaml"))
	waitRunning(t, "lab10-guaranteed", "lab10-burstable", "lab10-besteffort")
	if got := kubectl(t, "get", "pods", "lab10-guaranteed", "lab10-burstable", "lab10-besteffort", "-o", "jsonpath={.items[*].status.qosClass}"); got != "Guaranteed Burstable BestEffort" {
		t.Errorf("QoS classes %q, want Guaranteed Burstable BestEffort", got)
	}

	// sed "s/NODE_NAME/$NODE/" too-big.yaml | kubectl apply -f -
	manifest, err := os.ReadFile(filepath.Join(dir, "too-big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bound := filepath.Join(t.TempDir(), "too-big.yaml")
	if err := os.WriteFile(bound, []byte(strings.ReplaceAll(string(manifest), "NODE_NAME", n.name)), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "apply", "-f", bound)

	kubectl(t, "apply", "-f", filepath.Join(dir, "oom.yaml"))
	// Exercise 6: a BestEffort pod leaves less than memory.available<256Mi of the node's 4Gi.
	kubectl(t, "apply", "-f", filepath.Join(dir, "hog.yaml"))
	// The OOM kill comes 10 s after lab10-oom starts; kubectl top needs two scrapes 10 s apart;
	// the eviction manager looks every 10 s, the node reports MemoryPressure at its next status.
	n.expectPass(t, "10", 2*time.Minute)
	t.Logf("kubectl top pod:\n%s", kubectl(t, "top", "pod"))
}

// approveServingCSR approves the node's pending kubelet-serving CSR as hack/run.sh does (kubectl
// certificate approve), once it is there.
func (n *node) approveServingCSR(t *testing.T) {
	t.Helper()
	list := `{range .items[?(@.spec.signerName=="kubernetes.io/kubelet-serving")]}{.metadata.name} {.spec.username} {.status.conditions[*].type}{"\n"}{end}`
	waitFor(t, time.Minute, "the kubelet-serving CSR of "+n.name, func() (bool, string) {
		out := kubectl(t, "get", "csr", "-o", "jsonpath="+list)
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[1] == "system:node:"+n.name {
				kubectl(t, "certificate", "approve", f[0])
				return true, ""
			}
		}
		return false, out
	})
	waitFor(t, time.Minute, "the node's serving certificate", func() (bool, string) {
		_, err := os.Stat(filepath.Join(n.rootDir, "pki", "kubelet-server-current.pem"))
		return err == nil, fmt.Sprint(err)
	})
}
