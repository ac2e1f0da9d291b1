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
	hostTools      []file   // bash, curl, dig, getent, nc, sh (bash) … and their libraries (hostToolFiles)
	glibcHostname  []file   // Debian's hostname (glibc), dig, getent and dash as sh, with their libraries, for glibc-dns-testing
	bashSh         []file   // Debian's bash as sh, with its libraries, for busybox (busyboxImage)
	// Optional: an image whose input is nil is reported "not built".
	nginx           []file            // Debian's nginx with its libraries (hack/conformance/build.sh unpacks its .deb)
	webserverData   map[string][]file // kitten, nautilus: test/images/NAME/html, the files their Dockerfile copies to /
	sampleAPIServer map[string][]byte // by tag (1.29.2): k8s.io/sample-apiserver v0.29.2, static
}

// agnhostPrevTag is AgnhostPrev of test/utils/image/manifest.go: the "previous" agnhost, which
// the StatefulSet, Deployment, Pods and DaemonSet update specs start from before they switch to
// the current one. No tagged k8s.io/kubernetes holds agnhost 2.55 (v1.33.x has 2.53, v1.34.0-alpha.1
// and later 2.56), so the proxy cannot build it. The specs run only `pause` (the default CMD: the
// DaemonSet, Deployment and Pods specs) and `test-webserver` (StatefulSets) in it, subcommands that
// 2.55 and our 2.63.0 share with the same flags and behaviour, and the shell tools beside them; so
// the image is our agnhost under this tag, with its own image ID (its history names the version).
const agnhostPrevTag = "2.55"

// pathEnv is the PATH of the e2e images (Alpine's and debian-base's).
const pathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// e2eImages returns, for each name of the list that we know how to build, that image, and the
// names we do not build. The list is `e2e.test --list-images`: one image name per line.
func e2eImages(list []string, in e2eInputs) (images []image, skipped []string) {
	for _, name := range list {
		if img, ok := e2eImage(name, in); ok {
			images = append(images, img)
		} else {
			skipped = append(skipped, name)
		}
	}
	return images, skipped
}

// e2eImage builds the image name, if it is one we know how to build and have the inputs of.
func e2eImage(name string, in e2eInputs) (image, bool) {
	repo, tag := splitName(name)
	e2eRepo := strings.Contains(repo, "e2e-test-images")
	switch base := path.Base(repo); {
	// registry.k8s.io/e2e-test-images/agnhost:2.63.0 (not the private gcr.io/k8s-authenticated-test
	// agnhost: its specs expect the pull to fail).
	case base == "agnhost" && e2eRepo && (tag == in.agnhostVersion || tag == agnhostPrevTag):
		by := "hack/containerd/images: agnhost " + in.agnhostVersion + " from k8s.io/kubernetes (static)"
		if tag != in.agnhostVersion {
			by += " under the tag " + tag + " (its specs' subcommands are the same in both)"
		}
		return image{Name: name, Layer: agnhostFiles(in), Config: containerConfig{
			Env: []string{pathEnv}, Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"},
		}, CreatedBy: by + ", Debian busybox-static applets, Debian bash (also as sh), curl, dig, getent and netcat-openbsd with their libraries"}, true
	case base == "busybox" && e2eRepo:
		return busyboxImage(name, in), true
	// registry.k8s.io/e2e-test-images/nonroot: upstream is debian-base with USER 1234; its
	// specs run `id -u` in it.
	case base == "nonroot" && e2eRepo:
		return image{Name: name, Layer: busyboxFiles(in.busybox, in.applets), Config: containerConfig{
			Env: []string{pathEnv}, Cmd: []string{"sh"}, User: "1234",
		}, CreatedBy: "hack/containerd/images: Debian busybox-static, USER 1234, as " + name}, true
	// registry.k8s.io/e2e-test-images/nonewprivs:1.4: upstream is Alpine with a setuid-root
	// /usr/local/bin/nnp (prints its effective uid), CMD ["nnp"].
	case base == "nonewprivs" && tag == in.nnpVersion && in.nnp != nil:
		files := append(busyboxFiles(in.busybox, in.applets), file{Path: "usr/local/bin/nnp", Mode: 0o4755, Data: in.nnp})
		return image{Name: name, Layer: withParents(files), Config: containerConfig{
			Env: []string{pathEnv}, Cmd: []string{"nnp"},
		}, CreatedBy: "hack/containerd/images: Debian busybox-static, setuid nnp " + tag + " from k8s.io/kubernetes"}, true
	case base == "glibc-dns-testing" && in.glibcHostname != nil:
		return glibcDNSTestingImage(name, in), true
	// registry.k8s.io/pause:3.10.2: the sandbox image the framework names in its pods.
	case repo == "registry.k8s.io/pause":
		return image{Name: name, Layer: pauseFiles(in.pause), Config: containerConfig{
			Entrypoint: []string{"/pause"}, User: "65535:65535",
		}, CreatedBy: "hack/containerd/images: CGO_ENABLED=0 go build ./hack/containerd/pause as " + name}, true
	case base == "nginx" && e2eRepo && tag == nginxTag && in.nginx != nil:
		return nginxImage(name, in), true
	case (base == "kitten" || base == "nautilus") && e2eRepo && in.webserverData[base] != nil:
		return webserverImage(name, base, in), true
	case base == "sample-apiserver" && e2eRepo && in.sampleAPIServer[tag] != nil:
		return sampleAPIServerImage(name, in.sampleAPIServer[tag]), true
	}
	return image{}, false
}

// busyboxImage is registry.k8s.io/e2e-test-images/busybox:1.37.0-1 (and 1.36.1-1): upstream's
// is busybox 1.37 on Alpine's layout; ours is Debian 12's busybox-static (1.35) under that name,
// with Debian's bash as /bin/sh when bashSh is given. The ConfigMap and Secret "consumable via
// the environment" specs run `sh -c env` in it and expect `data-1=value-1`: upstream's busybox sh
// passes such a variable, whose name is not a shell identifier, on to `env`; Debian's busybox sh
// (and dash) drop it before the exec, bash keeps it.
func busyboxImage(name string, in e2eInputs) image {
	files, by := busyboxFiles(in.busybox, in.applets), "Debian busybox-static"
	if in.bashSh != nil {
		files, by = overlaid(files, in.bashSh), by+" with Debian bash as sh"
	}
	return image{Name: name, Layer: files, Config: containerConfig{
		Env: []string{pathEnv}, Cmd: []string{"sh"},
	}, CreatedBy: "hack/containerd/images: " + by + " as " + name}
}

// glibcDNSTestingImage is registry.k8s.io/e2e-test-images/glibc-dns-testing: upstream is
// debian-base with dnsutils; the hostnameOverride specs run `sh -c "echo $(hostname)';'$(hostname
// -f)';'"` in it, and `hostname -f` must resolve through glibc (/etc/hosts, as nsswitch.conf says);
// the [sig-network] DNS specs run `dig` and `getent hosts` in it (their "jessie" querier). Ours:
// busybox's applets, with Debian's glibc hostname, dig (bind9-dnsutils, dnsutils' successor),
// glibc's getent and dash as /bin/sh (debian-base's sh) in place of busybox's: Debian's busybox
// sh runs its own applet of a name (hostname) before PATH's program (FEATURE_SH_STANDALONE).
func glibcDNSTestingImage(name string, in e2eInputs) image {
	files := append(busyboxFiles(in.busybox, in.applets),
		file{Path: "etc/nsswitch.conf", Mode: 0o644, Data: []byte("hosts: files dns\n")})
	return image{Name: name, Layer: overlaid(files, in.glibcHostname), Config: containerConfig{
		Env: []string{pathEnv}, Cmd: []string{"sh"},
	}, CreatedBy: "hack/containerd/images: Debian busybox-static, Debian hostname (glibc), dig, getent and dash (as sh) with their libraries, as " + name}
}

// nginxTag is the Nginx image of test/utils/image/manifest.go: upstream's is nginx 1.15 on Alpine.
const nginxTag = "1.15-4"

// nginxConf serves /usr/share/nginx/html on port 80, as the default server of upstream's image
// does; logs go to the container's stdout and stderr (upstream links its log files to them).
const nginxConf = `user nginx;
worker_processes 1;
error_log stderr notice;
pid /run/nginx.pid;
events {
    worker_connections 1024;
}
http {
    types {
        text/html html htm;
        text/plain txt;
        application/json json;
        image/jpeg jpeg jpg;
    }
    default_type application/octet-stream;
    access_log /dev/stdout;
    server {
        listen 80;
        root /usr/share/nginx/html;
        index index.html;
    }
}
`

// nginxImage is registry.k8s.io/e2e-test-images/nginx:1.15-4: Debian's nginx (1.22) with its
// libraries, busybox's applets for Alpine's shell tools, user nginx (101, as Alpine's), the
// directories nginx writes to, and CMD ["nginx", "-g", "daemon off;"] as upstream's. The specs
// only need its pods to run (ReplicationController, PodTemplates, Endpoints, Pods Extended).
func nginxImage(name string, in e2eInputs) image {
	files := withAccounts(busyboxFiles(in.busybox, in.applets),
		"root:x:0:0:root:/root:/bin/sh\nnginx:x:101:101:nginx:/var/cache/nginx:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
		"root:x:0:\nnginx:x:101:nginx\nnobody:x:65534:\n")
	files = append(files,
		file{Path: "etc/nginx/nginx.conf", Mode: 0o644, Data: []byte(nginxConf)},
		file{Path: "usr/share/nginx/html/index.html", Mode: 0o644, Data: []byte("<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head>\n<body><h1>Welcome to nginx!</h1></body></html>\n")},
		file{Path: "var/lib/nginx", Mode: 0o755, Dir: true},
		file{Path: "var/log/nginx", Mode: 0o755, Dir: true},
		file{Path: "run", Mode: 0o755, Dir: true},
	)
	return image{Name: name, Layer: overlaid(files, in.nginx), Config: containerConfig{
		Env: []string{pathEnv}, Cmd: []string{"nginx", "-g", "daemon off;"},
	}, CreatedBy: "hack/containerd/images: Debian nginx with its libraries, Debian busybox-static applets, as " + name}
}

// webserverImage is registry.k8s.io/e2e-test-images/kitten or nautilus: upstream's Dockerfile is
// FROM agnhost, its html/ files copied to /, CMD ["test-webserver"] (which serves /, port 80).
// The Kubectl Update Demo specs read data.json through the API server's pod proxy.
func webserverImage(name, base string, in e2eInputs) image {
	return image{Name: name, Layer: withParents(append(agnhostFiles(in), in.webserverData[base]...)), Config: containerConfig{
		Env: []string{pathEnv}, Entrypoint: []string{"/agnhost"}, Cmd: []string{"test-webserver"},
	}, CreatedBy: "hack/containerd/images: agnhost " + in.agnhostVersion + " with k8s.io/kubernetes test/images/" + base + "/html, as " + name}
}

// sampleAPIServerImage is registry.k8s.io/e2e-test-images/sample-apiserver: upstream's is
// Alpine with /sample-apiserver (k8s.io/sample-apiserver at the tag's version) as its
// entrypoint; the Aggregator spec passes its flags and runs etcd beside it.
func sampleAPIServerImage(name string, bin []byte) image {
	return image{Name: name, Layer: append(baseFiles(), file{Path: "sample-apiserver", Mode: 0o755, Data: bin}), Config: containerConfig{
		Env: []string{pathEnv}, Entrypoint: []string{"/sample-apiserver"},
	}, CreatedBy: "hack/containerd/images: k8s.io/sample-apiserver from the Go module proxy (static), as " + name}
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
	return overlaid(files, in.hostTools)
}

// overlaid is files with others on top: a file of others replaces the one at the same path, and
// every parent directory is there (withParents).
func overlaid(files, others []file) []file {
	return withParents(append(replaced(files, others), others...))
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
// kubeSrc, etcd from etcdBinDir if given — builds the images and prints, one per line, each name
// it built ("built NAME") and each it did not ("not built NAME").
func buildE2EImages(list, binDir, kubeSrc, hostTools, etcdBinDir string, in e2eInputs) ([]image, error) {
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
	if in.glibcHostname, err = hostToolFiles([]string{"hostname", "dig", "getent", "sh=dash"}); err != nil {
		return nil, err
	}
	if in.bashSh, err = hostToolFiles([]string{"sh=bash"}); err != nil {
		return nil, err
	}
	if err := optionalE2EInputs(binDir, kubeSrc, &in); err != nil {
		return nil, err
	}
	images, skipped := e2eImages(names, in)
	if images, skipped, err = withEtcdImage(images, skipped, etcdBinDir, in.pause); err != nil {
		return nil, err
	}
	for _, img := range images {
		fmt.Println("built", img.Name)
	}
	for _, name := range skipped {
		fmt.Println("not built", name)
	}
	return images, nil
}

// optionalE2EInputs reads what the images of the full [Conformance] suite need beyond the others
// (hack/conformance/build.sh --suite-images puts them in binDir): Debian's nginx unpacked in
// binDir/nginx, and k8s.io/sample-apiserver builds named sample-apiserver-v0.X.Y (the image tag
// 1.X.Y); and kitten's and nautilus' html from kubeSrc. What is missing leaves its image unbuilt.
func optionalE2EInputs(binDir, kubeSrc string, in *e2eInputs) error {
	if nginx := filepath.Join(binDir, "nginx/usr/sbin/nginx"); fileExists(nginx) {
		files, err := hostToolFiles([]string{"nginx=" + nginx})
		if err != nil {
			return err
		}
		in.nginx = files
	}
	bins, err := filepath.Glob(filepath.Join(binDir, "sample-apiserver-v0.*"))
	if err != nil {
		return err
	}
	in.sampleAPIServer = map[string][]byte{}
	for _, b := range bins {
		data, err := readStatic(b)
		if err != nil {
			return err
		}
		in.sampleAPIServer["1."+strings.TrimPrefix(filepath.Base(b), "sample-apiserver-v0.")] = data
	}
	in.webserverData = map[string][]file{}
	for _, name := range []string{"kitten", "nautilus"} {
		for _, f := range []string{name + ".jpg", "data.json"} {
			data, err := os.ReadFile(filepath.Join(kubeSrc, "test/images", name, "html", f))
			if err != nil {
				return err
			}
			in.webserverData[name] = append(in.webserverData[name], file{Path: f, Mode: 0o644, Data: data})
		}
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// withEtcdImage builds registry.k8s.io/etcd:TAG, of the skipped names, from the etcd in binDir
// (if given), as `make kubeadm-up` builds it (kubeadm.go: the version must be the tag's): a
// single-node run has no kubeadm images, and the Aggregator spec runs etcd beside sample-apiserver.
func withEtcdImage(images []image, skipped []string, binDir string, pause []byte) ([]image, []string, error) {
	if binDir == "" {
		return images, skipped, nil
	}
	var still []string
	for _, name := range skipped {
		if repo, _ := splitName(name); repo != "registry.k8s.io/etcd" {
			still = append(still, name)
			continue
		}
		img, why, err := kubeadmImage(name, binDir, pause)
		if err != nil {
			return nil, nil, err
		}
		if why != "" {
			still = append(still, name)
			continue
		}
		images = append(images, img)
	}
	return images, still, nil
}
