// Package kubelet is the wiring: the Kubelet struct holds every component of one node agent, and
// Run starts them in one visible start order, then waits until the context ends and stops them in
// reverse. As upstream's, the Kubelet is also what drives the pods: the syncLoop, the pod handlers
// and the pod workers' syncs are methods of *Kubelet under upstream's names — a breakpoint on
// kubelet.(*Kubelet).syncLoopIteration stops where it stops upstream. With --nodes, the node
// agents of one process share what carries no identity through a Shared (shared.go): the fake
// runtimes' socket, the Service informer, the start-up pace. Upstream counterpart: pkg/kubelet/kubelet.go (NewMainKubelet, Kubelet.Run, syncLoop)
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
//	api-clients          main and heartbeat clients, over one transport and one rotating dialer
//	events               core/v1 Events, source kubelet on this host
//	certificate-rotation rotateCertificates
//	fake-runtime         the built-in CRI runtime, unless --container-runtime-endpoint
//	cri                  the CRI gRPC connection
//	service-informer     list and watch Services, for the containers' service-link env
//	pod-lifecycle        secret managers, kuberuntime, pod cache, PLEG, status manager, pod workers, volume manager, prober, pod sources (made, not started)
//	stats                the stats provider: pods' usage from CRI, the node's from the machine or made up (fake runtime); volume stats every minute
//	serving-certificate  serverTLSBootstrap
//	kubelet-api          HTTPS :10250 with authn/authz
//	node-status-object   the node status (made, not sent) and the Starting event
//	volume-manager       the volume manager's populator and reconciler: pods' volumes set up and torn down
//	pod-workers          run the pod workers: one goroutine per pod
//	pleg                 relist every second into the pod cache (EventedPLEG: the runtime's events, relist every 5 min)
//	status-manager       pods/status PATCHes
//	prober               liveness, readiness and startup probe workers
//	eviction             the eviction manager: pressure conditions, a pass every 10 s, admission under pressure
//	pod-sources          the API server's pods for this node, static manifests
//	syncloop             the main loop
//	healthz              plain-HTTP /healthz on healthzBindAddress:healthzPort (kubeadm polls 127.0.0.1:10248)
//	node-registration    the Node object (retries until it exists), after the syncloop: static pods run meanwhile
//	plugin-manager       CSI drivers in <root-dir>/plugins_registry registered; the CSINode kept
//	lease                the Lease heartbeat, every nodeLeaseDurationSeconds/4
//	lease-keeper         --debug-keepalive: a child renews the Lease while a debugger holds us
//	node-status          node status every nodeStatusUpdateFrequency
//
// # Made at once, started in order
//
// No component can be reached before the step that makes it, and nothing a later step needs is
// left unset by an earlier one. The pod lifecycle's components call each other (the status
// manager asks the pod workers whether a pod's containers stopped; the pod workers call the
// Kubelet's syncs, which use the status manager, the prober, PLEG): so the pod-lifecycle step
// makes all of them in one function, newPodLifecycle, which returns one podLifecycle value, and
// the step assigns it to the Kubelet, which embeds it — every field at once, none nil after. The
// steps after it only start what it made: volume-manager runs its loops, pod-workers runs
// podworkers.Run (an update that came before would wait for it), pleg, status-manager, prober,
// pod-sources and syncloop run their loops. The other components are made by the step that starts them, and only later steps use
// them (the stats provider, the node status; the eviction step hands its admission to the
// pods before the pod sources start, and a nil one admits every pod).
//
// # The syncLoop (syncloop.go)
//
// syncLoopIteration (upstream kubelet.go syncLoopIteration) waits on every channel and acts on the
// first that fires:
//
//	configCh        pod sources: ADD / UPDATE / DELETE / REMOVE / RECONCILE → HandlePodAdditions,
//	                HandlePodUpdates, HandlePodRemoves, HandlePodReconcile (pod_handlers.go): pod
//	                manager + workers (a RECONCILE syncs a pod whose Ready disagrees with its
//	                readiness gates; admission.go: sysctls, the pod's OS, then resources)
//	plegCh          PLEG: a container started or died → HandlePodSyncs: that pod's worker syncs
//	syncCh (1 s)    HandlePodSyncs of pods whose resync or retry time came (pod workers' DuePods)
//	livenessCh      the liveness probe failed → sync: kuberuntime kills the container, and
//	                restarts it as restartPolicy says (probes.go)
//	readinessCh     readiness changed → statusManager.SetContainerReadiness, sync
//	startupCh       startup changed → statusManager.SetContainerStartup, sync (a failure
//	                kills the container as liveness does)
//	housekeepingCh  (2 s) HandlePodCleanups (housekeeping.go): stop workers of pods no longer
//	                desired, forget their statuses and probe workers; a pod the runtime still
//	                runs that no worker knows goes to the pod workers as a SyncPodKill with its
//	                RunningPod (grace 1 s), one that runs nothing is removed from the runtime;
//	                delete orphaned mirror pods
//
// The three probe channels are the results managers of pkg/prober, whose workers probe every
// container that has a probe (SyncPod adds a pod's; generateAPIPodStatus asks the prober for
// each container's Ready and Started).
//
// A pod worker calls back into SyncPod / SyncTerminatingPod / SyncTerminatedPod (pod_sync.go):
// compute the API status (generateAPIPodStatus in pod_status.go, pure), hand it to the status
// manager, and let kuberuntime start or stop containers. SyncTerminatingRuntimePod stops an
// orphan housekeeping handed over: the pod workers are the only place containers are stopped.
//
// # Admission (admission.go)
//
// A pod added (configCh ADD) is admitted once, as upstream's admit handlers do, in their order:
// the eviction manager's (pkg/eviction, eviction.go: under MemoryPressure no BestEffort pod,
// under DiskPressure or PIDPressure no pod, critical pods exempt — reason Evicted, "The node had
// condition: [MemoryPressure]. "), its sysctls (SysctlForbidden), the pod's kubernetes.io/os label
// (PodOSSelectorNodeLabelDoesNotMatch), its spec.os.name (PodOSNotSupported), then its resources
// (admission_resources.go), fitted beside the other active pods in the node's allocatable (what
// pkg/nodestatus reports: capacity less kubeReserved, systemReserved and evictionHard): the pod
// count (OutOfpods, maxPods), then cpu, memory, ephemeral-storage and the other resources its
// effective requests name (pkg/cm PodRequests: init containers, sidecars, pod-level requests,
// overhead) — OutOfcpu, "Node didn't have enough resource: cpu, requested: 5000, used: 100,
// capacity: 1900"; then its host ports (admission_ports.go): a (protocol, hostIP, hostPort) of
// its containers or sidecars that another active pod holds (0.0.0.0 clashes with every address)
// is NodePorts, "Predicate NodePorts failed: node(s) didn't have free ports for the requested
// pod ports". A rejected pod gets a Warning Event and a fresh Failed status, "Pod was
// rejected: …", and no worker. Simplified: no node affinity, node name, taint, topology or
// shutdown admission.
//
// # In-place resize (pod_resize.go, pod_resize_status.go)
//
// The pods/resize subresource changes a running pod's container resources. SyncPod first decides
// it (upstream allocation manager handlePodResourcesResize): if the pod, with its new requests,
// fits beside the other active pods as allocated (admitResources), the spec is allocated and
// checkpointed (<root>/allocated_pods_state, JSON, 0600, written atomically; a ResizeStarted
// Event); otherwise the pod keeps its allocation and shows PodResizePending, reason Deferred,
// the admission's message ("Node didn't have enough resource: cpu, requested: …"), with a
// ResizeDeferred Event. Everything after sees the allocated pod: kuberuntime resizes the
// containers (its resize.go), the status reports allocatedResources and, for running
// containers, resources. PodResizeInProgress is held per pod (pod_resize_status.go, upstream's
// status manager): set at the allocation with the pod's generation, kept while a running
// container's resources in the runtime differ from the allocation, reason Error with the
// runtime's message (and one ResizeError Event) when UpdateContainerResources fails, and
// cleared with a ResizeCompleted Event once the runtime has what was allocated.
// A resize over the node's allocatable never reaches the kubelet: the API server's PodResize
// admission refuses it. Simplified: no pod-level resize (pod-level resources are not
// allocated), no Infeasible reason of our own (upstream's come from the feature gates, swap
// and the static CPU/memory managers, none of which we have).
//
// # Eviction (eviction.go)
//
// The eviction step makes pkg/eviction's manager over the stats provider and runs its loop. It
// kills through the pod workers (evictPod: a SyncPodKill with the grace period it asks for, at
// least 1 s) and remembers the decision, so generateAPIPodStatus makes the pod Failed with reason
// Evicted, the message and the DisruptionTarget condition — the status manager sends the
// condition with the terminal phase once no container runs. The node status reads its pressure
// conditions (SetPressure).
//
// The pods' QoS class (pkg/qos) is the API server's status.qosClass, computed for a static pod;
// with a real runtime, housekeeping removes the cgroups of pods that are gone (pkg/cm).
//
// # A container's env and /etc/hosts (volumes.go, services.go, etc_hosts.go)
//
// GenerateRunContainerOptions (upstream kubelet_pods.go) gives kuberuntime each container's env
// (volume.MakeEnvironment, with the service links of the Services the service-informer step
// watches) and mounts: the pod's volumes as the volume manager set them up (pkg/volumemanager;
// SyncPod waits for them in WaitForAttachAndMount, and a claim mounted readOnly is read-only),
// then <root>/pods/<uid>/etc-hosts at /etc/hosts —
// localhost, the pod's IPs and hostAliases, or for a host-network pod the node's /etc/hosts and
// the aliases — unless the container mounts /etc/hosts itself or the pod has no IP yet.
// Simplified: one pod IP (kuberuntime passes the primary one; a host-network pod's is the node's
// IP), so status.podIPs and the hosts file list one address; the node's allocatable (the default
// of an unset limit in a resourceFieldRef) is what pkg/nodestatus reports, read once at start,
// not the Node object of a lister; the hosts file is replaced by a rename when its content
// changes (upstream rewrites it in place at every container start).
//
// # Files
//
// Each step's body sits beside startOrder or in the file named for what it starts; the pods'
// side is split as upstream splits it (kubelet.go, kubelet_pods.go, kubelet_getters.go …).
//
//	kubelet.go            Config, Kubelet, New, startOrder, Run, and the steps that only start
//	                      what pod-lifecycle made (volume-manager … syncloop) or the debug listener
//	start.go              the step runner: start in order, stop in reverse
//	node.go               the node's steps: root dir, TLS bootstrap, clients, Events, certificate
//	                      rotation, registration, Lease, status
//	transport.go          the API clients' transport: the client certificate and the rotating dialer
//	shared.go             what the node agents of --nodes share
//	cri.go                the fake-runtime and cri steps; runtime_readiness.go the node's
//	                      readiness check on the runtime
//	services.go           the service-informer step (service links)
//	pod_lifecycle.go      the pod-lifecycle step: podLifecycle, made at once; pleg.go the
//	                      generic or evented PLEG
//	stats.go              the stats step; eviction.go the eviction step and what it asks of the pods
//	kubelet_server.go     the serving-certificate and kubelet-api steps; kubelet_getters.go what
//	                      the kubelet API asks of the Kubelet (server.Host)
//	lease_keeper.go       the lease-keeper step
//	syncloop.go           syncLoop, syncLoopIteration, dispatch (upstream kubelet.go)
//	pod_handlers.go       HandlePodAdditions, …Updates, …Removes, …Reconcile, …Syncs (kubelet.go)
//	admission.go, admission_resources.go, admission_ports.go, sysctl.go   admission (lifecycle/predicate.go)
//	pod_resize.go, pod_resize_status.go   in-place resize: allocation, conditions (allocation/, status/)
//	housekeeping.go       HandlePodCleanups (kubelet_pods.go)
//	pod_sync.go           SyncPod, SyncTerminatingPod, SyncTerminatedPod, SyncTerminatingRuntimePod
//	pod_status.go, pod_phase.go, active_deadline.go   the API status (kubelet_pods.go)
//	probes.go             the prober's results into the syncLoop, kuberuntime and the status
//	volumes.go            a container's env and mounts (GenerateRunContainerOptions); what the
//	                      volume manager asks of the pod workers (podVolumeState)
//	etc_hosts.go          the kubelet-managed /etc/hosts
//	dns.go                the pods' /etc/resolv.conf: pkg/dns from clusterDNS, clusterDomain, resolvConf
package kubelet
