package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// auditLogReader counts a node's API requests in kube-apiserver's audit log (hack/cluster up
// --audit-log: every request of the group system:nodes, level Metadata, RequestReceived omitted).
type auditLogReader struct{ path string }

// auditEvent is the part of an audit.k8s.io/v1 Event the bench reads.
type auditEvent struct {
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// count returns user's requests received in [from, to], by "verb resource[/subresource]". Each
// request counts once: a watch when its response starts (a watch refused before it streams has
// no such stage: when it completes), anything else when it completes. It waits a second first,
// so requests sent just before `to` are answered and logged.
func (a *auditLogReader) count(ctx context.Context, user string, from, to time.Time) (map[string]int, error) {
	return a.countMatching(ctx, func(u string) bool { return u == user }, from, to)
}

// countPrefix is count for every user whose name starts with prefix (the nodes of --nodes).
func (a *auditLogReader) countPrefix(ctx context.Context, prefix string, from, to time.Time) (map[string]int, error) {
	return a.countMatching(ctx, func(u string) bool { return strings.HasPrefix(u, prefix) }, from, to)
}

func (a *auditLogReader) countMatching(ctx context.Context, user func(string) bool, from, to time.Time) (map[string]int, error) {
	if err := sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	f, err := os.Open(a.path)
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	counts := map[string]int{}
	watchStarted := map[string]bool{} // by auditID
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var e auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			continue // a line being written right now
		}
		if !user(e.User.Username) || e.RequestReceivedTimestamp.Before(from) || e.RequestReceivedTimestamp.After(to) {
			continue
		}
		if !countsOnce(e, watchStarted) {
			continue
		}
		key := e.Verb
		if e.ObjectRef != nil {
			key += " " + e.ObjectRef.Resource
			if e.ObjectRef.Subresource != "" {
				key += "/" + e.ObjectRef.Subresource
			}
		}
		counts[key]++
	}
	return counts, scanner.Err()
}

// countsOnce reports whether e is the one stage of its request that is counted; started remembers
// the watches already counted at ResponseStarted (the log lists a request's stages in order).
func countsOnce(e auditEvent, started map[string]bool) bool {
	switch {
	case e.Verb == "watch" && e.Stage == "ResponseStarted":
		started[e.AuditID] = true
		return true
	case e.Stage == "ResponseComplete" || e.Stage == "Panic":
		return e.Verb != "watch" || !started[e.AuditID]
	}
	return false
}
