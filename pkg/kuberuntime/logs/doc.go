// Package logs reads a container's log file, written by the container runtime in the CRI log
// format, and copies it to the stdout/stderr writers of a `kubectl logs` request. The kubelet's
// /containerLogs handler asks the runtime for the container's log path (ContainerStatus) and
// calls ReadLogs with the request's PodLogOptions turned into Options by NewOptions.
//
// Upstream counterpart (k8s.io/kubernetes v1.36; the reader moved into staging as cri-client):
//   - staging/src/k8s.io/cri-client/pkg/logs/logs.go — LogOptions, parseCRILog, logWriter,
//     ReadLogs, waitLogs (follow with fsnotify + a 1 s forced re-read) → options.go, parse.go, logs.go
//   - staging/src/k8s.io/cri-client/pkg/logs/tail.go — findTailLineStartIndex → tail.go
//   - pkg/kubelet/kuberuntime/kuberuntime_logs.go   — PodLogOptions → LogOptions → NewOptions
//   - pkg/kubelet/kuberuntime/kuberuntime_container.go — GetContainerLogs: ContainerStatus gives
//     the log path, then ReadLogs (our caller does this and passes isRunning)
//
// # The CRI log format
//
// The runtime writes one line per chunk of container output:
//
//	<timestamp RFC3339Nano> <stream> <tag> <content>\n
//
//	2016-10-06T00:17:09.669794202Z stdout F hello world
//	2016-10-06T00:17:09.669794203Z stderr P this long line was split by the run
//	2016-10-06T00:17:09.669794204Z stderr F time into two pieces
//	2016-10-06T00:17:09.669794205Z stdout P last words without a newline
//
// stream is stdout or stderr. The tag is F (full: the content ends a line the container wrote)
// or P (partial: the runtime split a long line, or the container exited in the middle of one; the
// content continues in the next line of the same stream). Further tags may follow after ':'
// ("P:x"); only the first one counts. A "message" is zero or more P lines and the F line that ends
// them, on one stream; it is shown as one line: "this long line was split by the runtime into two
// pieces\n". A trailing P message with no F (the last example) is shown without a newline.
//
// # One ReadLogs call
//
//	open path ─▶ TailLines? findTailStart (read backwards in blocks, count F lines) ─▶ seek
//	  ┌─▶ drain: every complete line → parseCRILog (malformed: skip, V(4)) → messageWriter
//	  │     (SinceTime filter, timestamp prefix on a message's first piece, LimitBytes cut)
//	  │   not Follow, or the container had exited before this drain ─▶ return
//	  │   isRunning() false ─▶ drain once more (lines written just before it exited), return
//	  └── wait: fsnotify write on the file, or forceCheckPeriod on the clock, or ctx done
//
// Invariants: only '\n'-terminated lines are parsed; the bytes of a line still being written are
// kept and completed on a later drain. Every byte written to stdout/stderr counts towards
// LimitBytes, the timestamp prefix included. The periodic check is the source of truth when
// following; fsnotify only makes new lines show up sooner (and is skipped if unavailable).
//
// Simplified compared with upstream:
//   - CRI format only; the Docker JSON format (parseDockerJSONLog) is not read.
//   - Log rotation is not handled: rotated files (0.log.20240101-…, .gz) are not read, and a
//     follower keeps reading the file it opened (after a create-mode rotation it sees nothing
//     new; after copytruncate it reads at its old offset). Upstream reopens on fsnotify Create.
//   - Whether the container still runs is the caller's isRunning, polled before each wait;
//     upstream calls CRI ContainerStatus itself and treats "runtime Unavailable" as running.
//   - Without Follow, a last line that has no '\n' yet is left out (upstream prints it).
//   - P pieces are joined per stream (each stream remembers whether its last line was P);
//     upstream keeps one such flag for both streams. TailLines counts messages (F lines, plus a
//     trailing unfinished one); upstream counts file lines.
//     A message whose P pieces interleave with another stream's F line may lose its head when
//     tailing.
//   - To read one stream only (PodLogOptions.Stream, since v1.32), pass nil for the other
//     writer: its lines are skipped and not counted towards LimitBytes, as upstream.
package logs
