// Package fake is minikubelet's container runtime: an in-memory CRI v1 RuntimeService and
// ImageService served over gRPC on a unix socket. The kubelet, crictl and critest talk to it exactly
// as they talk to containerd; nothing is ever executed on the host.
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
//   - containerd's CRI plugin for behaviour: ID prefixes, log file format, exit codes.
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
// No processes, images, cgroups or network namespaces exist. Exec, Attach and PortForward return
// Unimplemented until minikubelet grows a streaming server; checkpointing and CRI metrics are
// Unimplemented or empty. State lives only in memory and is lost when the process ends.
package fake
