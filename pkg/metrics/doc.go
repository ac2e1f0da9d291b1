// Package metrics holds the kubelet's Prometheus metrics, served on :10250/metrics. Every metric
// lives in a Registry struct (no global registry), created once in run() and handed to the
// components that observe it through small hooks (OnRelist, OnSync, OnRenew, …).
//
// Upstream counterpart: pkg/kubelet/metrics/metrics.go (kubelet_pleg_relist_duration_seconds,
// kubelet_pod_worker_duration_seconds, kubelet_running_pods, kubelet_running_containers, …).
// Names follow upstream's so dashboards and labs read the same; minikubelet adds
// kubelet_lease_renew_failures_total, kubelet_object_manager_api_requests_total (the API calls of
// the secret/configmap managers, to compare the Get, Cache and Watch strategies), and
// kubelet_pod_workers and kubelet_status_manager_entries (set by housekeeping; with go_goroutines
// they show that nothing of a deleted pod stays behind, as test/e2e/faults checks).
package metrics
