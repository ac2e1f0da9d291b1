// Package kubelet is the wiring: the Kubelet struct holds every component and Run starts them in
// the documented order (ARCHITECTURE.md), then waits for the context to end and for every loop to
// stop. Upstream counterpart: pkg/kubelet/kubelet.go (Kubelet.Run) — which also owns the syncLoop;
// ours gains it with the pod lifecycle.
//
// Start order in Run: client certificate rotation → node registration (blocks, retrying, until
// the Node exists) → Lease heartbeat → node status loop → pod cache and PLEG → status manager →
// pod workers → pod sources → syncLoop. Shutdown is the reverse, by context cancellation: every
// loop returns when ctx is done and Run waits for all of them.
//
// The syncLoop (pods.go, upstream kubelet.go syncLoopIteration) waits on four channels:
//
//	configCh        pod sources: ADD / UPDATE / DELETE / REMOVE / RECONCILE → pod manager + workers
//	plegCh          PLEG: a container started or died → that pod's worker syncs
//	syncCh (1 s)    pods whose resync or retry time came (pod workers' DuePods)
//	housekeeping    (2 s) stop workers of pods no longer desired, forget their statuses,
//	                remove their sandboxes from the runtime, delete orphaned mirror pods
//
// A pod worker calls back into SyncPod / SyncTerminatingPod / SyncTerminatedPod here: compute
// the API status (generateAPIPodStatus, pure), hand it to the status manager, and let kuberuntime
// start or stop containers.
package kubelet
