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
//	RunPodSandbox … ListPodSandbox                           sandbox state machine (below)
//	CreateContainer … ListContainers                         container state machine (below)
//	UpdateContainerResources, ReopenContainerLog            recorded / log file re-created
//	GetContainerEvents                                       every state change, as a stream
//	ExecSync                                                 program grammar, output returned at once
//	Exec, Attach, PortForward                                a one-time URL on the streaming server
//	ContainerStats … ListPodSandboxStats                     made-up but stable numbers
//	PullImage, ImageStatus, ListImages, RemoveImage, …       images are names only, never downloaded
//	ListMetricDescriptors, ListPodSandboxMetrics             empty: the kubelet uses the stats calls
//	CheckpointContainer, Stream* (CRIListStreaming), …       Unimplemented (the embedded
//	                                                         Unimplemented*Server answers)
//
// # State machines
//
//	sandbox:   RunPodSandbox ─▶ READY ──StopPodSandbox / sandbox-not-ready──▶ NOTREADY ──RemovePodSandbox──▶ (gone)
//	container: CreateContainer ─▶ CREATED ──StartContainer──▶ RUNNING ──program ends / StopContainer /
//	           kill-container──▶ EXITED(exit code) ──RemoveContainer──▶ (gone)
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
// One interpreter runs every program (runSteps in process.go): the container's main program,
// ExecSync and exec sessions. It writes output to a sink — the container's log and attach
// sessions, ExecSync's buffers, an exec client's streams — and runs steps until one must wait
// (sleep, block, read stdin) or the program ends. The caller does the waiting. The main program
// runs under the runtime's lock, so StartContainer returns once the program first waits; a sleep
// arms a timer on Config.Clock whose callback runs the next turn:
//
//	StartContainer ─▶ turn ──sleep N──▶ timer fires ─▶ turn ─ … ─▶ exit ─▶ EXITED
//	                    └──sleep infinity, server──▶ waits for StopContainer / RemoveContainer
//
// ExecSync and exec sessions wait in a blocking loop instead (execute), on the clock, the
// container's exit, the request's deadline and the caller's context.
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
// For teaching, the runtime breaks on request. Faults() in faults.go is the one table of faults:
// each entry has its name, its arguments with their parsing and its effect, and every way in is
// built from it. Runtime.Inject applies a fault in Go; a small JSON API on a second unix socket,
// Config.AdminSocket (default "<socket>.admin"), serves each fault, and AdminClient calls it; the
// `minikubelet fake-runtime` subcommands are that client:
//
//	kill-container ID [--exit-code]      POST /kill-container     {"id": "…", "exitCode": 137}
//	sandbox-not-ready ID                 POST /sandbox-not-ready  {"id": "…"}
//	fail-pulls IMAGE [--count --message] POST /fail-next-pulls    {"image": "busybox", "count": 2, "message": "…"}
//	latency METHOD DURATION ("0s" ends)  POST /latency            {"method": "ListContainers", "duration": "2s"}
//	runtime-not-ready [--reason …]       POST /runtime-not-ready  {"reason": "Broken", "message": "for the lab"}
//	runtime-ready                        POST /runtime-ready      {}
//	state                                GET  /state              sandboxes, containers and images
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
