package fake

import (
	"os"
	"path/filepath"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The inspection commands see only the container's env, hostname and mounts — never the host.
func TestInspect(t *testing.T) {
	vol := t.TempDir()
	if err := os.WriteFile(filepath.Join(vol, "key"), []byte("value-from-configmap"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(vol, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	v := view{
		env:      []*runtimeapi.KeyValue{{Key: "DB_USER", Value: []byte("admin")}, {Key: "MODE", Value: []byte("prod")}},
		hostname: "web-1",
		mounts:   []*runtimeapi.Mount{{ContainerPath: "/etc/config", HostPath: vol, Readonly: true}},
	}
	tests := []struct {
		name       string
		argv       []string
		wantOut    string
		wantErrOut string
		wantCode   int32
	}{
		{"env", []string{"env"}, "DB_USER=admin\nMODE=prod\n", "", 0},
		{"printenv NAME", []string{"printenv", "MODE"}, "prod\n", "", 0},
		{"hostname", []string{"hostname"}, "web-1\n", "", 0},
		{"cat a mounted file", []string{"cat", "/etc/config/key"}, "value-from-configmap", "", 0},
		{"cat outside every mount", []string{"cat", "/etc/passwd"}, "", "cat: can't open '/etc/passwd': No such file or directory\n", 1},
		{"cat climbing out of a mount", []string{"cat", "/etc/config/../../etc/passwd"}, "", "cat: can't open '/etc/config/../../etc/passwd': No such file or directory\n", 1},
		{"ls a mount hides the atomic writer's internals", []string{"ls", "/etc/config"}, "key\n", "", 0},
		{"ls a parent shows mount points", []string{"ls", "/etc"}, "config\n", "", 0},
		{"ls nothing", []string{"ls", "/nope"}, "", "ls: /nope: No such file or directory\n", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := inspect(v, tc.argv[0], tc.argv[1:])
			if out != tc.wantOut || errOut != tc.wantErrOut || code != tc.wantCode {
				t.Errorf("inspect(%v) = %q, %q, %d; want %q, %q, %d", tc.argv, out, errOut, code, tc.wantOut, tc.wantErrOut, tc.wantCode)
			}
		})
	}
}
