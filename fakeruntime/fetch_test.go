package fakeruntime

import (
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestWgetAndCurl: a container GETs from a server of a pod of this runtime (by pod IP, or by
// localhost in its own pod), and from nothing else: a name or an address no pod serves fails as
// it does without a route, before any connection.
func TestWgetAndCurl(t *testing.T) {
	e := newServeEnv(t)
	_, webIP := e.runImage(t, "web", "nginx")
	sb := e.runSandbox(t, sandboxConfig("client"))
	client := e.createContainer(t, sb, containerConfig("client", "sh", "-c", "serve http 8080 /ok=200 & sleep infinity"))
	e.startContainer(t, client)
	tests := []struct {
		cmd                string
		stdout, stderr     string
		code               int32
		file, fileContains string
	}{
		{cmd: "wget -qO- http://" + webIP, stdout: "Welcome to nginx!"},
		{cmd: "wget -O /tmp/index.html http://" + webIP + "/", stderr: "saving to '/tmp/index.html'", file: "/tmp/index.html", fileContains: "Welcome to nginx!"},
		{cmd: "curl -s localhost:8080/ok", stdout: "OK"},
		{cmd: "curl -sf http://127.0.0.1:8080/missing", code: 22},
		{cmd: "wget -O /work-dir/index.html http://info.cern.ch", stderr: "wget: bad address 'info.cern.ch'", code: 1},
		{cmd: "curl http://example.com/", stderr: "curl: (6) Could not resolve host: example.com", code: 6},
		{cmd: "wget -qO- http://1.1.1.1/", stderr: "wget: can't connect to remote host (1.1.1.1): Network is unreachable", code: 1},
		{cmd: "curl -sS http://" + webIP + ":81/", stderr: "Connection refused", code: 7},
		{cmd: "wget -q -O- https://" + webIP + "/", stderr: "speaks only http://", code: 1},
	}
	for _, tc := range tests {
		resp, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: client, Cmd: []string{"sh", "-c", tc.cmd}, Timeout: 10})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetExitCode() != tc.code || !strings.Contains(string(resp.GetStdout()), tc.stdout) || !strings.Contains(string(resp.GetStderr()), tc.stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				tc.cmd, resp.GetExitCode(), resp.GetStdout(), resp.GetStderr(), tc.code, tc.stdout, tc.stderr)
		}
		if tc.file != "" {
			resp, _ := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: client, Cmd: []string{"cat", tc.file}, Timeout: 5})
			if !strings.Contains(string(resp.GetStdout()), tc.fileContains) {
				t.Errorf("%s: %s holds %q, want %q in it", tc.cmd, tc.file, resp.GetStdout(), tc.fileContains)
			}
		}
	}
}
