package main

import (
	"os"
	"strings"
	"testing"
)

// repoPins are the versions the repo pins elsewhere, which vm.yaml must repeat.
func repoPins(t *testing.T) pins {
	t.Helper()
	goVersion, err := os.ReadFile("../../../.go-version")
	if err != nil {
		t.Fatal(err)
	}
	return pins{Go: strings.TrimSpace(string(goVersion)), Kubectl: "v1.36.3"}
}

func readVM(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../../vm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCheckVM pins the rules of STYLE.md §15 for vm.yaml: each case breaks the repo's own vm.yaml in
// one way and expects the checker to say so.
func TestCheckVM(t *testing.T) {
	vm := readVM(t)
	same := func(*testing.T) string { return vm }
	replace := func(old, with string) func(t *testing.T) string {
		return func(t *testing.T) string {
			t.Helper()
			if !strings.Contains(vm, old) {
				t.Fatalf("vm.yaml no longer contains %q: update the test", old)
			}
			return strings.Replace(vm, old, with, 1)
		}
	}
	withoutHint := func(t *testing.T) string {
		t.Helper()
		start, end := strings.Index(vm, "  hint: |\n"), strings.Index(vm, "\nmessage:")
		if start < 0 || end < start {
			t.Fatal("vm.yaml no longer has a probe hint before message: update the test")
		}
		return vm[:start] + vm[end:]
	}
	tests := []struct {
		name    string
		mutate  func(t *testing.T) string
		want    pins
		wantErr string // "" means valid
	}{
		{"the repo's vm.yaml", same, repoPins(t), ""},
		{"misspelt field", replace("cpus: 4", "cpu: 4"), pins{}, "field cpu not found"},
		{"no aarch64 image", replace(`arch: "aarch64"`, `arch: "riscv64"`), pins{}, "no image for arch aarch64"},
		{"unknown arch", replace(`arch: "aarch64"`, `arch: "arm64"`), pins{}, `arch "arm64" is not one of Lima's`},
		{"provision without set -eux", replace("    #!/bin/bash\n    set -eux -o pipefail\n    # Go:", "    #!/bin/bash\n    # Go:"), pins{}, "must start with"},
		{"probe in sh", replace("    #!/bin/bash\n    set -eux -o pipefail\n    if ! timeout", "    #!/bin/sh\n    set -eux\n    if ! timeout"), pins{}, "probes[0]: script must start"},
		{"probe without hint", withoutHint, pins{}, "probes[0]: no hint"},
		{"no kind probe", replace("    kind version\n    kubectl", "    kubectl"), pins{}, "none runs `kind version`"},
		{"floating version", replace("KIND_VERSION=v0.33.0", "KIND_VERSION=latest"), pins{}, "not an exact version"},
		{"latest anywhere", replace("# Go: the toolchain", "# Go: the latest toolchain"), pins{}, `"latest": a version that moves`},
		{"pin without its reason", replace("    # Delve: the release hack/tools/go.mod pins", "    DUMMY=1"), pins{}, "DELVE_VERSION has no comment line"},
		{"pin missing", replace("KUBECTL_VERSION=v1.36.3", "KUBECTL=v1.36.3"), pins{}, "no KUBECTL_VERSION=<version> line"},
		{"Go differs from .go-version", replace("GO_VERSION=1.26.8", "GO_VERSION=1.26.7"), repoPins(t), "GO_VERSION=1.26.7, but the repo pins"},
		{"hard-coded architecture", replace("kind-linux-${ARCH}", "kind-linux-arm64"), pins{}, `"linux-arm64" names an architecture`},
		{"read-only mount", replace("- location: \"~\"\n  writable: true\n- location: \"/tmp/lima\"\n  writable: true", "- location: \"~\""), pins{}, "none is writable"},
		{"too little memory", replace(`memory: "8GiB"`, `memory: "2GiB"`), pins{}, "at least 4GiB"},
		{"Docker not pinned", replace("DOCKER_PACKAGE=docker.io", "DOCKER=docker.io"), pins{}, "Docker is not pinned"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, errs := checkVM([]byte(tc.mutate(t)), tc.want)
			if tc.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("checkVM: %v", errs)
				}
				if len(res.scripts) != 2 || !strings.Contains(res.summary, "x86_64 and aarch64") {
					t.Errorf("result %+v: want 2 scripts and both arches", res)
				}
				return
			}
			for _, err := range errs {
				if strings.Contains(err.Error(), tc.wantErr) {
					return
				}
			}
			t.Errorf("errors %v: want one containing %q", errs, tc.wantErr)
		})
	}
}

// TestCheckKindConfig pins how the kind config of hack/kind-up.sh is read: as kind v0.33 reads it,
// with the node-monitor-grace-period patch in either kubeadm extraArgs form.
func TestCheckKindConfig(t *testing.T) {
	const head = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n  image: kindest/node:v1.36.4@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed\n"
	tests := []struct {
		name, config, wantSummary, wantErr string
	}{
		{"no patch", head, "kube-controller-manager's default", ""},
		{"v1beta3 map patch", head + "kubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n  controllerManager:\n    extraArgs:\n      node-monitor-grace-period: \"5m\"\n", "node-monitor-grace-period 5m", ""},
		{"v1beta4 list patch", head + "kubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n  apiVersion: kubeadm.k8s.io/v1beta4\n  controllerManager:\n    extraArgs:\n    - name: node-monitor-grace-period\n      value: 90s\n", "node-monitor-grace-period 90s", ""},
		{"other patch", head + "kubeadmConfigPatches:\n- |\n  kind: InitConfiguration\n", "kube-controller-manager's default", ""},
		{"bad duration", head + "kubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n  controllerManager:\n    extraArgs:\n      node-monitor-grace-period: \"5 minutes\"\n", "", "not a Go duration"},
		{"patch without kind", head + "kubeadmConfigPatches:\n- |\n  controllerManager: {}\n", "", "no kind"},
		{"misspelt field", strings.Replace(head, "  image:", "  imagez:", 1), "", "field imagez not found"},
		{"image without digest", strings.Replace(head, "@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed", "", 1), "", "no @sha256: digest"},
		{"no control plane", strings.Replace(head, "role: control-plane", "role: worker", 1), "", "no control-plane node"},
		{"old apiVersion", strings.Replace(head, "v1alpha4", "v1alpha3", 1), "", "want kind.x-k8s.io/v1alpha4 Cluster"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			summary, err := checkKindConfig([]byte(tc.config))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v: want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("checkKindConfig: %v", err)
			}
			if !strings.Contains(summary, tc.wantSummary) {
				t.Errorf("summary %q: want it to contain %q", summary, tc.wantSummary)
			}
		})
	}
}
