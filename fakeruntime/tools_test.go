package fakeruntime

import (
	"os"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestPiDigits checks the computed digits against pi's known expansion, and the rounding of the
// last digit as Math::BigFloat's bpi does it.
func TestPiDigits(t *testing.T) {
	const pi60 = "3.14159265358979323846264338327950288419716939937510582097494"
	for _, n := range []int{2, 10, 30, 60} {
		want := pi60[:n+1]
		if n == 10 {
			want = "3.141592654" // …6535: rounded up
		}
		if n == 30 {
			want = "3.14159265358979323846264338328" // …3279502: rounded up
		}
		if got := piDigits(n); got != want {
			t.Errorf("piDigits(%d) = %s, want %s", n, got, want)
		}
	}
	if got := piDigits(1); got != "3" {
		t.Errorf("piDigits(1) = %s, want 3", got)
	}
	// The 2000 digits of the pi Job: decimals 762-767 are the Feynman point "999999", decimals
	// 991-1000 are "2164201989" (known values; decimal k is d[k+1]).
	d := piDigits(2000)
	if len(d) != 2001 || !strings.HasPrefix(d, "3.14159") || d[763:769] != "999999" || d[992:1002] != "2164201989" {
		t.Errorf("piDigits(2000): length %d, decimals 762-767 %q, 991-1000 %q", len(d), d[763:769], d[992:1002])
	}
}

// TestPerlAndStressPrograms pins how the docs' perl and stress commands parse.
func TestPerlAndStressPrograms(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"perl", "-Mbignum=bpi", "-wle", "print bpi(5)"}, `echo "3.1416"`},
		{[]string{"perl", "-e", "print 1"}, `forever "minikubelet fake runtime: \"perl\" is not modelled; this container runs until stopped (what is modelled: docs/fake-runtime.md)"`},
		{[]string{"stress", "--vm", "1", "--vm-bytes", "150M", "--vm-hang", "1"}, `alloc 157286400`},
		{[]string{"stress", "--cpu", "2"}, `burn 2000000000n`},
		{withEntrypoint("vish/stress", []string{"-cpus", "2"}), `burn 2000000000n`},
		{withEntrypoint("vish/stress", []string{"-mem-total", "150Mi", "-logtostderr"}), `alloc 157286400`},
		{withEntrypoint("registry.k8s.io/e2e-test-images/agnhost:2.40", []string{"liveness"}), "touch /tmp/agnhost-alive"},
		{[]string{"/usr/local/bin/etcd", "--data-dir", "/var/lib/etcd", "--listen-client-urls", "http://0.0.0.0:2379"}, "serve grpc 2379 SERVING"},
		{[]string{"etcd", "--listen-client-urls=http://0.0.0.0:12379"}, "serve grpc 12379 SERVING"},
		{[]string{"stress", "--vm", "x"}, `fail 1 "stress: FAIL: [1] invalid value for --vm: 'x'"`},
	}
	for _, tc := range tests {
		if got := parseProgram(tc.argv, unknownRunsForever)[0].String(); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.argv, got, tc.want)
		}
	}
}

// TestStressMemoryDemo runs the docs' memory-demo pods: 150M under a 200Mi limit keeps running
// with the memory in its stats; 250M over a 100Mi limit is OOM-killed.
func TestStressMemoryDemo(t *testing.T) {
	e, id := runLimited(t, "stress --vm 1 --vm-bytes 150M --vm-hang 1", &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 200 << 20})
	if s := e.containerStatus(t, id); s.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("150M under 200Mi: %s, want RUNNING", s.GetState())
	}
	if ws := e.stats(t, id).GetMemory().GetWorkingSetBytes().GetValue(); ws < 150<<20 {
		t.Errorf("working set %d, want at least 150Mi", ws)
	}
	log, _ := os.ReadFile(e.containerStatus(t, id).GetLogPath())
	if !strings.Contains(string(log), "stress: info: [1] dispatching hogs: 0 cpu, 0 io, 1 vm, 0 hdd") {
		t.Errorf("log %q lacks stress's dispatching line", log)
	}
	e, id = runLimited(t, "stress --vm 1 --vm-bytes 250M --vm-hang 1", &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 100 << 20})
	if s := e.containerStatus(t, id); s.GetExitCode() != 137 || s.GetReason() != "OOMKilled" {
		t.Errorf("250M over 100Mi: %s exit %d %q, want 137 OOMKilled", s.GetState(), s.GetExitCode(), s.GetReason())
	}
}
