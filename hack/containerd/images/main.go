// Command images builds the two container images minikubelet's containerd setup needs without a
// registry: a busybox image (Debian's busybox-static, its applets as hard links in /bin) and a
// pause image (the static ./hack/containerd/pause program), and writes them as one docker-archive
// tarball — the format of `docker save` — that `ctr images import` reads.
//
//	go run ./hack/containerd/images --busybox /bin/busybox --pause ./pause --out images.tar
//	ctr -n k8s.io --address <sock> images import images.tar
//
// hack/containerd/images.sh does both. With --csi-hostpath it also builds the image of our CSI
// node driver (csi.go). With --e2e-list (make conformance) it also builds the
// upstream e2e test images under their exact names: see e2e.go. The tarball is deterministic (fixed times and owners,
// sorted entries), so the same inputs give the same image IDs.
//
// A docker-archive is a tar of:
//
//	manifest.json             [{"Config": "<sha>.json", "RepoTags": ["name:tag"], "Layers": ["<sha>/layer.tar"]}, …]
//	<sha>.json                each image's config (OCI image config: os, architecture, Env, Cmd, rootfs.diff_ids)
//	<sha>/layer.tar           each layer, an uncompressed tar of files; <sha> is its sha256 (its diff_id)
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// epoch is the time every file and image claims: a fixed one keeps the image IDs stable.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	busybox := fs.String("busybox", "/bin/busybox", "a statically linked busybox (Debian: busybox-static)")
	pause := fs.String("pause", "", "the static pause binary (CGO_ENABLED=0 go build ./hack/containerd/pause)")
	busyboxName := fs.String("busybox-name", "docker.io/minikubelet/busybox:local", "the busybox image's name")
	pauseName := fs.String("pause-name", "docker.io/minikubelet/pause:local", "the pause image's name")
	out := fs.String("out", "", "where to write the docker-archive tarball")
	e2eList := fs.String("e2e-list", "", "also build the upstream e2e images this file names (the output of `e2e.test --list-images`) that we can build (see e2e.go)")
	e2eBinDir := fs.String("e2e-bin-dir", "", "for --e2e-list: the directory with the static agnhost and nnp (hack/conformance/build.sh)")
	etcdBinDir := fs.String("etcd-bin-dir", "", "for --e2e-list: the directory with the static etcd (hack/cluster/build.sh) for the registry.k8s.io/etcd image the Aggregator spec runs, if the list names it (its version must be the tag's)")
	kubeSrc := fs.String("kube-src", "", "for --e2e-list: the k8s.io/kubernetes module they were built from (go list -m -f {{.Dir}}): their versions, the tags they get")
	kubeadmList := fs.String("kubeadm-list", "", "also build the images this file names (the output of `kubeadm config images list`; see kubeadm.go)")
	kubeadmBinDir := fs.String("kubeadm-bin-dir", "", "for --kubeadm-list: the directory with kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, etcd and coredns")
	csiHostpath := fs.String("csi-hostpath", "", "also build "+csiHostpathName+" from this static tools/csi-hostpath binary")
	hostTools := fs.String("host-tools", "bash,curl,dig,getent,nc=nc.openbsd,sh=bash", "comma-separated programs of this machine (Debian packages) copied with their libraries into the agnhost image's /bin (NAME=PROGRAM: PROGRAM as NAME; sh=bash: a shell that runs PATH's programs, not busybox's applets)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pause == "" || *out == "" {
		return errors.New("--pause and --out are required")
	}
	bb, err := readStatic(*busybox)
	if err != nil {
		return fmt.Errorf("%w (install busybox-static: hack/containerd/install.sh)", err)
	}
	applets, err := busyboxApplets(*busybox)
	if err != nil {
		return err
	}
	pauseBin, err := readStatic(*pause)
	if err != nil {
		return err
	}
	images := []image{
		{Name: *busyboxName, Layer: busyboxFiles(bb, applets), Config: containerConfig{
			Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Cmd: []string{"sh"},
		}, CreatedBy: "hack/containerd/images: Debian busybox-static, applets hard-linked in /bin"},
		{Name: *pauseName, Layer: pauseFiles(pauseBin), Config: containerConfig{
			Entrypoint: []string{"/pause"},
			User:       "65535:65535", // as upstream's pause image: it needs no privilege
		}, CreatedBy: "hack/containerd/images: CGO_ENABLED=0 go build ./hack/containerd/pause"},
	}
	if *csiHostpath != "" {
		bin, err := readStatic(*csiHostpath)
		if err != nil {
			return err
		}
		images = append(images, csiHostpathImage(bin))
	}
	if *e2eList != "" {
		extra, err := buildE2EImages(*e2eList, *e2eBinDir, *kubeSrc, *hostTools, *etcdBinDir, e2eInputs{busybox: bb, applets: applets, pause: pauseBin})
		if err != nil {
			return err
		}
		images = append(images, extra...)
	}
	if *kubeadmList != "" {
		extra, err := buildKubeadmImages(*kubeadmList, *kubeadmBinDir, pauseBin)
		if err != nil {
			return err
		}
		images = append(images, extra...)
	}
	return writeArchiveFile(*out, images)
}

// writeArchiveFile writes the docker-archive to path through a temporary file (a half-written
// archive is never left under path), streamed: the kubeadm images are hundreds of megabytes.
func writeArchiveFile(path string, images []image) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".images-*.tar")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	w := bufio.NewWriter(f)
	if err := writeDockerArchive(w, images); err != nil {
		_ = f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// readStatic reads an executable that must run in an empty image: an ELF file with no
// interpreter (no dynamic loader, no shared libraries).
func readStatic(path string) ([]byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable executable: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return nil, fmt.Errorf("%s is dynamically linked; an image without libraries needs a static binary", path)
		}
	}
	return os.ReadFile(path)
}

// busyboxApplets asks busybox for the names of its applets (sh, ls, cat, …).
func busyboxApplets(path string) ([]string, error) {
	out, err := exec.Command(path, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", path, err)
	}
	return strings.Fields(string(out)), nil
}

// file is one entry of a layer. A directory has Dir set; a hard link has LinkTo (a path in the
// same layer); a symbolic link has Symlink (its target); otherwise it is a regular file with Data.
type file struct {
	Path    string
	Mode    int64
	Dir     bool
	LinkTo  string
	Symlink string
	Data    []byte
}

// baseFiles are the directories and files every image of ours has: the mount points the runtime
// fills (/proc, /sys, /dev, /etc/hostname, /etc/hosts, /etc/resolv.conf) and root's account.
func baseFiles() []file {
	return []file{
		{Path: "bin", Mode: 0o755, Dir: true},
		{Path: "dev", Mode: 0o755, Dir: true},
		{Path: "etc", Mode: 0o755, Dir: true},
		{Path: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnobody:x:65534:\n")},
		{Path: "etc/hostname", Mode: 0o644},
		{Path: "etc/hosts", Mode: 0o644, Data: []byte("127.0.0.1\tlocalhost\n")},
		{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")},
		{Path: "etc/resolv.conf", Mode: 0o644},
		{Path: "proc", Mode: 0o555, Dir: true},
		{Path: "root", Mode: 0o700, Dir: true},
		{Path: "sys", Mode: 0o555, Dir: true},
		{Path: "tmp", Mode: 0o1777, Dir: true},
		{Path: "var", Mode: 0o755, Dir: true},
	}
}

// busyboxFiles is the busybox image's layer: /bin/busybox and one hard link to it per applet.
// Hard links, not symlinks: Debian's busybox-static picks the applet from argv[0], and a hard link
// keeps argv[0] the applet's own name however the runtime resolves it.
func busyboxFiles(binary []byte, applets []string) []file {
	files := append(baseFiles(), file{Path: "bin/busybox", Mode: 0o755, Data: binary})
	names := append([]string(nil), applets...)
	sort.Strings(names)
	for _, name := range names {
		if name == "busybox" || strings.Contains(name, "/") {
			continue
		}
		files = append(files, file{Path: "bin/" + name, Mode: 0o755, LinkTo: "bin/busybox"})
	}
	return files
}

// pauseFiles is the pause image's layer: /pause and the base mount points.
func pauseFiles(binary []byte) []file {
	return append(baseFiles(), file{Path: "pause", Mode: 0o755, Data: binary})
}

// layerTar writes files, in order, as an uncompressed tar owned by root with fixed times.
func layerTar(files []file) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.Path, Mode: f.Mode, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case f.Dir:
			h.Typeflag, h.Name = tar.TypeDir, f.Path+"/"
		case f.LinkTo != "":
			h.Typeflag, h.Linkname = tar.TypeLink, f.LinkTo
		case f.Symlink != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Symlink
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tar header %s: %w", f.Path, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, fmt.Errorf("tar data %s: %w", f.Path, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// image is one image of the archive: one layer and what to run.
type image struct {
	Name      string // e.g. docker.io/minikubelet/busybox:local
	Layer     []file
	Config    containerConfig
	CreatedBy string // the history entry
}

// containerConfig is the "config" of an OCI image config (what the runtime runs by default).
type containerConfig struct {
	User       string   `json:"User,omitempty"`
	Env        []string `json:"Env,omitempty"`
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
}

// imageConfig is the OCI image config (image-spec config.md), the file an image ID is the
// digest of.
type imageConfig struct {
	Created      time.Time       `json:"created"`
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       containerConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []struct {
		Created   time.Time `json:"created"`
		CreatedBy string    `json:"created_by"`
	} `json:"history"`
}

// manifestEntry is one image in a docker-archive's manifest.json.
type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// writeDockerArchive writes images as a docker-archive: each layer and config under its digest,
// then manifest.json naming them.
func writeDockerArchive(w io.Writer, images []image) error {
	tw := tar.NewWriter(w)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	var manifest []manifestEntry
	for _, img := range images {
		layer, err := layerTar(img.Layer)
		if err != nil {
			return fmt.Errorf("image %s: %w", img.Name, err)
		}
		layerDigest := sha256Hex(layer)
		cfg := imageConfig{Created: epoch, Architecture: runtime.GOARCH, OS: "linux", Config: img.Config}
		cfg.RootFS.Type = "layers"
		cfg.RootFS.DiffIDs = []string{"sha256:" + layerDigest}
		cfg.History = append(cfg.History, struct {
			Created   time.Time `json:"created"`
			CreatedBy string    `json:"created_by"`
		}{epoch, img.CreatedBy})
		cfgJSON, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		cfgName := sha256Hex(cfgJSON) + ".json"
		layerName := layerDigest + "/layer.tar"
		if err := add(cfgName, cfgJSON); err != nil {
			return err
		}
		if err := add(layerName, layer); err != nil {
			return err
		}
		manifest = append(manifest, manifestEntry{Config: cfgName, RepoTags: []string{img.Name}, Layers: []string{layerName}})
	}
	data, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	if err := add("manifest.json", data); err != nil {
		return err
	}
	return tw.Close()
}
