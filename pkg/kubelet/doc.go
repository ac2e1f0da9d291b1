// Package kubelet is the wiring: the Kubelet struct holds every component and Run starts them in
// the documented order (ARCHITECTURE.md), then waits for the context to end and for every loop to
// stop. Upstream counterpart: pkg/kubelet/kubelet.go (Kubelet.Run) — which also owns the syncLoop;
// ours gains it with the pod lifecycle.
//
// Start order in Run: client certificate rotation → node registration (blocks, retrying, until
// the Node exists) → Lease heartbeat → node status loop. Shutdown is the reverse, by context
// cancellation: every loop returns when ctx is done and Run waits for all of them.
package kubelet
