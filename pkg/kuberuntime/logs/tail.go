package logs

import (
	"bytes"
	"fmt"
	"io"
)

// tailBlockSize is how much of the file findTailStart reads per step backwards.
const tailBlockSize = 4096

// findTailStart returns the offset in a CRI log file of size bytes at which its last n messages
// begin, reading backwards from the end in blocks of blockSize (upstream
// findTailLineStartIndex, which counts '\n's; we count messages so that P pieces are never cut
// from their F line). n < 0 means the whole file: offset 0.
//
// Walking lines from the end, a message boundary lies after every F line, and at the end of
// the last complete line. The messages after a boundary are the F lines after it, plus one if
// P lines follow the last F line (an unfinished message). A trailing fragment without '\n' is
// still being written and is not counted; malformed lines are skipped here as when reading.
// It only reads r.
func findTailStart(r io.ReaderAt, size, n int64, blockSize int) (int64, error) {
	if n < 0 {
		return 0, nil
	}
	var (
		// buf holds the file's bytes [off, off+len(buf)) not yet split into lines: at most one
		// line whose start lies in an earlier block, plus the block just read.
		buf      []byte
		off      = size
		anchored bool  // buf ends at a '\n': the trailing fragment was dropped
		seen     int64 // whole messages counted after the current line
		open     bool  // the lines after the current one start a message not in seen yet
		last     = true
	)
	block := make([]byte, blockSize)
	for off > 0 {
		start := max(off-int64(blockSize), 0)
		b := block[:off-start]
		if got, err := r.ReadAt(b, start); got < len(b) {
			return 0, fmt.Errorf("read %d bytes at offset %d: got %d: %w", len(b), start, got, err)
		}
		buf = append(append(make([]byte, 0, len(b)+len(buf)), b...), buf...)
		off = start
		if !anchored {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				buf = nil // still inside the trailing fragment
				continue
			}
			buf, anchored = buf[:i+1], true
		}
		// Split complete lines off the end of buf. Each ends with '\n'; it starts after the
		// previous '\n', or at offset 0.
		for len(buf) > 0 {
			i := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
			if i < 0 && off > 0 {
				break // this line starts in an earlier block
			}
			end := off + int64(len(buf))
			msg, err := parseCRILog(buf[i+1 : len(buf)-1])
			valid := err == nil
			if last || (valid && !msg.partial) {
				// end is a message boundary.
				if open {
					seen, open = seen+1, false
				}
				if seen == n {
					return end, nil
				}
			}
			last = false
			if valid {
				open = true
			}
			buf = buf[:i+1]
		}
	}
	return 0, nil
}
