package logsafe

import (
	"fmt"

	"k8s.io/klog/v2"
)

// bodyMessages are the messages of client-go's body log entries (k8s.io/client-go/rest logBody);
// the body is the value of bodyKey.
var bodyMessages = map[string]bool{"Request Body": true, "Response Body": true}

const bodyKey = "body"

// BodyFilter is a klog.LogFilter that keeps client-go's request and response bodies out of the
// log and passes everything else through unchanged. It has no state; install it with
// klog.SetLogFilter(BodyFilter{}) before anything logs.
type BodyFilter struct{}

var _ klog.LogFilter = BodyFilter{}

// Filter passes klog.Info-style arguments through: client-go logs no bodies that way.
func (BodyFilter) Filter(args []any) []any { return args }

// FilterF passes klog.Infof-style arguments through: client-go logs no bodies that way.
func (BodyFilter) FilterF(format string, args []any) (string, []any) { return format, args }

// FilterS replaces the body of client-go's "Request Body" and "Response Body" entries with its
// size. It returns a new slice when it changes one; the caller's is never modified.
func (BodyFilter) FilterS(msg string, keysAndValues []any) (string, []any) {
	if !bodyMessages[msg] {
		return msg, keysAndValues
	}
	var out []any // a copy, made at the first body
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		if key, ok := keysAndValues[i].(string); !ok || key != bodyKey || keysAndValues[i+1] == "" {
			continue // an empty body (a GET's request) says nothing
		}
		if out == nil {
			out = append([]any(nil), keysAndValues...)
		}
		out[i+1] = omitted(keysAndValues[i+1])
	}
	if out == nil {
		return msg, keysAndValues
	}
	return msg, out
}

// omitted is what the log shows instead of a body.
func omitted(body any) string {
	size := "a body"
	switch b := body.(type) {
	case string:
		size = fmt.Sprintf("%d bytes", len(b))
	case []byte:
		size = fmt.Sprintf("%d bytes", len(b))
	}
	return fmt.Sprintf("<%s omitted: API bodies can hold Secrets and tokens, minikubelet does not log them>", size)
}
