package logs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// forceCheckPeriod is how long a follower waits for an fsnotify event before it re-reads the
// file anyway (upstream logForceCheckPeriod), so a missed event costs at most this much delay.
const forceCheckPeriod = time.Second

// ReadLogs writes the CRI log file at path to stdout and stderr, each line to the writer of its
// stream; a nil writer drops that stream. With opts.Follow it keeps reading lines as they are
// appended — woken by fsnotify on the file, and every forceCheckPeriod on clk in case an event
// is missed — until ctx is done (it returns ctx.Err()), or until isRunning reports that the
// container has exited and the file has been read to its end (it returns nil). isRunning is
// called from ReadLogs' goroutine, once before each wait; it may block briefly (a CRI call).
// Malformed lines are skipped. Errors opening or reading the file or writing to stdout/stderr are
// returned.
func ReadLogs(ctx context.Context, clk clock.Clock, path string, opts Options, isRunning func() bool, stdout, stderr io.Writer) error {
	r := &reader{
		clock:     clk,
		path:      path,
		opts:      opts,
		isRunning: isRunning,
		notify:    true,
		out:       newMessageWriter(opts, stdout, stderr),
	}
	return r.run(ctx)
}

// reader is one ReadLogs call.
type reader struct {
	clock     clock.Clock
	path      string
	opts      Options
	isRunning func() bool
	// notify turns on fsnotify; tests turn it off to drive following by the clock alone.
	notify bool
	out    *messageWriter
}

// run opens the file, seeks to the tail and drains it, then, when following, waits for more.
func (r *reader) run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	f, err := os.Open(r.path)
	if err != nil {
		return fmt.Errorf("open container log file: %w", err)
	}
	defer func() { _ = f.Close() }()
	if r.opts.LimitBytes != nil && *r.opts.LimitBytes <= 0 {
		return nil // nothing may be written
	}
	if !r.opts.Follow && r.opts.TailLines != nil && *r.opts.TailLines == 0 {
		return nil // no old messages wanted, and no new ones
	}

	if r.opts.TailLines != nil {
		info, err := f.Stat()
		if err != nil {
			return fmt.Errorf("stat container log file: %w", err)
		}
		start, err := findTailStart(f, info.Size(), *r.opts.TailLines, tailBlockSize)
		if err != nil {
			return fmt.Errorf("find the last %d messages in %q: %w", *r.opts.TailLines, r.path, err)
		}
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			return fmt.Errorf("seek to offset %d in %q: %w", start, r.path, err)
		}
	}
	lines := &lineReader{r: bufio.NewReader(f)}

	// changes and watchErrs stay nil (never ready) when not following or fsnotify is unavailable.
	var changes <-chan fsnotify.Event
	var watchErrs <-chan error
	if r.opts.Follow && r.notify {
		if w, err := fsnotify.NewWatcher(); err != nil {
			logger.Error(err, "Cannot watch the container log file; following by periodic re-reads", "path", r.path)
		} else {
			defer func() { _ = w.Close() }()
			if err := w.Add(r.path); err != nil {
				logger.Error(err, "Cannot watch the container log file; following by periodic re-reads", "path", r.path)
			} else {
				changes, watchErrs = w.Events, w.Errors
			}
		}
	}

	exited := false
	for {
		done, err := r.drain(ctx, lines)
		if err != nil {
			return err
		}
		if done {
			logger.V(2).Info("Finished reading container log, byte limit reached", "path", r.path, "limitBytes", *r.opts.LimitBytes)
			return nil
		}
		if !r.opts.Follow || exited {
			logger.V(2).Info("Finished reading container log", "path", r.path)
			return nil
		}
		if !r.isRunning() {
			// Drain once more: the container may have written its last lines after our last
			// read and before it exited.
			exited = true
			continue
		}
		if err := r.wait(ctx, changes, watchErrs); err != nil {
			return err
		}
	}
}

// drain parses and writes every complete line up to the current end of the file. It reports
// done when LimitBytes has been reached.
func (r *reader) drain(ctx context.Context, lines *lineReader) (done bool, err error) {
	logger := klog.FromContext(ctx)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		line, err := lines.next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read container log file %q: %w", r.path, err)
		}
		msg, err := parseCRILog(line)
		if err != nil {
			logger.V(4).Info("Skipping malformed line in container log", "path", r.path, "err", err)
			continue
		}
		if done, err := r.out.write(msg); done || err != nil {
			return done, err
		}
	}
}

// wait blocks until the file may have grown: an fsnotify event, forceCheckPeriod on the clock,
// or ctx done (then it returns ctx.Err()).
func (r *reader) wait(ctx context.Context, changes <-chan fsnotify.Event, watchErrs <-chan error) error {
	timer := r.clock.NewTimer(forceCheckPeriod)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-changes:
	case err := <-watchErrs:
		// The periodic re-read still finds new lines; an event lost here only costs a delay.
		klog.FromContext(ctx).V(2).Info("Watching the container log file failed", "path", r.path, "err", err)
	case <-timer.C():
	}
	return nil
}

// lineReader returns the complete lines of a file that is being appended to.
type lineReader struct {
	r *bufio.Reader
	// fragment holds the start of a line read before its '\n' was written.
	fragment []byte
}

// next returns the next complete line without its '\n'; the caller may keep it. At the end of
// the file it returns io.EOF and keeps the bytes of an unfinished line for a later call.
func (l *lineReader) next() ([]byte, error) {
	b, err := l.r.ReadBytes('\n')
	if err != nil {
		l.fragment = append(l.fragment, b...)
		return nil, err
	}
	if len(l.fragment) > 0 {
		b = append(l.fragment, b...)
		l.fragment = nil
	}
	return b[:len(b)-1], nil
}

// messageWriter writes parsed lines to their streams, applying SinceTime, Timestamps and
// LimitBytes (upstream logWriter). It keeps per-stream state because a message's P and F
// pieces are on one stream, and the other stream's lines may come in between.
type messageWriter struct {
	opts   Options
	remain int64 // bytes LimitBytes still allows
	stdout streamState
	stderr streamState
}

type streamState struct {
	w io.Writer // nil: this stream was not requested
	// continuing: the last line was P, so the next one continues its message.
	continuing bool
	// skip: the current message started before SinceTime.
	skip bool
}

func newMessageWriter(opts Options, stdout, stderr io.Writer) *messageWriter {
	mw := &messageWriter{
		opts:   opts,
		remain: math.MaxInt64,
		stdout: streamState{w: stdout},
		stderr: streamState{w: stderr},
	}
	if opts.LimitBytes != nil {
		mw.remain = *opts.LimitBytes
	}
	return mw
}

// write writes one parsed line and reports done once LimitBytes has been reached; the write
// that reaches it is cut to fit.
func (mw *messageWriter) write(msg logMessage) (done bool, err error) {
	s := &mw.stdout
	if msg.stream == runtimeapi.Stderr {
		s = &mw.stderr
	}
	continuing := s.continuing
	if !continuing {
		// A message is kept or skipped as a whole, by the time of its first piece.
		s.skip = mw.opts.SinceTime != nil && msg.timestamp.Before(*mw.opts.SinceTime)
	}
	s.continuing = msg.partial
	if s.skip || s.w == nil {
		return false, nil
	}
	b := render(msg, continuing, mw.opts.Timestamps)
	if int64(len(b)) > mw.remain {
		b = b[:mw.remain]
	}
	n, err := s.w.Write(b)
	mw.remain -= int64(n)
	if err != nil {
		return false, fmt.Errorf("write container log %s: %w", msg.stream, err)
	}
	if n < len(b) {
		return false, fmt.Errorf("write container log %s: %w", msg.stream, io.ErrShortWrite)
	}
	return mw.remain <= 0, nil
}
