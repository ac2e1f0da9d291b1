package main

// The upstream end-to-end tests' images (make conformance), built locally under the exact names
// `e2e.test --list-images` prints, from what this machine has: Debian's busybox-static, our pause,
// agnhost and nonewprivs' nnp built from the k8s.io/kubernetes module, and a few programs of
// Debian packages that agnhost's specs exec (bash, curl, dig, getent, netcat-openbsd's nc), copied with
// their shared libraries. Upstream builds these
// images from Alpine and debian-base; ours have the same entrypoints, users and tools, not the
// same bytes. A name of the list we cannot build honestly is reported, never faked.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// e2eInputs is what the e2e images are made of.
type e2eInputs struct {
	busybox        []byte   // Debian's busybox-static
	applets        []string // its applet names
	pause          []byte   // ./hack/containerd/pause
	agnhost        []byte   // CGO_ENABLED=0 go build k8s.io/kubernetes/test/images/agnhost
	agnhostVersion string   // test/images/agnhost/VERSION of the same module, e.g. 2.63.0
	nnp            []byte   // CGO_ENABLED=0 go build k8s.io/kubernetes/test/images/nonewprivs
	nnpVersion     string   // test/images/nonewprivs/VERSION, e.g. 1.4
	porterCert     []byte   // test/images/agnhost/porter/localhost.crt (netexec --tls-cert-file)
	porterKey      []byte   // … and localhost.key
	hostTools      []file   // bash, curl, dig, getent, nc … and their libraries (hostToolFiles)
	glibcHostname  []file   // Debian's hostname (glibc), dig and getent, with their libraries, for glibc-dns-testing
}

// e2eImages returns, for each name of the list that we know how to build, that image, and the
// names we do not build. The list is `e2e.test --list-images`: one image name per line.
func e2eImages(list []string, in e2eInputs) (images []image, skipped []string) {
	pathEnv := "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, name := range list {
		repo, tag := splitName(name)
		switch {
		// registry.k8s.io/e2e-test-images/agnhost:2.63.0 (not the older or private agnhost names:
		// those are other versions, which this module does not hold).
		case path.Base(repo) == "agnhost" && tag == in.agnhostVersion:
			images = append(images, image{Name: name, Layer: agnhostFiles(in), Config: containerConfig{
				Env: []string{pathEnv}, Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"},
			}, CreatedBy: "hack/containerd/images: agnhost " + tag + " from k8s.io/kubernetes (static), Debian busybox-static applets, Debian bash, curl, dig, getent and netcat-openbsd with their libraries"})
		// registry.k8s.io/e2e-test-images/busybox:1.37.0-1: upstream's is busybox 1.37 on
		// Alpine's layout; ours is Debian 12's busybox-static (1.35) under that name.
		case path.Base(repo) == "busybox" && strings.Contains(repo, "e2e-test-images"):
			images = append(images, image{Name: name, Layer: busyboxFiles(in.busybox, in.applets), Config: containerConfig{
				Env: []string{pathEnv}, Cmd: []string{"sh"},
			}, CreatedBy: "hack/containerd/images: Debian busybox-static as " + name})
		// registry.k8s.io/e2e-test-images/nonroot: upstream is debian-base with USER 1234; its
		// specs run `id -u` in it.
		case path.Base(repo) == "nonroot" && strings.Contains(repo, "e2e-test-images"):
			images = append(images, image{Name: name, Layer: busyboxFiles(in.busybox, in.applets), Config: containerConfig{
				Env: []string{pathEnv}, Cmd: []string{"sh"}, User: "1234",
			}, CreatedBy: "hack/containerd/images: Debian busybox-static, USER 1234, as " + name})
		// registry.k8s.io/e2e-test-images/nonewprivs:1.4: upstream is Alpine with a setuid-root
		// /usr/local/bin/nnp (prints its effective uid), CMD ["nnp"].
		case path.Base(repo) == "nonewprivs" && tag == in.nnpVersion && in.nnp != nil:
			files := append(busyboxFiles(in.busybox, in.applets), file{Path: "usr/local/bin/nnp", Mode: 0o4755, Data: in.nnp})
			images = append(images, image{Name: name, Layer: withParents(files), Config: containerConfig{
				Env: []string{pathEnv}, Cmd: []string{"nnp"},
			}, CreatedBy: "hack/containerd/images: Debian busybox-static, setuid nnp " + tag + " from k8s.io/kubernetes"})
		// registry.k8s.io/e2e-test-images/glibc-dns-testing: upstream is debian-base with dnsutils;
		// the hostnameOverride specs run `sh -c "echo $(hostname)';'$(hostname -f)';'"` in it, and
		// `hostname -f` must resolve through glibc (/etc/hosts, as nsswitch.conf says); the
		// [sig-network] DNS specs run `dig` and `getent hosts` in it (their "jessie" querier). Ours:
		// busybox's sh and applets, with Debian's glibc hostname in place of busybox's, Debian's dig
		// (bind9-dnsutils, dnsutils' successor) and glibc's getent.
		case path.Base(repo) == "glibc-dns-testing" && in.glibcHostname != nil:
			var files []file
			for _, f := range busyboxFiles(in.busybox, in.applets) {
				if f.Path != "bin/hostname" {
					files = append(files, f)
				}
			}
			files = append(files, file{Path: "etc/nsswitch.conf", Mode: 0o644, Data: []byte("hosts: files dns\n")})
			images = append(images, image{Name: name, Layer: withParents(append(files, in.glibcHostname...)), Config: containerConfig{
				Env: []string{pathEnv}, Cmd: []string{"sh"},
			}, CreatedBy: "hack/containerd/images: Debian busybox-static, Debian hostname (glibc), dig and getent with their libraries, as " + name})
		// registry.k8s.io/pause:3.10.2: the sandbox image the framework names in its pods.
		case repo == "registry.k8s.io/pause":
			images = append(images, image{Name: name, Layer: pauseFiles(in.pause), Config: containerConfig{
				Entrypoint: []string{"/pause"}, User: "65535:65535",
			}, CreatedBy: "hack/containerd/images: CGO_ENABLED=0 go build ./hack/containerd/pause as " + name})
		default:
			skipped = append(skipped, name)
		}
	}
	return images, skipped
}

// splitName splits an image name into repository and tag ("" if it has a digest or no tag).
func splitName(name string) (repo, tag string) {
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[:i], name[i+1:]
	}
	return name, ""
}

// readImageList reads `e2e.test --list-images` output: one name per line, blank lines ignored.
func readImageList(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			names = append(names, line)
		}
	}
	return names, sc.Err()
}

// agnhostFiles is the agnhost image's layer, as upstream's Dockerfile lays it out: /agnhost and
// the /agnhost-2 symlink (the entrypoint-tester specs), /uploads (netexec), /localhost.crt and
// /localhost.key (porter's, for netexec's HTTPS: the https lifecycle hooks), the user and group of
// the SupplementalGroups spec (uid 1000 in gid 50000), busybox applets for the shell tools Alpine
// gives it, and the host tools with their libraries.
func agnhostFiles(in e2eInputs) []file {
	files := withAccounts(busyboxFiles(in.busybox, in.applets),
		"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"+
			"user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n",
		"root:x:0:\nnobody:x:65534:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n")
	files = append(files,
		file{Path: "agnhost", Mode: 0o755, Data: in.agnhost},
		file{Path: "agnhost-2", Mode: 0o777, Symlink: "agnhost"},
		file{Path: "home", Mode: 0o755, Dir: true},
		file{Path: "home/user-defined-in-image", Mode: 0o755, Dir: true},
		file{Path: "uploads", Mode: 0o755, Dir: true},
		file{Path: "localhost.crt", Mode: 0o644, Data: in.porterCert},
		file{Path: "localhost.key", Mode: 0o644, Data: in.porterKey},
		// glibc's getent: /etc/hosts first, then DNS, as musl (upstream's Alpine) always does.
		file{Path: "etc/nsswitch.conf", Mode: 0o644, Data: []byte("hosts: files dns\n")},
	)
	return withParents(append(replaced(files, in.hostTools), in.hostTools...))
}

// replaced returns files without those whose paths others has: busybox's applets that a host
// tool of the same name replaces (nc: agnhost's specs use netcat-openbsd's options, -v, -t, -u).
func replaced(files, others []file) []file {
	has := map[string]bool{}
	for _, f := range others {
		has[f.Path] = true
	}
	var out []file
	for _, f := range files {
		if !has[f.Path] {
			out = append(out, f)
		}
	}
	return out
}

// withAccounts replaces the etc/passwd and etc/group of files.
func withAccounts(files []file, passwd, group string) []file {
	for i := range files {
		switch files[i].Path {
		case "etc/passwd":
			files[i].Data = []byte(passwd)
		case "etc/group":
			files[i].Data = []byte(group)
		}
	}
	return files
}

// withParents adds the directories (0755) that files' paths need and do not list, before them.
func withParents(files []file) []file {
	have := map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
	}
	var out []file
	for _, f := range files {
		var missing []string
		for d := path.Dir(f.Path); d != "." && !have[d]; d = path.Dir(d) {
			missing = append(missing, d)
			have[d] = true
		}
		for i := len(missing) - 1; i >= 0; i-- {
			out = append(out, file{Path: missing[i], Mode: 0o755, Dir: true})
		}
		out = append(out, f)
	}
	return out
}

// lddPath matches the paths in ldd's output: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)"
// and "/lib64/ld-linux-x86-64.so.2 (0x…)".
var lddPath = regexp.MustCompile(`(?m)(?:=>\s+|^\s+)(/\S+)\s+\(0x`)

// debianPackage names the Debian 12 package that installs tool, where it is not the tool's name.
func debianPackage(tool string) string {
	if p, ok := map[string]string{"dig": "bind9-dnsutils", "getent": "libc-bin", "nc.openbsd": "netcat-openbsd", "xtables-nft-multi": "iptables"}[tool]; ok {
		return p
	}
	return tool
}

// hostToolFiles copies programs of this machine's Debian packages (found on PATH) into bin/,
// each with the shared libraries and the loader `ldd` names, at the paths it names. A tool
// "NAME=PROGRAM" is PROGRAM copied as bin/NAME (nc=nc.openbsd). A program that is not installed
// is an error naming its Debian package.
func hostToolFiles(tools []string) ([]file, error) {
	var files []file
	seen := map[string]bool{}
	add := func(dst, src string, mode int64) error {
		if seen[dst] {
			return nil
		}
		seen[dst] = true
		data, err := os.ReadFile(src) // follows symlinks: the image gets the file itself
		if err != nil {
			return err
		}
		files = append(files, file{Path: dst, Mode: mode, Data: data})
		return nil
	}
	for _, tool := range tools {
		name, program, renamed := strings.Cut(tool, "=")
		if !renamed {
			program = tool
		}
		src, err := exec.LookPath(program)
		if err != nil {
			return nil, fmt.Errorf("%s is not installed (apt-get install %s): %w", program, debianPackage(program), err)
		}
		if err := add("bin/"+name, src, 0o755); err != nil {
			return nil, err
		}
		out, err := exec.Command("ldd", src).Output()
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", src, err)
		}
		for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
			lib := filepath.Clean(m[1])
			if err := add(strings.TrimPrefix(lib, "/"), lib, 0o755); err != nil {
				return nil, err
			}
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// buildE2EImages reads the list and the inputs from files — the programs from binDir (agnhost,
// nnp: hack/conformance/build.sh), their versions from the k8s.io/kubernetes module's source in
// kubeSrc — builds the images and prints, one per line, each name it built ("built NAME") and
// each it did not ("not built NAME").
func buildE2EImages(list, binDir, kubeSrc, hostTools string, in e2eInputs) ([]image, error) {
	if binDir == "" || kubeSrc == "" {
		return nil, fmt.Errorf("--e2e-list needs --e2e-bin-dir and --kube-src")
	}
	names, err := readImageList(list)
	if err != nil {
		return nil, err
	}
	for _, p := range []struct {
		data    *[]byte
		version *string
		bin     string
		src     string
	}{
		{&in.agnhost, &in.agnhostVersion, "agnhost", "test/images/agnhost/VERSION"},
		{&in.nnp, &in.nnpVersion, "nnp", "test/images/nonewprivs/VERSION"},
	} {
		if *p.data, err = readStatic(filepath.Join(binDir, p.bin)); err != nil {
			return nil, err
		}
		v, err := os.ReadFile(filepath.Join(kubeSrc, p.src))
		if err != nil {
			return nil, err
		}
		*p.version = strings.TrimSpace(string(v))
	}
	for _, f := range []struct {
		data *[]byte
		src  string
	}{
		{&in.porterCert, "test/images/agnhost/porter/localhost.crt"},
		{&in.porterKey, "test/images/agnhost/porter/localhost.key"},
	} {
		if *f.data, err = os.ReadFile(filepath.Join(kubeSrc, f.src)); err != nil {
			return nil, err
		}
	}
	var tools []string
	for _, t := range strings.Split(hostTools, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tools = append(tools, t)
		}
	}
	if in.hostTools, err = hostToolFiles(tools); err != nil {
		return nil, err
	}
	if in.glibcHostname, err = hostToolFiles([]string{"hostname", "dig", "getent"}); err != nil {
		return nil, err
	}
	images, skipped := e2eImages(names, in)
	for _, img := range images {
		fmt.Println("built", img.Name)
	}
	for _, name := range skipped {
		fmt.Println("not built", name)
	}
	return images, nil
}
