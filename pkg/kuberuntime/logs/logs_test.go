package logs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// line builds one CRI log line written sec seconds after 2016-10-06T00:17:09Z.
func line(sec int, stream, tag, content string) string {
	ts := time.Date(2016, 10, 6, 0, 17, 9+sec, 669794202, time.UTC)
	return ts.Format(time.RFC3339Nano) + " " + stream + " " + tag + " " + content + "\n"
}

func writeLog(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func appendLog(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer that ReadLogs may write while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func never() bool { return false }

// Upstream pins (cri-client ReadLogs): lines go to the writer of their stream; P pieces join the
// next piece; tailLines, limitBytes (timestamp prefix included, last write cut), since and
// timestamps apply as in PodLogOptions; malformed lines are skipped, not fatal; with follow and
// an exited container the file is read to its end once.
func TestReadLogs(t *testing.T) {
	file := line(0, "stdout", "F", "out 1") +
		line(1, "stderr", "F", "err 1") +
		"this is not a CRI log line\n" +
		line(2, "stdout", "P", "out 2 part a, ") +
		line(3, "stderr", "P", "err 2 part a, ") + // the other stream interleaves its own P
		line(4, "stdout", "F", "out 2 part b") +
		line(5, "stderr", "F", "err 2 part b") +
		line(6, "stdout", "F", "out 3") +
		line(7, "stdout", "F", "") + // an empty line
		"2016-10-06T00:17:17Z stdout F still being writ" // no '\n' yet
	since := time.Date(2016, 10, 6, 0, 17, 9+3, 0, time.UTC)
	tests := []struct {
		name       string
		opts       Options
		noStderr   bool
		wantStdout string
		wantStderr string
	}{
		{name: "streams separated, P joined, malformed skipped, fragment left out",
			wantStdout: "out 1\nout 2 part a, out 2 part b\nout 3\n\n",
			wantStderr: "err 1\nerr 2 part a, err 2 part b\n"},
		{name: "tail 0", opts: Options{TailLines: ptr.To[int64](0)}},
		{name: "tail 1", opts: Options{TailLines: ptr.To[int64](1)}, wantStdout: "\n"},
		{name: "tail 3 counts joined messages once", opts: Options{TailLines: ptr.To[int64](3)},
			wantStdout: "out 3\n\n", wantStderr: "err 2 part b\n"}, // the interleaved stderr P lost its head, as documented
		{name: "tail 4", opts: Options{TailLines: ptr.To[int64](4)},
			wantStdout: "out 2 part a, out 2 part b\nout 3\n\n", wantStderr: "err 2 part a, err 2 part b\n"},
		{name: "tail more than lines", opts: Options{TailLines: ptr.To[int64](100)},
			wantStdout: "out 1\nout 2 part a, out 2 part b\nout 3\n\n",
			wantStderr: "err 1\nerr 2 part a, err 2 part b\n"},
		{name: "limitBytes cuts the last write", opts: Options{LimitBytes: ptr.To[int64](9)},
			wantStdout: "out 1\n", wantStderr: "err"},
		{name: "limitBytes counts the timestamp prefix", opts: Options{LimitBytes: ptr.To[int64](33), Timestamps: true},
			wantStdout: "2016-10-06T00:17:09.669794202Z ou"},
		{name: "since skips older messages, by their first piece", opts: Options{SinceTime: &since},
			wantStdout: "out 3\n\n", wantStderr: "err 2 part a, err 2 part b\n"},
		{name: "timestamps on the first piece of each message", opts: Options{Timestamps: true, TailLines: ptr.To[int64](4)},
			wantStdout: "2016-10-06T00:17:11.669794202Z out 2 part a, out 2 part b\n" +
				"2016-10-06T00:17:15.669794202Z out 3\n" +
				"2016-10-06T00:17:16.669794202Z \n",
			wantStderr: "2016-10-06T00:17:12.669794202Z err 2 part a, err 2 part b\n"},
		{name: "a nil writer drops its stream and does not count to limitBytes", noStderr: true,
			opts:       Options{LimitBytes: ptr.To[int64](12)},
			wantStdout: "out 1\nout 2 "},
		{name: "follow after exit reads the file once", opts: Options{Follow: true},
			wantStdout: "out 1\nout 2 part a, out 2 part b\nout 3\n\n",
			wantStderr: "err 1\nerr 2 part a, err 2 part b\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			path := writeLog(t, file)
			var stdout, stderr bytes.Buffer
			var stderrW io.Writer = &stderr
			if tc.noStderr {
				stderrW = nil
			}
			clk := testingclock.NewFakeClock(time.Now())
			if err := ReadLogs(ctx, clk, path, tc.opts, never, &stdout, stderrW); err != nil {
				t.Fatalf("ReadLogs: %v", err)
			}
			if stdout.String() != tc.wantStdout {
				t.Errorf("stdout = %q, want %q", stdout.String(), tc.wantStdout)
			}
			if stderr.String() != tc.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func TestReadLogsMissingFile(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	err := ReadLogs(ctx, testingclock.NewFakeClock(time.Now()), filepath.Join(t.TempDir(), "none.log"), Options{}, never, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadLogs on a missing file = %v, want an error wrapping os.ErrNotExist", err)
	}
}

// follow starts a following reader in a goroutine and returns its output and its result.
func follow(ctx context.Context, clk *testingclock.FakeClock, path string, opts Options, running *atomic.Bool, notify bool) (*syncBuffer, <-chan error) {
	out := &syncBuffer{}
	opts.Follow = true
	r := &reader{
		clock:     clk,
		path:      path,
		opts:      opts,
		isRunning: running.Load,
		notify:    notify,
		out:       newMessageWriter(opts, out, out),
	}
	done := make(chan error, 1)
	go func() { done <- r.run(ctx) }()
	return out, done
}

// waitFor polls until cond holds, stepping the fake clock past the forced re-read whenever the
// reader waits on it.
func waitFor(t *testing.T, ctx context.Context, clk *testingclock.FakeClock, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		if cond() {
			return true, nil
		}
		if clk != nil && clk.HasWaiters() {
			clk.Step(forceCheckPeriod)
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func finished(done <-chan error, err *error) func() bool {
	return func() bool {
		select {
		case *err = <-done:
			return true
		default:
			return false
		}
	}
}

// Upstream pins (cri-client ReadLogs/waitLogs): a follower re-reads the file every second even
// without fsnotify; an unfinished line is shown once its '\n' is written; when the container is
// no longer running the file is read to its end and ReadLogs returns nil.
func TestFollowByPeriodicCheckUntilExit(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Now())
	path := writeLog(t, line(0, "stdout", "F", "before"))
	var running atomic.Bool
	running.Store(true)
	out, done := follow(ctx, clk, path, Options{}, &running, false)

	waitFor(t, ctx, nil, "the existing line", func() bool { return out.String() == "before\n" })

	appendLog(t, path, line(1, "stdout", "P", "split "))
	appendLog(t, path, line(2, "stdout", "F", "line")[:20]) // half of the F line
	waitFor(t, ctx, clk, "the P piece", func() bool { return out.String() == "before\nsplit " })
	appendLog(t, path, line(2, "stdout", "F", "line")[20:])
	waitFor(t, ctx, clk, "the completed line", func() bool { return out.String() == "before\nsplit line\n" })

	// Written just before the container exits: ReadLogs must still show it.
	appendLog(t, path, line(3, "stderr", "F", "last words"))
	running.Store(false)
	var err error
	waitFor(t, ctx, clk, "ReadLogs to return after the container exited", finished(done, &err))
	if err != nil {
		t.Fatalf("ReadLogs after exit: %v", err)
	}
	if got, want := out.String(), "before\nsplit line\nlast words\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}

// Upstream pins: a follow request ends when the client goes away (ctx cancelled), even while the
// container keeps running, and tailLines 0 with follow streams only new lines.
func TestFollowEndsOnCancel(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clk := testingclock.NewFakeClock(time.Now())
	path := writeLog(t, line(0, "stdout", "F", "old"))
	var running atomic.Bool
	running.Store(true)
	out, done := follow(ctx, clk, path, Options{TailLines: ptr.To[int64](0)}, &running, false)

	// Once the reader waits it has sought past "old"; what is appended now is new.
	waitFor(t, ctx, nil, "the reader to wait", clk.HasWaiters)
	appendLog(t, path, line(1, "stdout", "F", "new"))
	waitFor(t, ctx, clk, "the new line", func() bool { return out.String() == "new\n" })
	waitFor(t, ctx, nil, "the reader to wait", clk.HasWaiters)
	cancel()
	var err error
	waitFor(t, context.Background(), nil, "ReadLogs to return on cancel", finished(done, &err))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ReadLogs after cancel = %v, want context.Canceled", err)
	}
}

// Upstream pins: limitBytes ends a follow request too, cutting the last write.
func TestFollowEndsAtLimitBytes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Now())
	path := writeLog(t, line(0, "stdout", "F", "12345"))
	var running atomic.Bool
	running.Store(true)
	out, done := follow(ctx, clk, path, Options{LimitBytes: ptr.To[int64](10)}, &running, false)

	waitFor(t, ctx, clk, "the first line", func() bool { return out.String() == "12345\n" })
	appendLog(t, path, line(1, "stdout", "F", "67890"))
	var err error
	waitFor(t, ctx, clk, "ReadLogs to return at the limit", finished(done, &err))
	if err != nil {
		t.Fatalf("ReadLogs: %v", err)
	}
	if got, want := out.String(), "12345\n6789"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}

// Upstream pins: fsnotify wakes a follower as soon as the runtime writes, without waiting for
// the periodic check. The fake clock is never stepped here, so only fsnotify can deliver.
func TestFollowWithFsnotify(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clk := testingclock.NewFakeClock(time.Now())
	path := writeLog(t, line(0, "stdout", "F", "one"))
	var running atomic.Bool
	running.Store(true)
	out, done := follow(ctx, clk, path, Options{}, &running, true)

	waitFor(t, ctx, nil, "the existing line", func() bool { return out.String() == "one\n" })
	var want strings.Builder
	want.WriteString("one\n")
	for i, s := range []string{"two", "three", "four"} {
		appendLog(t, path, line(i+1, "stdout", "F", s))
		want.WriteString(s + "\n")
		waitFor(t, ctx, nil, "line "+s+" via fsnotify", func() bool { return out.String() == want.String() })
	}
	cancel()
	var err error
	waitFor(t, context.Background(), nil, "ReadLogs to return on cancel", finished(done, &err))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ReadLogs after cancel = %v, want context.Canceled", err)
	}
}

// Upstream pins (waitLogs returns "not found" and ReadLogs reads on until EOF): lines the
// container wrote between our last read and its exit are still shown. isRunning here writes a
// last line and reports the exit in the same instant.
func TestFollowReadsLinesWrittenJustBeforeExit(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	path := writeLog(t, line(0, "stdout", "F", "first"))
	exit := func() bool {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return false
		}
		defer func() { _ = f.Close() }()
		if _, err := f.WriteString(line(1, "stdout", "F", "last")); err != nil {
			t.Error(err)
		}
		return false
	}
	var out bytes.Buffer
	if err := ReadLogs(ctx, testingclock.NewFakeClock(time.Now()), path, Options{Follow: true}, exit, &out, &out); err != nil {
		t.Fatalf("ReadLogs: %v", err)
	}
	if got, want := out.String(), "first\nlast\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}
