package logs

import (
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Upstream pins (cri-client parseCRILog): "<RFC3339Nano> <stdout|stderr> <tag> <content>",
// tag F is a full line and P a partial one, extra ':'-separated tags are ignored, and the
// content keeps its spaces.
func TestParseCRILog(t *testing.T) {
	ts := time.Date(2016, 10, 6, 0, 17, 9, 669794202, time.UTC)
	tests := []struct {
		name    string
		line    string
		want    logMessage
		wantErr bool
	}{
		{"full stdout line", "2016-10-06T00:17:09.669794202Z stdout F hello world",
			logMessage{ts, runtimeapi.Stdout, false, []byte("hello world")}, false},
		{"partial stderr line", "2016-10-06T00:17:09.669794202Z stderr P part",
			logMessage{ts, runtimeapi.Stderr, true, []byte("part")}, false},
		{"later tags are ignored (forward compatible)", "2016-10-06T00:17:09.669794202Z stdout P:future x",
			logMessage{ts, runtimeapi.Stdout, true, []byte("x")}, false},
		{"content keeps its spaces", "2016-10-06T00:17:09.669794202Z stdout F  a  b ",
			logMessage{ts, runtimeapi.Stdout, false, []byte(" a  b ")}, false},
		{"empty content is an empty line", "2016-10-06T00:17:09.669794202Z stdout F ",
			logMessage{ts, runtimeapi.Stdout, false, []byte{}}, false},
		{"fewer fraction digits are accepted", "2016-10-06T00:17:09.6Z stdout F x",
			logMessage{time.Date(2016, 10, 6, 0, 17, 9, 600000000, time.UTC), runtimeapi.Stdout, false, []byte("x")}, false},
		{"no space at all", "garbage", logMessage{}, true},
		{"timestamp not RFC3339", "2016/10/06 stdout F x", logMessage{}, true},
		{"unknown stream", "2016-10-06T00:17:09.669794202Z stdin F x", logMessage{}, true},
		{"no tag delimiter", "2016-10-06T00:17:09.669794202Z stdout F", logMessage{}, true},
		{"unknown tag", "2016-10-06T00:17:09.669794202Z stdout X x", logMessage{}, true},
		{"no stream", "2016-10-06T00:17:09.669794202Z ", logMessage{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCRILog([]byte(tc.line))
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseCRILog(%q) error = %v, wantErr %v", tc.line, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if !got.timestamp.Equal(tc.want.timestamp) || got.stream != tc.want.stream ||
				got.partial != tc.want.partial || string(got.content) != string(tc.want.content) {
				t.Errorf("parseCRILog(%q) = %+v, want %+v", tc.line, got, tc.want)
			}
		})
	}
}

// Upstream pins (cri-client logWriter.write): the timestamp prefix is RFC3339Nano with a fixed
// nine-digit fraction and a space, written only at the start of a message; P pieces are written
// without a newline so the next piece continues the same output line.
func TestRender(t *testing.T) {
	ts := time.Date(2016, 10, 6, 0, 17, 9, 600000000, time.UTC)
	full := logMessage{timestamp: ts, stream: runtimeapi.Stdout, content: []byte("done")}
	partial := logMessage{timestamp: ts, stream: runtimeapi.Stdout, partial: true, content: []byte("part")}
	tests := []struct {
		name                   string
		msg                    logMessage
		continuing, timestamps bool
		want                   string
	}{
		{"full line ends with newline", full, false, false, "done\n"},
		{"partial piece has no newline", partial, false, false, "part"},
		{"timestamp prefix, fixed width", full, false, true, "2016-10-06T00:17:09.600000000Z done\n"},
		{"continuing piece gets no prefix", full, true, true, "done\n"},
		{"first partial piece gets the prefix", partial, false, true, "2016-10-06T00:17:09.600000000Z part"},
		{"empty full line", logMessage{timestamp: ts, stream: runtimeapi.Stdout}, false, false, "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(render(tc.msg, tc.continuing, tc.timestamps)); got != tc.want {
				t.Errorf("render() = %q, want %q", got, tc.want)
			}
		})
	}
}
