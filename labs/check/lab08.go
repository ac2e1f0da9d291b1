package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Lab 08, kubectl exec: exec and port-forward travel kubectl → API server → the kubelet API
// (:10250) → CRI Exec/PortForward → the runtime's streaming server. The checks go the same way.
const (
	lab08Shell  = "lab08-shell"
	lab08Create = "kubectl run " + lab08Shell + " --image=busybox:1.36 -- sleep infinity"
)

func lab08() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		podRunning(lab08Shell, lab08Create),
		{name: "exec prints what the command writes", needs: []string{podRuns(lab08Shell)}, run: func(ctx context.Context, e *env) result {
			word := fmt.Sprintf("lab-check-%d", time.Now().UnixNano())
			res := e.exec(ctx, lab08Shell, nil, "echo", word)
			return execPrinted(res, "echo "+word, word+"\n")
		}},
		{name: "exec carries stdin", needs: []string{podRuns(lab08Shell)}, run: func(ctx context.Context, e *env) result {
			res := e.exec(ctx, lab08Shell, strings.NewReader("ping\n"), "cat")
			return execPrinted(res, "cat (stdin: ping)", "ping\n")
		}},
		{name: "exec returns the exit code", needs: []string{podRuns(lab08Shell)}, run: func(ctx context.Context, e *env) result {
			res := e.exec(ctx, lab08Shell, nil, "sh", "-c", "exit 3")
			if res.err != nil || res.exitCode != 3 {
				return missing(fmt.Sprintf(`sh -c "exit 3" ended with exit code %d, %v`, res.exitCode, res.err),
					"the runtime's exit code must reach kubectl: see the minikubelet log at -v=4 ('Proxying stream')")
			}
			return passed(`kubectl exec %s -- sh -c "exit 3" → exit code 3`, lab08Shell)
		}},
		{name: "port-forward exchanges bytes", needs: []string{podRuns(lab08Shell)}, run: func(ctx context.Context, e *env) result {
			payload := []byte("ping through the kubelet\n")
			got, err := e.portForward(ctx, lab08Shell, 80, payload)
			if err != nil || string(got) != string(payload) {
				return missing(fmt.Sprintf("port-forward to %s:80 sent %q, got back %q (%v)", lab08Shell, payload, got, err),
					"the fake pod echoes every port: kubectl port-forward pod/"+lab08Shell+" 8080:80 and send it a line; the minikubelet log at -v=4 shows the /portForward request")
			}
			return passed("port-forward to %s:80 sent %q and got it back", lab08Shell, strings.TrimSpace(string(payload)))
		}},
	}
}

// execPrinted: the exec succeeded and printed want on stdout. Pure.
func execPrinted(res execResult, what, want string) result {
	if res.err != nil || res.exitCode != 0 {
		return missing(fmt.Sprintf("kubectl exec %s -- %s failed: exit code %d, %v %s", lab08Shell, what, res.exitCode, res.err, strings.TrimSpace(res.stderr)),
			"the path is API server → kubelet API → CRI Exec; the minikubelet log at -v=4 shows each step")
	}
	if res.stdout != want {
		return missing(fmt.Sprintf("kubectl exec %s -- %s printed %q, not %q", lab08Shell, what, res.stdout, want), "see the minikubelet log at -v=4")
	}
	return passed("kubectl exec %s -- %s → %q", lab08Shell, what, strings.TrimSpace(res.stdout))
}
