package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Lab 08, kubectl exec: exec and port-forward travel kubectl → API server → the kubelet API
// (:10250) → CRI Exec/PortForward → the runtime's streaming server. The checks go the same way.
// Before that, they look for the marks the student's own calls left in the container: a file
// exercise 1's exec wrote, and one exercise 4's POST /run made as the admin. The checker's own
// execs write nothing, so a pod nobody exec'd into has neither.
const (
	lab08Shell  = "lab08-shell"
	lab08Create = "kubectl run " + lab08Shell + " --image=busybox:1.36 -- sleep infinity"
	// Exercise 1 writes lab08Exec with lab08ExecLine; exercise 4 touches lab08Knocked.
	lab08Exec       = "/tmp/lab08"
	lab08ExecLine   = "written by exec"
	lab08ExecCmd    = `kubectl exec lab08-shell -- sh -c "echo written by exec > /tmp/lab08; exit 3"`
	lab08Knocked    = "/tmp/knocked"
	lab08KnockedCmd = `kubelet_api "/run/default/lab08-shell/lab08-shell?cmd=touch+/tmp/knocked" -X POST`
)

func lab08() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		podRunning(lab08Shell, lab08Create),
		{name: "exercise 1's exec left " + lab08Exec, needs: []string{podRuns(lab08Shell)}, run: func(ctx context.Context, e *env) result {
			return execLeftFile(e.exec(ctx, lab08Shell, nil, "cat", lab08Exec))
		}},
		{name: "exercise 4's POST /run left " + lab08Knocked, needs: []string{podRuns(lab08Shell)}, run: func(ctx context.Context, e *env) result {
			return runLeftFile(e.exec(ctx, lab08Shell, nil, "ls", lab08Knocked))
		}},
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

// execLeftFile: `cat /tmp/lab08` in the pod printed the line exercise 1's exec wrote there. Pure.
func execLeftFile(res execResult) result {
	switch {
	case res.err != nil || res.exitCode == -1:
		return missing(fmt.Sprintf("kubectl exec %s -- cat %s failed: %v", lab08Shell, lab08Exec, res.err), "see the checks below and the minikubelet log at -v=4")
	case res.exitCode != 0:
		return missing(fmt.Sprintf("%s is not in %s (%s): exercise 1's exec has not run in this container", lab08Exec, lab08Shell, strings.TrimSpace(res.stderr)),
			"do exercise 1: "+lab08ExecCmd+`; echo "exit code $?"`+" (a new pod, or a restarted minikubelet, starts with an empty /tmp)")
	case strings.TrimSpace(res.stdout) != lab08ExecLine:
		return missing(fmt.Sprintf("%s in %s holds %q, not %q", lab08Exec, lab08Shell, strings.TrimSpace(res.stdout), lab08ExecLine), "run exercise 1's command as written: "+lab08ExecCmd)
	}
	return passed("%s in %s holds %q: your exec wrote into the container's filesystem", lab08Exec, lab08Shell, lab08ExecLine)
}

// runLeftFile: `ls /tmp/knocked` in the pod found the file that exercise 4's POST /run, as the
// admin, touched (the node's own certificate is refused, so its call leaves nothing). Pure.
func runLeftFile(res execResult) result {
	switch {
	case res.err != nil || res.exitCode == -1:
		return missing(fmt.Sprintf("kubectl exec %s -- ls %s failed: %v", lab08Shell, lab08Knocked, res.err), "see the checks below and the minikubelet log at -v=4")
	case res.exitCode != 0:
		return missing(fmt.Sprintf("%s is not in %s: exercise 4's POST /run as the admin has not run in this container", lab08Knocked, lab08Shell),
			"do exercise 4 (source labs/env.sh first): "+lab08KnockedCmd)
	}
	return passed("%s is in %s: the kubelet API ran your command for the admin", lab08Knocked, lab08Shell)
}
