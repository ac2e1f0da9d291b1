package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// floorResult is the memory of one program of hack/bench/floor, 10 s after it said ready.
type floorResult struct {
	Program string `json:"program"`
	What    string `json:"what"`
	Memory  memory `json:"memory"`
}

// floorPrograms are what minikubelet's RSS is measured against: the least a client-go process
// pays, then that plus the k8s.io/apiserver packages the kubelet API uses.
var floorPrograms = []struct{ dir, what string }{
	{"clientgo", "client-go only: a clientset, two lists, a watch"},
	{"apiserverauth", "+ k8s.io/apiserver authn/authz, as pkg/server links it"},
}

// rssFloor builds and runs each floor program against the bench's cluster, one at a time.
func (b *bench) rssFloor(ctx context.Context, root string) ([]floorResult, error) {
	var out []floorResult
	for _, fp := range floorPrograms {
		say("RSS floor: %s", fp.what)
		bin := filepath.Join(b.work, "floor-"+fp.dir)
		if err := staticBuild(ctx, root, bin, "./hack/bench/floor/"+fp.dir); err != nil {
			return nil, err
		}
		p, err := start(exec.Command(bin, b.cluster.AdminKubeconfig), filepath.Join(b.work, "floor-"+fp.dir+".log"))
		if err != nil {
			return nil, err
		}
		mem, err := idleMemory(ctx, p)
		p.stop()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fp.dir, err)
		}
		out = append(out, floorResult{Program: fp.dir, What: fp.what, Memory: mem})
	}
	return out, nil
}

// idleMemory waits until p prints "ready", then 10 s, and reads its memory.
func idleMemory(ctx context.Context, p *process) (memory, error) {
	for deadline := time.Now().Add(time.Minute); ; {
		data, _ := os.ReadFile(p.log)
		if strings.Contains(string(data), "ready\n") {
			break
		}
		if p.exited() || time.Now().After(deadline) {
			return memory{}, fmt.Errorf("not ready:\n%s", p.logTail())
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return memory{}, err
		}
	}
	return p.memoryAfter(ctx, 10*time.Second)
}

// staticBuild builds pkg into out as hack/cluster/build.sh builds kubemark: static (no cgo),
// stripped, with trimmed paths, so every RSS in the report compares like with like.
func staticBuild(ctx context.Context, root, out, pkg string) error {
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := build.Run(); err != nil {
		return fmt.Errorf("build %s: %w", pkg, err)
	}
	return nil
}
