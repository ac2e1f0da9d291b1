// Package lease is the node heartbeat: a Lease named after the node in kube-node-lease, renewed
// every quarter of its duration (KEP-589). kube-controller-manager's node lifecycle controller
// reads the Lease's renewTime; when it is older than --node-monitor-grace-period the node is
// marked NotReady/Unknown, and later its pods are evicted.
//
// Upstream counterpart: k8s.io/component-helpers/apimachinery/lease/controller.go, which the
// kubelet uses with a heartbeat client (pkg/kubelet/kubelet.go, NewNodeLeaseController).
//
// The loop (Run) is one turn of syncOnce per tick:
//
//	no cached Lease ──GET──▶ NotFound ──CREATE (owner: the Node)──▶ cached
//	cached Lease ──UPDATE renewTime=now──▶ cached ← the response (no GET per renewal)
//	error ──▶ drop the cache; retry after 200 ms, 400 ms, … capped at 7 s
//	success ──▶ wait renewInterval (duration/4) + up to 4% jitter
//
// Simplified: one loop for create and renew (upstream has a separate "ensure" backoff loop and
// five quick retries of an update before it falls back to a GET).
package lease
