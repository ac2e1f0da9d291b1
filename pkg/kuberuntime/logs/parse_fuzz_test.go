package logs

import (
	"bytes"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// FuzzParseCRILog checks the CRI log line parser two ways. Any line: no panic, and a parsed line
// has a known stream and content that is a suffix of the line (it aliases it). A well-formed line
// built from the fuzzer's (timestamp, zone, stream, tag, extra tags, content) — what a runtime
// writes, "<RFC3339Nano> <stdout|stderr> <F|P>[:tags] <content>" — parses back to exactly those
// values, whether the timestamp is written with the runtime's fixed nine digits or with
// RFC3339Nano's trimmed fraction. Pure.
//
//	go test -run '^$' -fuzz FuzzParseCRILog -fuzztime 60s ./pkg/kuberuntime/logs
func FuzzParseCRILog(f *testing.F) {
	f.Add([]byte("2016-10-06T00:17:09.669794202Z stdout F hello world"), int64(1475712929669794202), int16(0), true, false, "", "hello world", true)
	f.Add([]byte("2016-10-06T00:17:09.669794202Z stderr P part"), int64(0), int16(120), false, true, "", "part", false)
	f.Add([]byte("2016-10-06T00:17:09.6+02:00 stdout P:future x"), int64(-1), int16(-330), true, true, ":future:more", " a  b ", true)
	f.Add([]byte("2016-10-06T00:17:09.669794202Z stdout F "), int64(1<<62), int16(-720), false, false, ":", "", false)
	f.Add([]byte("garbage"), int64(7), int16(59), true, false, "", "\x00\xff\t\r", true)
	f.Add([]byte("2016/10/06 stdout F x"), int64(-62135596800000000), int16(840), true, false, "", "é", false)
	f.Add([]byte("2016-10-06T00:17:09.669794202Z stdin F x"), int64(253402300799), int16(1), true, false, "", "x", true)
	f.Fuzz(func(t *testing.T, line []byte, nanos int64, zoneMinutes int16, stdout, partial bool, extraTags, content string, fixedDigits bool) {
		// Any line.
		if msg, err := parseCRILog(line); err == nil {
			if msg.stream != runtimeapi.Stdout && msg.stream != runtimeapi.Stderr {
				t.Errorf("parsed %q with stream %q", line, msg.stream)
			}
			if !bytes.HasSuffix(line, msg.content) {
				t.Errorf("parsed %q with content %q, which is not the end of the line", line, msg.content)
			}
			_ = render(msg, false, true)
		} else if err.Error() == "" {
			t.Errorf("an empty error for %q", line)
		}

		// A well-formed line. Content and tags are one line each; extra tags have no space.
		content = strings.ReplaceAll(content, "\n", "")
		extraTags = strings.NewReplacer(" ", "", "\n", "").Replace(extraTags)
		if extraTags != "" && !strings.HasPrefix(extraTags, runtimeapi.LogTagDelimiter) {
			extraTags = runtimeapi.LogTagDelimiter + extraTags
		}
		// A time a runtime could write: years 1678–2262, zones within ±14 h, to the minute.
		zone := time.FixedZone("", int(zoneMinutes%(14*60))*60)
		ts := time.Unix(0, nanos).In(zone)
		layout := time.RFC3339Nano
		if fixedDigits {
			layout = timestampOut
		}
		stream, tag := runtimeapi.Stderr, runtimeapi.LogTagFull
		if stdout {
			stream = runtimeapi.Stdout
		}
		if partial {
			tag = runtimeapi.LogTagPartial
		}
		wellFormed := ts.Format(layout) + " " + string(stream) + " " + string(tag) + extraTags + " " + content
		msg, err := parseCRILog([]byte(wellFormed))
		if err != nil {
			t.Fatalf("the well-formed line %q does not parse: %v", wellFormed, err)
		}
		if !msg.timestamp.Equal(ts) || msg.stream != stream || msg.partial != partial || string(msg.content) != content {
			t.Errorf("%q parsed to (%s, %s, partial %t, %q), want (%s, %s, partial %t, %q)", wellFormed,
				msg.timestamp.Format(time.RFC3339Nano), msg.stream, msg.partial, msg.content,
				ts.Format(time.RFC3339Nano), stream, partial, content)
		}
		// What kubectl logs shows for it is the content, and a newline unless the line is partial.
		if want := content + map[bool]string{false: "\n", true: ""}[partial]; string(render(msg, false, false)) != want {
			t.Errorf("render(%q) = %q, want %q", wellFormed, render(msg, false, false), want)
		}
	})
}

// FuzzFindTailStart checks `kubectl logs --tail` on arbitrary file content, block sizes and
// tails. The offset is a line start within the file; the block size never changes it; and it is
// the one a plain forward reading gives: the latest message boundary (after a complete F line, at
// the end of the last complete line, or offset 0) that still leaves at least n messages after
// it, where a message is a run of valid lines ending in an F line or unfinished at the end, and
// malformed lines are skipped. Pure: it reads from memory.
//
//	go test -run '^$' -fuzz FuzzFindTailStart -fuzztime 60s ./pkg/kuberuntime/logs
func FuzzFindTailStart(f *testing.F) {
	const ts = "2016-10-06T00:17:09.669794202Z "
	full := func(s string) string { return ts + "stdout F " + s + "\n" }
	part := func(s string) string { return ts + "stderr P " + s + "\n" }
	f.Add([]byte(full("a")+full("b")+full("c")), int64(2), uint16(7))
	f.Add([]byte(full("a")+part("b1")+part("b2")+full("b3")), int64(1), uint16(1))
	f.Add([]byte(full("a")+full("b")+part("c")), int64(2), uint16(40))
	f.Add([]byte(full("a")+"garbage\n"+full("b")+"junk\n"), int64(1), uint16(3))
	f.Add([]byte(full("a")+full("b")+ts+"stdout F c"), int64(0), uint16(4096))
	f.Add([]byte("\n\n"+full("a")), int64(5), uint16(2))
	f.Add([]byte(""), int64(-1), uint16(0))
	f.Fuzz(func(t *testing.T, file []byte, n int64, block uint16) {
		blockSize := int(block%512) + 1
		size := int64(len(file))
		start, err := findTailStart(bytes.NewReader(file), size, n, blockSize)
		if err != nil {
			t.Fatalf("findTailStart(n=%d, block %d) on %q: %v", n, blockSize, file, err)
		}
		if start < 0 || start > size || (start > 0 && file[start-1] != '\n') {
			t.Fatalf("findTailStart(n=%d, block %d) on %q = %d: not a line start in the file", n, blockSize, file, start)
		}
		if other, _ := findTailStart(bytes.NewReader(file), size, n, tailBlockSize); other != start {
			t.Errorf("findTailStart(n=%d) on %q: %d with block %d, %d with block %d", n, file, start, blockSize, other, tailBlockSize)
		}
		if want := forwardTailStart(file, n); start != want {
			t.Errorf("findTailStart(n=%d, block %d) on %q = %d, want %d (leaves %q)", n, blockSize, file, start, want, file[want:])
		}
	})
}

// forwardTailStart is findTailStart's specification, computed the slow way: reading forward.
func forwardTailStart(file []byte, n int64) int64 {
	if n < 0 {
		return 0
	}
	type line struct {
		end          int64 // offset after its '\n'
		valid, final bool  // parses; parses with tag F
	}
	var lines []line
	for off := 0; ; {
		i := bytes.IndexByte(file[off:], '\n')
		if i < 0 {
			break // the trailing fragment is still being written
		}
		msg, err := parseCRILog(file[off : off+i])
		off += i + 1
		lines = append(lines, line{end: int64(off), valid: err == nil, final: err == nil && !msg.partial})
	}
	// messagesAfter(k) counts the messages in lines[k:].
	messagesAfter := func(k int) int64 {
		var count int64
		open := false
		for _, l := range lines[k:] {
			if l.valid {
				open = true
			}
			if l.final {
				count, open = count+1, false
			}
		}
		if open {
			count++
		}
		return count
	}
	// Boundaries, latest first: the end of the last complete line, after every F line, then 0.
	for k := len(lines); k > 0; k-- {
		if (k == len(lines) || lines[k-1].final) && messagesAfter(k) >= n {
			return lines[k-1].end
		}
	}
	return 0
}
