package logs

import (
	"fmt"
	"strings"
	"testing"
)

// Upstream pins (cri-client findTailLineStartIndex): n < 0 is the whole file, the last n lines
// are found reading backwards in blocks, and an unfinished last line (no '\n') is not counted.
// Ours counts messages: P pieces stay with the F line that ends them.
func TestFindTailStart(t *testing.T) {
	const ts = "2016-10-06T00:17:09.669794202Z "
	f := func(s string) string { return ts + "stdout F " + s + "\n" }
	p := func(s string) string { return ts + "stdout P " + s + "\n" }
	e := func(s string) string { return ts + "stderr F " + s + "\n" }
	tests := []struct {
		name string
		file string
		n    int64
		want string // file[start:]
	}{
		{"negative: whole file", f("a") + f("b"), -1, f("a") + f("b")},
		{"empty file, tail 0", "", 0, ""},
		{"empty file, tail 1", "", 1, ""},
		{"tail 0", f("a") + f("b"), 0, ""},
		{"tail 1", f("a") + f("b") + f("c"), 1, f("c")},
		{"tail 2", f("a") + f("b") + f("c"), 2, f("b") + f("c")},
		{"tail equal to messages", f("a") + f("b") + f("c"), 3, f("a") + f("b") + f("c")},
		{"tail more than messages", f("a") + f("b"), 10, f("a") + f("b")},
		{"both streams count", f("a") + e("b") + f("c"), 2, e("b") + f("c")},
		{"P pieces stay with their F line", f("a") + p("b1") + p("b2") + f("b3"), 1, p("b1") + p("b2") + f("b3")},
		{"joined message counts once", p("a1") + f("a2") + f("b"), 2, p("a1") + f("a2") + f("b")},
		{"trailing unfinished message counts", f("a") + f("b") + p("c"), 1, p("c")},
		{"trailing unfinished message, tail 2", f("a") + f("b") + p("c"), 2, f("b") + p("c")},
		{"tail 0 skips the unfinished message too", f("a") + p("c"), 0, ""},
		{"fragment without newline is not counted", f("a") + f("b") + ts + "stdout F c", 1, f("b") + ts + "stdout F c"},
		{"only a fragment", ts + "stdout F c", 1, ts + "stdout F c"},
		{"tail 0 starts before the fragment", f("a") + ts + "std", 0, ts + "std"},
		{"malformed lines are not counted", f("a") + "garbage\n" + f("b") + "junk\n", 1, "garbage\n" + f("b") + "junk\n"},
		{"only malformed lines", "garbage\njunk\n", 1, "garbage\njunk\n"},
		{"empty lines are malformed: not counted, skipped when read", "\n\n" + f("a"), 1, "\n\n" + f("a")},
	}
	// Block sizes smaller than a line make lines span blocks, as long lines do in real files.
	for _, blockSize := range []int{1, 2, 7, 40, tailBlockSize} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/block %d", tc.name, blockSize), func(t *testing.T) {
				start, err := findTailStart(strings.NewReader(tc.file), int64(len(tc.file)), tc.n, blockSize)
				if err != nil {
					t.Fatalf("findTailStart: %v", err)
				}
				if got := tc.file[start:]; got != tc.want {
					t.Errorf("findTailStart(n=%d) leaves %q, want %q", tc.n, got, tc.want)
				}
			})
		}
	}
}
