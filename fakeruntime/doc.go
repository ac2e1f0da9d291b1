// Package fakeruntime is minikubelet's container runtime: an in-memory CRI v1 RuntimeService and
// ImageService served over gRPC on a unix socket, with a streaming HTTP server on loopback for
// exec, attach and port-forward. The kubelet, crictl and critest talk to it exactly as they talk
// to containerd; nothing is ever executed on the host. Containers have a small filesystem and
// can serve HTTP, TCP and gRPC on their pod IP, so probes, port-forward and curl reach them.
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
// # Many nodes on one socket (mux.go)
//
// `minikubelet --nodes N` gives every node a Runtime of its own (sandboxes, containers, pod IP
// range, streaming server) but serves them all with one gRPC server on one socket: a Mux. Each
// call names its node in the gRPC metadata key NodeMetadataKey ("minikubelet-node"); the Mux
// hands it to the generated handler with that node's Runtime and interceptors (the generated
// handlers take the server as an argument, so one ServiceDesc per service routes them all). A
// call that names no node — crictl — is refused with FailedPrecondition saying why. A muxed
// Runtime has no admin (fault-injection) socket.
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
//	ContainerStats … ListPodSandboxStats                     a stable made-up base plus what programs
//	                                                         use on paper (alloc, burn; usage.go)
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
// and removing it removes them. A sandbox gets a pod IP from Config.PodCIDR (default
// 127.88.0.0/16, see "Pod IPs"), unique among live sandboxes, unless it uses the host network
// (NamespaceOption.Network == NODE).
// Every state change is published on GetContainerEvents (for sandboxes the ContainerId is the
// sandbox ID, as containerd does), with what the kubelet's evented PLEG reads: the sandbox's
// status (its metadata names the pod) and the statuses of its containers, a deleted one's last.
//
// # Container programs
//
// A container's command followed by its args is read as a tiny program; an empty command runs the
// image's default program (defaults.go: nginx and httpd serve their welcome page on port 80, redis
// answers PING on 6379, pause and any other image run until stopped). `sh -c SCRIPT` (also bash, /bin/sh,
// -ec, …) is a small shell: commands separated by ";" or newlines run in turn, "a && b" runs b
// only if a succeeded and "a || b" only if it failed (left to right, on $?, the status of the last
// command run), "cmd &" does not wait for cmd, '…', "…" and \ quote, # starts a comment, and
// "> F", ">> F", "2> F", "2>&1", ">&2", "&> F" redirect output to files of the container (below).
// The script's status is its last command's. It has control flow, compiled into jumps
// (compile.go): while/until/for … in …; do …; done, if/then/elif/else/fi, break, continue; and
// expansions, made when a command runs (expand.go, arith.go): variables (NAME=VALUE, $NAME,
// ${NAME}, $?, the container's environment), $(( )) arithmetic, $(cmd) and `cmd` (a subshell
// whose sleeps do not wait). An unquoted expansion is split into words. A loop that never waits
// pauses busyLoopPause every maxJumps jumps (a sleep), so it never holds the runtime's lock for
// long and ends with its container. "a | b" pipes a's stdout into b, which must be a simple
// command (filters.go: head, tail, grep, wc, rev, cat read it): a runs to its end, then b reads
// all it printed — so a left side that waits (tail -f, sleep) feeds nothing, and "| while read"
// is an error that says so. No input redirection: "<" is a syntax error that says so. Any other
// command line is a single command, its words taken as they are (no redirections, no
// expansions).
//
//	sleep infinity | sleep inf      block until stopped
//	sleep N                         wait N seconds (N may be fractional; suffixes s, m, h) on the clock
//	exit [N]                        exit with code N (without N: $?) at once
//	true | : | false                status 0 or 1
//	echo [-neE] WORDS…              write WORDS to stdout: the log, or where it is redirected (-e: \n \t \c)
//	exec CMD …                      run CMD (unlike sh, the commands after it still run)
//	env | printenv [NAME]           print the container's environment (from its CRI config, and
//	                                HOSTNAME, the sandbox's hostname, as containerd adds it)
//	printf FORMAT [ARG…]            %s %d %i %x %c %%, \n \t; the format is reused while args remain
//	id [-u|-g]                      "uid=1000 gid=3000 groups=2000,3000,4000": the CRI security
//	                                context's RunAsUser, RunAsGroup and SupplementalGroups
//	head|tail [-n N|-N] [F]         the first or last N lines (10) of F or of a pipe
//	tail -f|-F F                    print the last lines, then what is written to F (it looks every
//	                                followPoll; a missing F may appear), until stopped
//	grep [-icqv] RE [F…]            the lines matching RE (Go's regexp, like grep -E); status 1 if none
//	wc [-lwc] [F…] | rev [F…]       count lines, words, bytes; reverse each line
//	nslookup NAME                   no DNS server: localhost and the pod's hostname resolve (its
//	                                /etc/hosts), any other name fails ("nslookup: can't resolve 'NAME'")
//	hostname                        print the sandbox's hostname
//	date [+FORMAT]                  Config.Clock's time in UTC, busybox's "Fri Nov 27 05:50:00 UTC 2026"
//	seq [FIRST [STEP]] LAST         the integers, one a line
//	wget URL | curl URL             GET from a server of this runtime's pods (fetch.go): only an
//	                                address in the runtime's listeners is dialed; a name or another
//	                                address fails as with no route ("wget: bad address 'x'")
//	perl -Mbignum=bpi -wle 'print bpi(N)'   pi to N digits, computed (tools.go): the docs' pi Job
//	stress --vm N --vm-bytes B --cpu N      alloc N×B and burn N cores, then block until stopped
//	etcd [--listen-client-urls URL]         serve grpc on URL's port (default 2379): the docs' grpc probe
//	agnhost liveness|netexec|pause          agnhost's subcommands (defaults.go), also as an image's args
//	cat FILE… | ls [PATH…]          read the container's filesystem; busybox's message and status 1
//	touch F… | rm [-f] [-r] F…      if something is missing ("cat: can't open 'F': No such file or
//	mkdir [-p] D…                   directory"), read-only ("… Read-only file system") or a mount point
//	ln -s TARGET LINK               a symlink, inside a mounted volume only (the layer holds none)
//	test EXPR | [ EXPR ] | [[ EXPR ]]   -e -f -d -s F, -n -z S, S = S, S != S, N -eq|-ne|-lt|-le|-gt|-ge N, ! EXPR
//	serve …, httpd …                answer on the pod IP (see "Serving")
//	alloc QUANTITY                  the working set grows by QUANTITY (alloc 200Mi) until the container
//	                                exits; over the memory limit the container is OOM-killed (below)
//	burn QUANTITY                   the container uses QUANTITY more CPU (burn 500m) until it exits
//	anything else (nginx, /pause …) block until stopped, like a server, after one line in the log:
//	                                "minikubelet fake runtime: "nginx" is not modelled; …"
//
// The program exits with the last status after its last command. So:
//
//	sleep infinity                          RUNNING until stopped
//	sleep 10                                exits 0 after 10 s
//	sh -c "exit 3"                          exits 3 right after start
//	echo hello world                        logs "hello world", exits 0
//	sh -c "echo hi; sleep 5; exit 2"        logs "hi", exits 2 after 5 s
//	sh -c "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"
//	                                        the docs' liveness-exec pod: `cat /tmp/healthy` in an
//	                                        exec probe succeeds for 30 s, then fails
//	sh -c "sleep 10 && echo bye > /dev/termination-log"   the termination message
//	sh -c "alloc 200Mi; burn 500m; sleep infinity"          200Mi more memory and half a core in
//	                                        /stats/summary and kubectl top, while it runs
//
// # Resource usage on paper
//
// Nothing runs, so ContainerStats reports what the program says it uses (usage.go, stats.go):
// every RUNNING container has a base derived from its ID (1m–50m CPU, 4–63 MiB of working set,
// at most half its memory limit), to which each alloc and burn of its main program adds, until it
// exits. CPU time grows with the rate while the container runs, and a rate over the CPU limit
// (CpuQuota/CpuPeriod) is throttled to it. When an alloc takes the working set over
// MemoryLimitInBytes, the container ends as the kernel's OOM killer and containerd would: exit
// code 137, reason OOMKilled (the kubelet shows it in the pod's status). The writable layer's
// usage is the in-memory layer's (below). In ExecSync and exec sessions alloc and burn succeed
// and count nothing: an exec'd process's usage would end with it.
//
// ExecSync runs a command with the same grammar inside a running container, with one difference:
// unknown commands succeed at once with no output (so exec probes such as `nginx -t` pass). It
// shares the container's filesystem with its program: `kubectl exec pod -- cat /etc/config/key`
// reads the file the kubelet projected, `kubectl exec pod -- rm /tmp/ready` fails a readiness
// probe that serves that file, and no command can reach a host path that was not mounted.
// Waits are capped by the request's timeout (then DeadlineExceeded).
//
// # Filesystem
//
// Each container instance has a filesystem (rootfs.go; its host side in mounts.go), made at
// CreateContainer and gone at RemoveContainer: a new attempt of the container starts afresh, as
// with an image's layers. Its program, ExecSync, exec sessions and serve all see the same one:
//
//	/etc/config/key   under a CRI mount (longest ContainerPath wins): the mounted host file or
//	                  directory, read and written for real. Mount.Readonly refuses writes with
//	                  "Read-only file system"; a mount point cannot be removed ("Device or
//	                  resource busy"). Host operations are confined to the mount with os.Root:
//	                  a symlink that leads out of it is refused ("Permission denied"). A mount's
//	                  source is resolved once, at CreateContainer, as a bind mount's: a symlink
//	                  swapped in on its path later is refused, never followed. A file mount (a
//	                  subPath file, /etc/hosts) is one file: its directory lists it. The atomic
//	                  writer's "..data" entries stay hidden, as ls hides them.
//	/tmp/healthy      anywhere else: an in-memory layer of at most 16 MiB that starts with
//	                  busybox's directories (/bin /dev /etc /home /proc /root /run /sys /tmp /usr
//	                  /usr/bin /usr/share /var /var/log /var/run), the parents of the mount points,
//	                  the working directory and /dev/null. A file needs its directory.
//
// /etc/resolv.conf is written into the layer from the sandbox's DnsConfig, as containerd writes
// the sandbox's file (search, nameserver and options lines) — the file the kubelet decided from
// the pod's dnsPolicy (pkg/dns). A sandbox without a DnsConfig gives none; a volume mounted there
// keeps its own.
//
// Relative paths start at the CRI WorkingDir (default /). So `echo "bye" > /dev/termination-log`
// lands in the file the kubelet mounts there, and in the layer when it mounts none.
//
// # Serving
//
// A container answers for real on its pod IP: the kubelet's httpGet, tcpSocket and grpc probes
// connect to it as to any pod, and so do port-forward and curl on the host. The probe decides
// nothing: the answer comes from what the container serves (serve.go).
//
//	serve http PORT [ROUTE…]        HTTP/1.1. ROUTE is /PATH=CODE (that status, 200–599) or
//	                                /PATH=FILE (200 with the file's content while it exists, 404
//	                                otherwise); a /PATH/ ending in "/" also matches below it and
//	                                maps the rest to FILE/… (a directory answers its index.html).
//	                                The longest PATH wins; none matches: 404; no routes: 200 "OK".
//	serve tcp PORT                  accept and echo each connection until the client closes
//	serve grpc PORT [STATUS|FILE]   grpc.health.v1 Health/Check for every service: SERVING
//	                                (default), NOT_SERVING, or SERVING while FILE exists
//	serve redis PORT                RESP: PING answers +PONG, ECHO its argument, QUIT closes
//	httpd [-f] [-p [IP:]PORT] [-h DIR]   busybox's httpd: serve http PORT /=DIR (default 80, "."),
//	                                in the background unless -f, as busybox daemonizes
//
// In the main program serve runs until the container stops ("serve … &": and the program goes
// on); in an exec it runs until the exec ends. Either way its listener closes then. A failure —
// a pod IP outside 127.0.0.0/8, a port already taken — is printed on stderr (the container's
// log) with what to do, and serve's status is 1. Example, readiness a student flips by hand:
//
//	sh -c "touch /tmp/ready; serve http 8080 /healthz=200 /ready=/tmp/ready"
//	kubectl exec pod -- rm /tmp/ready       the readiness probe on /ready now gets 404
//
// # Pod IPs
//
// The runtime never changes the host's network (no interfaces, routes or iptables), yet the
// host must reach pod IPs. So they are loopback addresses: DefaultPodCIDR is 127.88.0.0/16, and
// on Linux every 127/8 address is local, so listening on 127.88.0.5:8080 needs nothing set up;
// `--nodes` gives node i 127.x.y.0/24 (pkg/options). A range outside 127/8 (--pod-cidr) still
// works for everything else, but containers cannot serve. What loopback costs: a pod IP shares
// the host's ports with listeners on the host's wildcard address (a pod cannot serve :10250 if
// the kubelet listens on 0.0.0.0:10250), and the API server refuses loopback addresses in
// EndpointSlices, so a Service selecting fake pods gets no endpoints. Network namespaces or
// routed ranges would avoid both, but need root and change the host.
//
// # The interpreter
//
// One interpreter runs every program (process.run in process.go): the container's main program,
// ExecSync, exec sessions and each line of the interactive shell. It writes output to a sink — the container's log and attach
// sessions, ExecSync's buffers, an exec client's streams, a file when redirected — and runs
// commands until one must wait (sleep, block, read stdin, serve) or the program ends. The caller
// does the waiting and the serving. The main program runs under the runtime's lock, so
// StartContainer returns once the program first waits; a sleep arms a timer on Config.Clock
// whose callback runs the next turn:
//
//	StartContainer ─▶ turn ──sleep N──▶ timer fires ─▶ turn ─ … ─▶ exit ─▶ EXITED
//	                    ├──serve … &──▶ listener started ─▶ same turn goes on
//	                    └──sleep infinity, serve, server──▶ waits for StopContainer / RemoveContainer
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
//	              `kubectl exec -i pod -- cat` echoes; `sh -c "cat > F"` fills F), the built-ins
//	              act on the container's filesystem as above, `sleep N` waits on Config.Clock,
//	              unknown commands succeed with no output. A non-zero exit (`sh -c "exit 3"`)
//	              reaches the client as its exit code. With tty, all output is on stdout and
//	              "\n" becomes "\r\n", as a terminal shows it; with tty and stdin the session
//	              has a terminal (below), and `sh` with no script is the interactive shell. If the
//	              container exits meanwhile, the session ends with exit code 137, as the process
//	              would be killed with it.
//	attach        needs a RUNNING container. The client receives what the container's program
//	              writes from then on (not what it wrote before: that is in the log), on stdout
//	              and stderr, until the container exits; a client that has gone is noticed at the
//	              next write. A container created with stdin and tty whose program is a shell
//	              reads what the client types on its terminal (below); any other program reads no
//	              input, so stdin is discarded. A client more than 64 writes behind misses output
//	              rather than slow the container down.
//	port-forward  needs a READY sandbox. A port a container of the pod serves is connected to
//	              that server (`kubectl port-forward pod 8080:80`, then curl localhost:8080); every
//	              other port 1–65535 is an echo server: each forwarded connection gets back what it
//	              sends, until it closes its side (then `nc localhost 8080`).
//
// # Terminals and the interactive shell (tty.go, shell.go)
//
// kubectl exec -it and attach -it put the user's terminal in raw mode and send each key as it is
// typed, so the runtime plays the tty (a pty in cooked mode) in lineDiscipline: printable keys
// are echoed, Backspace (DEL 0x7f or ^H) erases a character ("\b \b"), Enter (\r) ends the line
// ("\r\n"), Ctrl-C (0x03) echoes ^C, drops the line and the lines typed ahead and interrupts the
// running command, Ctrl-D (0x04) on an empty line is the end of input. Other control keys and
// escape sequences (arrows: no history, no cursor movement) are ignored. Resize events are
// accepted; a size change while the shell waits at its prompt redraws it, as busybox does on
// SIGWINCH.
//
// The interactive shell is `sh` (also /bin/sh, bash, sh -i, bash -l: a shell with no -c script)
// on a terminal: in an exec session with tty and stdin, or as the program of a container created
// with stdin and tty (`kubectl run -it --image=busybox -- sh`; an empty command too, as busybox's
// CMD is sh, so `kubectl debug -it --image=busybox` gets it). It prints busybox's prompt
// ("\w \$ ": "/ # " for root in /, "$" for another user), runs each line with the program
// grammar (a command it does not know prints "sh: NAME: not found", status 127; a syntax error
// prints why, status 2, and the shell goes on), and prompts again:
//
//	/ # echo hi              hi
//	/ # sleep 100 ^C         the sleep ends, $? is 130, a new prompt
//	/ # cat                  each line typed is printed back; Ctrl-D ends cat, Ctrl-C too ($? 130)
//	/ # exit 3               the shell ends with status 3; Ctrl-D on an empty line: with $?
//
// An exec'd shell's status is the session's exit code ("command terminated with exit code 3");
// a container's shell's is the container's, and the container exits then. A container's shell
// waits at its prompt until someone attaches (kubectl prints "If you don't see a command prompt,
// try pressing enter"; its first resize redraws the prompt); with StdinOnce (kubectl run -it) its
// input ends when the first attach session's stdin does, and so does the shell. Without a tty,
// `kubectl exec -i pod -- sh < script` runs the lines of the script as they arrive, with no
// prompt and no echo, until stdin ends.
//
// None of these ever runs a host program; a test execs `touch` and `sh -c "touch …"` with a host
// path and checks that no file appeared (it went to the container's layer, or failed). When Serve stops, it closes the connections of open sessions (they are
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
// Like containerd's writer, the log gets whole lines: what a program writes after its last
// newline (`cat` of a file with none) waits for the next newline, or for the container's exit.
// Attach sessions get the output as it is written. The directory is created if missing and the
// file is opened for every write, so a rotated log (ReopenContainerLog) simply continues in a new
// file.
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
//	events-off                           POST /events-off         {}  (GetContainerEvents: Unimplemented, as containerd 1.6)
//	events-on                            POST /events-on          {}
//	state                                GET  /state              sandboxes, containers and images
//
// Success is 200 with {}; errors are {"error": "…"} with 400 (bad request), 404 (unknown ID) or
// 409 (wrong state).
//
// # What it simplifies
//
// No processes, images, cgroups or network namespaces exist: exec runs the program grammar,
// attach relays program output (and types into a container's shell), port-forward reaches what
// the pod serves or echoes. The interactive shell has no history, completion or job control. An image has
// no files: the layer starts with empty directories (and the welcome page of nginx and httpd).
// The shell has no pipes, functions, case or globbing. Checkpointing and CRI metrics are Unimplemented or empty. State lives only in
// memory and is lost when the process ends.
package fakeruntime
