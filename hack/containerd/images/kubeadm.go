package main

// The images `kubeadm init` runs (make kubeadm-up), built locally under the exact names
// `kubeadm config images list --kubernetes-version v1.36.3` prints: the control plane, etcd and
// kube-proxy from the Go module proxy (hack/cluster/build.sh, hack/kubeadm/build.sh), CoreDNS at
// the tag kubeadm names, our pause, and for kube-proxy's iptables mode this machine's Debian
// iptables (xtables-nft-multi, its libraries and its extensions). Each program must be the
// version its tag says (it is asked: --version); a name we cannot build is reported, never faked.
// Upstream builds these on distroless bases with go-runner; ours have the programs at the paths
// kubeadm's manifests name, not the same bytes.

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// kubeadmPath is the PATH of these images: kubeadm's static pod manifests name their programs
// without a directory (command: [kube-apiserver, …], [etcd, …]).
const kubeadmPath = "PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"

// kubeadmProgram is what one image of the list runs: the program (a file of the bin dir), how to
// ask its version, and where it goes in the image.
type kubeadmProgram struct {
	bin        string   // file name in --kubeadm-bin-dir
	versionArg string   // --version, or -version (CoreDNS)
	dest       string   // its path in the image
	entrypoint []string // the image's entrypoint
}

// kubeadmPrograms maps the last path element of each repository kubeadm names to its program.
var kubeadmPrograms = map[string]kubeadmProgram{
	"kube-apiserver":          {"kube-apiserver", "--version", "usr/local/bin/kube-apiserver", []string{"/usr/local/bin/kube-apiserver"}},
	"kube-controller-manager": {"kube-controller-manager", "--version", "usr/local/bin/kube-controller-manager", []string{"/usr/local/bin/kube-controller-manager"}},
	"kube-scheduler":          {"kube-scheduler", "--version", "usr/local/bin/kube-scheduler", []string{"/usr/local/bin/kube-scheduler"}},
	"kube-proxy":              {"kube-proxy", "--version", "usr/local/bin/kube-proxy", []string{"/usr/local/bin/kube-proxy"}},
	"etcd":                    {"etcd", "--version", "usr/local/bin/etcd", []string{"/usr/local/bin/etcd"}},
	// Upstream's CoreDNS image is ENTRYPOINT ["/coredns"]; kubeadm's Deployment passes only args.
	"coredns": {"coredns", "-version", "coredns", []string{"/coredns"}},
}

// buildKubeadmImages builds each image the list names from the programs in binDir, and prints
// "built NAME" or "not built NAME: why" for each.
func buildKubeadmImages(list, binDir string, pause []byte) ([]image, error) {
	if binDir == "" {
		return nil, fmt.Errorf("--kubeadm-list needs --kubeadm-bin-dir")
	}
	names, err := readImageList(list)
	if err != nil {
		return nil, err
	}
	var images []image
	for _, name := range names {
		img, why, err := kubeadmImage(name, binDir, pause)
		if err != nil {
			return nil, err
		}
		if why != "" {
			fmt.Printf("not built %s: %s\n", name, why)
			continue
		}
		fmt.Println("built", name)
		images = append(images, img)
	}
	return images, nil
}

// kubeadmImage builds the image name, or says why not (why), or fails (err).
func kubeadmImage(name, binDir string, pause []byte) (img image, why string, err error) {
	repo, tag := splitName(name)
	if path.Base(repo) == "pause" {
		return image{Name: name, Layer: pauseFiles(pause), Config: containerConfig{
			Entrypoint: []string{"/pause"}, User: "65535:65535",
		}, CreatedBy: "hack/containerd/images: CGO_ENABLED=0 go build ./hack/containerd/pause as " + name}, "", nil
	}
	prog, ok := kubeadmPrograms[path.Base(repo)]
	if !ok {
		return image{}, "no program of ours is this image", nil
	}
	bin := filepath.Join(binDir, prog.bin)
	data, err := readStatic(bin)
	if err != nil {
		return image{}, "", err
	}
	if err := checkVersion(bin, prog.versionArg, tag); err != nil {
		return image{}, "", err
	}
	files := append(baseFiles(), file{Path: prog.dest, Mode: 0o755, Data: data})
	createdBy := "hack/containerd/images: " + prog.bin + " " + tag + " from the Go module proxy (static)"
	if prog.bin == "kube-proxy" {
		ipt, err := iptablesFiles()
		if err != nil {
			return image{}, "", err
		}
		files = append(files, ipt...)
		createdBy += ", Debian iptables (nft) with its libraries and extensions"
	}
	return image{Name: name, Layer: withParents(files), Config: containerConfig{
		Env: []string{kubeadmPath}, Entrypoint: prog.entrypoint,
	}, CreatedBy: createdBy}, "", nil
}

// checkVersion runs `bin arg` and fails unless its output names the version of tag (v1.36.3,
// 3.6.8-0 → 3.6.8, v1.14.2 → 1.14.2).
func checkVersion(bin, arg, tag string) error {
	want := strings.SplitN(strings.TrimPrefix(tag, "v"), "-", 2)[0]
	out, err := exec.Command(bin, arg).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", bin, arg, err, out)
	}
	if !strings.Contains(string(out), want) {
		return fmt.Errorf("%s is not version %s (the tag %s): %s %s says %q; rebuild it", bin, want, tag, bin, arg, strings.TrimSpace(string(out)))
	}
	return nil
}

// iptablesNames are the programs kube-proxy's iptables mode runs (k8s.io/kubernetes
// pkg/util/iptables): all of them are the one xtables-nft-multi, which looks at argv[0].
var iptablesNames = []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"}

// iptablesFiles is Debian's iptables (nft backend) for the kube-proxy image: xtables-nft-multi
// with the libraries ldd names, its argv[0] names as symlinks in usr/sbin, and the extensions
// (libxt_*.so …) it loads with dlopen from the directory it was built with, which ldd cannot see.
func iptablesFiles() ([]file, error) {
	files, err := hostToolFiles([]string{"xtables-nft-multi"})
	if err != nil {
		return nil, fmt.Errorf("%w (Debian: apt-get install iptables)", err)
	}
	for i := range files {
		if files[i].Path == "bin/xtables-nft-multi" {
			files[i].Path = "usr/sbin/xtables-nft-multi"
		}
	}
	for _, n := range iptablesNames {
		files = append(files, file{Path: "usr/sbin/" + n, Mode: 0o777, Symlink: "xtables-nft-multi"})
	}
	exts, err := iptablesExtensions(files)
	if err != nil {
		return nil, err
	}
	files = append(files, exts...)
	return files, nil
}

// iptablesExtensions: the extensions (libxt_*.so …), and the libraries they need that the image
// (have) does not hold yet: libxt_statistic.so, which kube-proxy's load balancing uses, needs
// libm.so.6, which xtables-nft-multi itself does not ("Couldn't load match `statistic'").
func iptablesExtensions(have []file) ([]file, error) {
	exts, err := filepath.Glob("/usr/lib/*/xtables/*.so")
	if err != nil || len(exts) == 0 {
		return nil, fmt.Errorf("no iptables extensions in /usr/lib/*/xtables (Debian: apt-get install iptables)")
	}
	sort.Strings(exts)
	seen := map[string]bool{}
	for _, f := range have {
		seen[f.Path] = true
	}
	var files []file
	for _, e := range exts {
		data, err := os.ReadFile(e)
		if err != nil {
			return nil, err
		}
		files = append(files, file{Path: strings.TrimPrefix(e, "/"), Mode: 0o644, Data: data})
		out, err := exec.Command("ldd", e).Output()
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", e, err)
		}
		for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
			lib := filepath.Clean(m[1])
			if seen[strings.TrimPrefix(lib, "/")] {
				continue
			}
			seen[strings.TrimPrefix(lib, "/")] = true
			data, err := os.ReadFile(lib) // follows symlinks, as hostToolFiles
			if err != nil {
				return nil, err
			}
			files = append(files, file{Path: strings.TrimPrefix(lib, "/"), Mode: 0o755, Data: data})
		}
	}
	return files, nil
}
