package logs

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// timestampOut is how a message's timestamp is shown with Timestamps: RFC3339Nano with a fixed
// nine-digit fraction so the columns line up (upstream RFC3339NanoFixed). Lines are read with
// time.RFC3339Nano, which accepts any number of digits.
const timestampOut = "2006-01-02T15:04:05.000000000Z07:00"

// logMessage is one parsed line of a CRI log file.
type logMessage struct {
	timestamp time.Time
	// stream is runtimeapi.Stdout ("stdout") or runtimeapi.Stderr ("stderr").
	stream runtimeapi.LogStreamType
	// partial is true for tag P: content continues in the next line of the same stream.
	partial bool
	// content is what the container wrote, without the line's '\n'. It aliases the parsed line.
	content []byte
}

// parseCRILog parses one line of a CRI log file, given without its '\n':
//
//	2016-10-06T00:17:09.669794202Z stdout F log content
//
// Fields are separated by single spaces; everything after the third space is content, spaces
// included. Pure.
func parseCRILog(line []byte) (logMessage, error) {
	var msg logMessage
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return msg, errors.New("no timestamp: the line has no space")
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return msg, fmt.Errorf("timestamp %q is not RFC3339Nano: %w", ts, err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return msg, errors.New("no stream after the timestamp")
	}
	switch s := runtimeapi.LogStreamType(stream); s {
	case runtimeapi.Stdout, runtimeapi.Stderr:
		msg.stream = s
	default:
		return msg, fmt.Errorf("stream %q is neither stdout nor stderr", stream)
	}
	tags, content, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return msg, errors.New("no tag after the stream")
	}
	// Tags are ':'-separated and only the first one is defined, so later ones are ignored
	// (upstream keeps this forward compatible the same way).
	first, _, _ := bytes.Cut(tags, []byte(runtimeapi.LogTagDelimiter))
	switch runtimeapi.LogTag(first) {
	case runtimeapi.LogTagFull:
	case runtimeapi.LogTagPartial:
		msg.partial = true
	default:
		return msg, fmt.Errorf("tag %q is neither %s nor %s", first, runtimeapi.LogTagFull, runtimeapi.LogTagPartial)
	}
	msg.timestamp = t
	msg.content = content
	return msg, nil
}

// render returns the bytes one parsed line adds to its stream's output. continuing says that
// this line continues a message whose earlier P pieces were already rendered: only a message's
// first piece gets the timestamp prefix, and only its F piece ends it with '\n'. Pure.
func render(msg logMessage, continuing, timestamps bool) []byte {
	var out []byte
	if timestamps && !continuing {
		out = append(msg.timestamp.AppendFormat(out, timestampOut), ' ')
	}
	out = append(out, msg.content...)
	if !msg.partial {
		out = append(out, '\n')
	}
	return out
}
