// Package fake is minikubelet's container runtime: an in-memory CRI v1 RuntimeService and
// ImageService served over gRPC on a unix socket, with a streaming HTTP server on loopback for
// exec, attach and port-forward. The kubelet, crictl and critest talk to it exactly as they talk
// to containerd; nothing is ever executed on the host.
//
// # Role and upstream counterparts
//
// The kubelet never runs containers itself: it asks a runtime over CRI (k8s.io/cri-api, file
// pkg/apis/runtime/v1/api.proto). This package plays that runtime. It mirrors, in a smaller form:
//
//   - k8s.io/cri-api/pkg/apis/testing/fake_runtime_service.go and fake_image_service.go (in-memory
//     state behind the CRI interfaces), but served over a real socket;
//   - k8s.io/cri-client pkg/fake/fake_runtime.go (used by kubemark and the kubelet's tests), the
//     upstream fake that serves those fakes over a socket, as we do;
//   - containerd's CRI plugin for behaviour: ID prefixes, log file format, exit codes, and its
//     streaming server (internal/cri/server/streaming.go), built like ours on
//     k8s.io/cri-streaming/pkg/streaming (formerly k8s.io/kubelet/pkg/cri/streaming).
//
// # CRI methods
//
//	Version, Status, RuntimeConfig, UpdateRuntimeConfig      handshake, readiness, cgroup driver
//	RunPodSandbox … ListPodSandbox, StreamPodSandboxes      sandbox state machine (below)
//	CreateContainer … ListContainers, StreamContainers       container state machine (below)
//	UpdateContainerResources, ReopenContainerLog            recorded / log file re-created
//	GetContainerEvents                                       every state change, as a stream
//	ExecSync                                                 program grammar, output returned at once
//	Exec, Attach, PortForward                                a one-time URL on the streaming server
//	ContainerStats … StreamPodSandboxStats                   made-up but stable numbers
//	PullImage, ImageStatus, ListImages, RemoveImage, …       images are names only, never downloaded
//	CheckpointContainer                                      Unimplemented
//	ListMetricDescriptors, ListPodSandboxMetrics             empty: the kubelet uses the stats calls
//
// # State machines
//
//	sandbox:   RunPodSandbox ─▶ READY ──StopPodSandbox / SetSandboxNotReady──▶ NOTREADY ──RemovePodSandbox──▶ (gone)
//	container: CreateContainer ─▶ CREATED ──StartContainer──▶ RUNNING ──program ends / StopContainer /
//	           KillContainer──▶ EXITED(exit code) ──RemoveContainer──▶ (gone)
//
// Invariants: IDs are 64 hex characters and any unique prefix names the object (as in containerd);
// labels and annotations are stored as given; a sandbox name (name, namespace, uid, attempt) and a
// container name (name, attempt) within its sandbox are unique while the object exists; Stop* and
// Remove* are idempotent and an unknown ID is not an error; stopping a sandbox stops its containers
// and removing it removes them. A sandbox gets a pod IP from Config.PodCIDR (default 10.88.0.0/16),
// unique among live sandboxes, unless it uses the host network (NamespaceOption.Network == NODE).
// Every state change is published on GetContainerEvents (for sandboxes the ContainerId is the
// sandbox ID, as containerd does).
//
// # Container programs
//
// A container's command followed by its args (the image has no entrypoint: an empty command runs
// forever, like the pause image) is read as a tiny program. `sh -c SCRIPT` (also bash, /bin/sh, …)
// splits SCRIPT on ";", newlines and "&&" into steps; any other command is a single step. Steps:
//
//	sleep infinity | sleep inf      block until stopped
//	sleep N                         wait N seconds (N may be fractional; suffixes s, m, h) on the clock
//	exit N                          exit with code N at once
//	true | : | false                exit status 0 (go on) or exit with code 1
//	echo [-n] WORDS…                write WORDS to the log on stdout ("echo WORDS >&2": on stderr)
//	env | printenv [NAME]           print the container's environment (from its CRI config)
//	hostname                        print the sandbox's hostname
//	cat FILE… | ls [DIR]            read the container's CRI mounts (ContainerPath → HostPath) only;
//	                                any other path is "No such file or directory"; exit 1 on error
//	anything else (nginx, /pause …) block until stopped, like a server
//
// The program exits 0 after its last step. So:
//
//	sleep infinity                          RUNNING until stopped
//	sleep 10                                exits 0 after 10 s
//	sh -c "exit 3"                          exits 3 right after start
//	echo hello world                        logs "hello world", exits 0
//	sh -c "echo hi; sleep 5; exit 2"        logs "hi", exits 2 after 5 s
//
// ExecSync runs a command with the same grammar inside a running container, with one difference:
// unknown commands succeed at once with no output (so exec probes such as `nginx -t` pass). The
// inspection commands let a student prove projection without a real container —
// `kubectl exec pod -- cat /etc/config/key` reads the file the kubelet projected — and they can
// never reach a host path that was not mounted into the container.
// Waits are capped by the request's timeout (then DeadlineExceeded).
//
// # Streaming: exec, attach, port-forward
//
// Exec, Attach and PortForward do not stream over gRPC. As in containerd, each returns a URL on
// the runtime's streaming HTTP server, http://<Config.StreamingAddr>/{exec,attach,portforward}/<token>
// (StreamingURL is the base). The token is random, valid for one use and for one minute; the
// request it stands for stays in the runtime. The kubelet proxies `kubectl exec` to that URL, and
// the client then speaks SPDY (or WebSocket, protocol v4) there, as with any CRI runtime. The
// server is k8s.io/cri-streaming/pkg/streaming; it listens on loopback only (default
// DefaultStreamingAddr, 127.0.0.1 on a free port) and speaks plain HTTP, like containerd's default
// stream server: nothing but the kubelet on this machine may reach it. New refuses any other host.
//
//	exec          needs a RUNNING container, a cmd and at least one of stdin, stdout, stderr. cmd
//	              runs with the program grammar, as ExecSync does, but live: echo writes as it
//	              goes, `cat` with no arguments copies stdin to stdout until EOF (so
//	              `kubectl exec -i pod -- cat` echoes), cat FILE / ls / env / printenv / hostname
//	              inspect as above, `sleep N` waits on Config.Clock, unknown commands succeed with
//	              no output. A non-zero exit (`sh -c "exit 3"`) reaches the client as its exit
//	              code. With tty, all output is on stdout and "\n" becomes "\r\n", as a terminal
//	              shows it; resize events are read and ignored. If the container exits meanwhile,
//	              the session ends with exit code 137, as the process would be killed with it.
//	attach        needs a RUNNING container. The client receives what the container's program
//	              writes from then on (not what it wrote before: that is in the log), on stdout
//	              and stderr, until the container exits; a client that has gone is noticed at the
//	              next write. Programs read no input, so stdin is discarded. A client more than
//	              64 writes behind misses output rather than slow the container down.
//	port-forward  needs a READY sandbox. The fake pod has no network, so every port 1–65535 is
//	              an echo server: each forwarded connection gets back what it sends, until it
//	              closes its side (`kubectl port-forward pod 8080:80`, then `nc localhost 8080`).
//
// None of these ever runs a host program; a test execs `touch` and `sh -c "touch …"` and checks
// that no file appeared. When Serve stops, it closes the connections of open sessions (they are
// hijacked, so http.Server.Close alone would not) and waits for them to end.
//
// # Logs
//
// A container writes to its CRI LogPath, joined with the sandbox's LogDirectory when relative (or
// with Config.LogRoot when the sandbox has none; with neither, output is discarded). Lines are in
// the CRI log format read by crictl logs and the kubelet:
//
//	2016-10-06T00:17:09.669794202Z stdout F message
//
// The directory is created if missing and the file is opened for every write, so a rotated log
// (ReopenContainerLog) simply continues in a new file.
//
// # Fault injection
//
// For teaching, the Runtime breaks on request: KillContainer, SetSandboxNotReady, FailNextPulls,
// AddLatency and SetRuntimeNotReady / SetRuntimeReady. The same faults are served as a small JSON
// API over HTTP on a second unix socket, Config.AdminSocket (default "<socket>.admin"), which
// AdminClient calls:
//
//	GET  /state                                                          sandboxes and containers
//	POST /kill-container      {"id": "…", "exitCode": 137}
//	POST /sandbox-not-ready   {"id": "…"}
//	POST /fail-next-pulls     {"image": "busybox", "count": 2, "message": "registry down"}
//	POST /latency             {"method": "ListContainers", "duration": "2s"}   ("0s" removes it)
//	POST /runtime-not-ready   {"reason": "Broken", "message": "for the lab"}
//	POST /runtime-ready       {}
//
// Success is 200 with {}; errors are {"error": "…"} with 400 (bad request), 404 (unknown ID) or
// 409 (wrong state).
//
// # What it simplifies
//
// No processes, images, cgroups or network namespaces exist: exec runs the program grammar,
// attach relays program output, port-forward echoes. Checkpointing and CRI metrics are
// Unimplemented or empty. State lives only in memory and is lost when the process ends.
package fake
