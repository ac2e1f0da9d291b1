// Package kubelet is the wiring: the Kubelet struct holds every component of one node agent, and
// Run starts them in one visible start order, then waits until the context ends and stops them in
// reverse. Upstream counterpart: pkg/kubelet/kubelet.go (NewMainKubelet, Kubelet.Run, syncLoop)
// with cmd/kubelet/app/server.go (RunKubelet), which spread the same order over several functions.
//
// # Start order (kubelet.go startOrder; start.go runs it)
//
// Each step runs once, in order. A step does its one-shot work (load a certificate, build a
// component, register the Node) and may leave a component running; the next step starts only
// when the previous one has (the fake runtime: when its socket is ready). Every goroutine a step
// leaves is tracked; on SIGTERM, or when a component fails, the steps stop last first, each gone
// before the one before it stops, so nothing outlives what it uses. The journal (source "start")
// records each step's start and stop.
//
//	root-dir             --root-dir holds everything we write
//	debug-listener       --debug-address: the journal on loopback, from the first step on
//	tls-bootstrap        reuse the client certificate, or get one with the bootstrap token
//	api-clients          main and heartbeat clients, through one rotating dialer
//	events               core/v1 Events, source kubelet on this host
//	certificate-rotation rotateCertificates
//	fake-runtime         the built-in CRI runtime, unless --container-runtime-endpoint
//	cri                  the CRI gRPC connection
//	pod-lifecycle        secret managers, kuberuntime, pod cache, PLEG, status manager, pod sources (made, not started)
//	serving-certificate  serverTLSBootstrap
//	kubelet-api          HTTPS :10250 with authn/authz
//	node-registration    the Node object (retries until it exists)
//	lease                the Lease heartbeat, every nodeLeaseDurationSeconds/4
//	lease-keeper         --debug-keepalive: a child renews the Lease while a debugger holds us
//	node-status          node status every nodeStatusUpdateFrequency
//	pod-workers          one goroutine per pod
//	pleg                 relist every second into the pod cache
//	status-manager       pods/status PATCHes
//	prober               liveness, readiness and startup probe workers
//	pod-sources          the API server's pods for this node, static manifests
//	syncloop             the main loop
//
// # The syncLoop (syncloop.go)
//
// syncLoopIteration (upstream kubelet.go syncLoopIteration) waits on every channel and acts on the
// first that fires:
//
//	configCh        pod sources: ADD / UPDATE / DELETE / REMOVE / RECONCILE → pod manager + workers
//	                (pod_handlers.go; admission by maxPods)
//	plegCh          PLEG: a container started or died → that pod's worker syncs
//	syncCh (1 s)    pods whose resync or retry time came (pod workers' DuePods)
//	livenessCh      the liveness probe failed → sync: kuberuntime kills the container, and
//	                restarts it as restartPolicy says (probes.go)
//	readinessCh     readiness changed → statusManager.SetContainerReadiness, sync
//	startupCh       startup changed → statusManager.SetContainerStartup, sync (a failure
//	                kills the container as liveness does)
//	housekeepingCh  (2 s) stop workers of pods no longer desired, forget their statuses and
//	                probe workers, remove their sandboxes from the runtime, delete orphaned
//	                mirror pods (housekeeping.go)
//
// The three probe channels are the results managers of pkg/prober, whose workers probe every
// container that has a probe (SyncPod adds a pod's; generateAPIPodStatus asks the prober for
// each container's Ready and Started).
//
// A pod worker calls back into SyncPod / SyncTerminatingPod / SyncTerminatedPod (pod_sync.go):
// compute the API status (generateAPIPodStatus in pod_status.go, pure), hand it to the status
// manager, and let kuberuntime start or stop containers.
//
// # Files
//
//	kubelet.go       Config, Kubelet, New, the start order
//	probes.go        the prober's results into the syncLoop, kuberuntime and the status
//	start.go         the step runner: start in order, stop in reverse
//	node.go          the node's steps: identity, clients, Events, registration, Lease, status
//	runtime.go       the runtime's steps and the node's readiness check on it
//	pods.go          the pod lifecycle's parts and steps
//	api.go           the kubelet API's steps; server.go what it asks of the pods
//	debug.go         the journal's loopback listener and the lease keeper
//	syncloop.go, pod_handlers.go, housekeeping.go, pod_sync.go, pod_status.go, volumes.go
package kubelet
