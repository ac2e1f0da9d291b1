// Package bench checks that `make bench` still runs from a clean tree: a small run of hack/bench
// (minikubelet with EventedPLEG off and on, 5 pods, --nodes 3, the RSS floor programs) must finish and report plausible
// numbers. The numbers themselves are not judged here; make bench reports them.
package bench

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

func TestBenchRuns(t *testing.T) {
	// Built, not `go run`: the test must be able to stop the bench by its PID (a signal to
	// `go run` does not reach the program it built). StartProcess kills it when the test ends,
	// and the bench's own children (control plane, kubelets) die with it.
	bin := filepath.Join(t.TempDir(), "bench")
	build := exec.Command("go", "build", "-o", bin, "./hack/bench")
	build.Dir = framework.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./hack/bench: %v\n%s", err, out)
	}
	out := t.TempDir()
	p := framework.StartProcess(t, bin, "--kubemark=false", "--pods", "5", "--creators", "2",
		"--idle", "10s", "--nodes-list", "3", "--nodes-idle", "10s", "--out", out)
	code, err := p.Wait(15 * time.Minute)
	if err != nil {
		// Ask it to stop cleanly first (it stops its cluster and kubelets on SIGTERM).
		_ = p.Signal(syscall.SIGTERM)
		_, _ = p.Wait(time.Minute)
		t.Fatalf("hack/bench: %v\n%s", err, p.Log())
	}
	output := p.Log()
	if code != 0 {
		t.Fatalf("hack/bench exited %d:\n%s", code, output)
	}
	if !strings.Contains(output, "API requests per pod") || !strings.Contains(output, "RSS per node") || !strings.Contains(output, "What the idle RSS is made of") {
		t.Errorf("the table is missing rows:\n%s", output)
	}
	data, err := os.ReadFile(filepath.Join(out, "latest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Minikubelet struct {
			StartToReadyMS float64 `json:"startToReadyMs"`
			Idle           struct {
				RSSKiB int64 `json:"rssKiB"`
			} `json:"idle"`
			Pods struct {
				N           int       `json:"n"`
				LatenciesMS []float64 `json:"latenciesMs"`
			} `json:"pods"`
			RequestsPerPod       float64        `json:"requestsPerPod"`
			PodRequests          map[string]int `json:"podRequests"`
			RelistsPerIdleMinute float64        `json:"relistsPerIdleMinute"`
			KillToAPIMS          float64        `json:"killToApiMs"`
		} `json:"minikubelet"`
		Evented *struct {
			RelistsPerIdleMinute float64 `json:"relistsPerIdleMinute"`
			KillToAPIMS          float64 `json:"killToApiMs"`
		} `json:"evented"`
		ManyNodes []struct {
			Nodes                        int     `json:"nodes"`
			RSSPerNodeMB                 float64 `json:"rssPerNodeMb"`
			IdleSeconds                  float64 `json:"idleSeconds"`
			IdleRequestsPerNodePerMinute float64 `json:"idleRequestsPerNodePerMinute"`
		} `json:"manyNodes"`
		RSSFloor []struct {
			Program string `json:"program"`
			Memory  struct {
				RSSKiB int64 `json:"rssKiB"`
			} `json:"memory"`
		} `json:"rssFloor"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("latest.json: %v\n%s", err, data)
	}
	m := rep.Minikubelet
	if m.StartToReadyMS <= 0 || m.Idle.RSSKiB <= 0 || m.Pods.N != 5 || len(m.Pods.LatenciesMS) != 5 {
		t.Errorf("implausible numbers: %+v", m)
	}
	// Every pod's status is written and every pod deleted by the node: the audit log saw it.
	if m.PodRequests["patch pods/status"] < 5 || m.PodRequests["delete pods"] != 5 || m.RequestsPerPod < 2 {
		t.Errorf("API requests per pod %.1f, by kind %v: the audit log did not see the node's writes", m.RequestsPerPod, m.PodRequests)
	}
	// Every node renews its Lease while idle: the audit log saw requests from the nodes' users.
	if len(rep.ManyNodes) != 1 || rep.ManyNodes[0].Nodes != 3 || rep.ManyNodes[0].RSSPerNodeMB <= 0 ||
		rep.ManyNodes[0].IdleSeconds < 10 || rep.ManyNodes[0].IdleRequestsPerNodePerMinute <= 0 {
		t.Errorf("manyNodes = %+v", rep.ManyNodes)
	}
	// Both PLEG modes were measured: the killed container reached the API, and the relist counter
	// was read (the generic PLEG relists every second while idle).
	if e := rep.Evented; e == nil || e.KillToAPIMS <= 0 || m.RelistsPerIdleMinute < 10 || m.KillToAPIMS <= 0 {
		t.Errorf("EventedPLEG rows: evented %+v, relists per idle minute without the gate %.1f, kill → API %.0f ms", e, m.RelistsPerIdleMinute, m.KillToAPIMS)
	}
	// The RSS floor programs ran and were measured.
	if f := rep.RSSFloor; len(f) != 2 || f[0].Program != "clientgo" || f[1].Program != "apiserverauth" ||
		f[0].Memory.RSSKiB <= 0 || f[1].Memory.RSSKiB <= 0 {
		t.Errorf("rssFloor = %+v", rep.RSSFloor)
	}
}
