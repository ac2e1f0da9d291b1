package version

import (
	"fmt"
	"runtime/debug"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// Set with -ldflags "-X github.com/minikubelet/minikubelet/pkg/version.gitVersion=…" by the Makefile.
var (
	gitVersion = "v0.0.0-dev"
	gitCommit  = "unknown"
)

// Info is what `minikubelet version` prints.
type Info struct {
	Version       string // minikubelet's own version
	GitCommit     string
	KubernetesLib string // the k8s.io/apimachinery module version (all k8s.io modules are pinned alike), e.g. v0.36.3
	Kubernetes    string // the Kubernetes release those modules belong to, e.g. v1.36.3
}

// Get returns the build's version information.
func Get() Info {
	// apimachinery is linked into every binary of ours (this package imports it), client-go not.
	lib := moduleVersion("k8s.io/apimachinery")
	return Info{Version: gitVersion, GitCommit: gitCommit, KubernetesLib: lib, Kubernetes: KubernetesFromModule(lib)}
}

// KubernetesFromModule maps a staging module version (v0.36.3) to its Kubernetes release (v1.36.3),
// as the release process tags them together.
func KubernetesFromModule(v string) string {
	sv, err := utilversion.ParseSemantic(v)
	if err != nil || sv.Major() != 0 {
		return v
	}
	out := fmt.Sprintf("v1.%d.%d", sv.Minor(), sv.Patch())
	if pre := sv.PreRelease(); pre != "" {
		out += "-" + pre
	}
	return out
}

func moduleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "unknown"
}
