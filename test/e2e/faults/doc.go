// Package faults holds the e2e tests of faults a kubelet must survive, against the real local
// control plane, with minikubelet and its fake runtime as real processes:
//
//   - the API server stopped for a minute and started again (TestAPIServerOutage);
//   - the container runtime killed and started again, empty (TestRuntimeRestart);
//   - the kubelet SIGKILLed while it starts 20 pods, and started again (TestKubeletKilledWhileStartingPods);
//   - a thousand pod create/delete cycles (TestPodChurn): nothing of a deleted pod stays behind;
//   - with EventedPLEG, the runtime's event stream refused as containerd 1.6 refuses it, and back
//     (TestEventedPLEG; TestGenericPLEGWithoutTheGate: without the gate nothing changes).
//
// Every node here uses a standalone fake runtime (`minikubelet fake-runtime serve`), so the runtime
// and the kubelet can fail independently, as containerd and the kubelet do on a real node.
//
// Upstream counterpart: k8s.io/kubernetes test/e2e_node (restart_test.go: "should recover from
// the container runtime being restarted"; the kubelet restart tests; density and resource-usage
// tests for churn; none for the evented PLEG, whose upstream tests are unit tests).
package faults
