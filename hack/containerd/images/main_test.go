package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// readTar returns a tar's headers and regular files' contents by name.
func readTar(t *testing.T, data []byte) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	headers, files := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return headers, files
		}
		if err != nil {
			t.Fatal(err)
		}
		headers[h.Name] = h
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}

// Debian's busybox-static picks its applet from argv[0]: every applet is a hard link to
// /bin/busybox, so the binary is in the layer once.
func TestBusyboxLayerHardLinksApplets(t *testing.T) {
	layer, err := layerTar(busyboxFiles([]byte("ELF…"), []string{"sh", "ls", "busybox", "sleep"}))
	if err != nil {
		t.Fatal(err)
	}
	headers, files := readTar(t, layer)
	if h := headers["bin/busybox"]; h == nil || h.Typeflag != tar.TypeReg || string(files["bin/busybox"]) != "ELF…" || h.Mode != 0o755 {
		t.Fatalf("bin/busybox: %+v", h)
	}
	for _, applet := range []string{"sh", "ls", "sleep"} {
		if h := headers["bin/"+applet]; h == nil || h.Typeflag != tar.TypeLink || h.Linkname != "bin/busybox" {
			t.Errorf("bin/%s: %+v, want a hard link to bin/busybox", applet, h)
		}
	}
	for _, dir := range []string{"proc/", "sys/", "dev/", "tmp/", "etc/"} {
		if h := headers[dir]; h == nil || h.Typeflag != tar.TypeDir {
			t.Errorf("%s missing: the runtime mounts onto it", dir)
		}
	}
	if h := headers["etc/hostname"]; h == nil || h.Typeflag != tar.TypeReg {
		t.Errorf("etc/hostname missing: containerd bind-mounts the sandbox's hostname file onto it")
	}
}

// The docker-archive is what `ctr images import` reads: manifest.json names each image's config
// and layer by digest, the config's diff_id is the layer's sha256, and the same inputs give the
// same bytes (stable image IDs).
func TestDockerArchive(t *testing.T) {
	images := []image{
		{Name: "docker.io/minikubelet/busybox:local", Layer: busyboxFiles([]byte("bb"), []string{"sh"}), Config: containerConfig{Cmd: []string{"sh"}}},
		{Name: "docker.io/minikubelet/pause:local", Layer: pauseFiles([]byte("p")), Config: containerConfig{Entrypoint: []string{"/pause"}}},
	}
	var a, b bytes.Buffer
	if err := writeDockerArchive(&a, images); err != nil {
		t.Fatal(err)
	}
	if err := writeDockerArchive(&b, images); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two archives of the same images differ")
	}
	_, files := readTar(t, a.Bytes())
	var manifest []manifestEntry
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 2 {
		t.Fatalf("manifest.json has %d images, want 2", len(manifest))
	}
	for i, m := range manifest {
		if len(m.RepoTags) != 1 || m.RepoTags[0] != images[i].Name || len(m.Layers) != 1 {
			t.Fatalf("manifest entry %d: %+v", i, m)
		}
		cfgJSON, layer := files[m.Config], files[m.Layers[0]]
		if m.Config != sha256Hex(cfgJSON)+".json" || m.Layers[0] != sha256Hex(layer)+"/layer.tar" {
			t.Errorf("%s: files not named by their digests: %+v", m.RepoTags[0], m)
		}
		var cfg imageConfig
		if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.OS != "linux" || len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+sha256Hex(layer) {
			t.Errorf("%s config: %s", m.RepoTags[0], cfgJSON)
		}
	}
	if !strings.Contains(string(files[manifest[1].Config]), `"Entrypoint":["/pause"]`) {
		t.Errorf("pause config: %s", files[manifest[1].Config])
	}
}

// The CSI driver's image runs the binary it was given as its entrypoint, from its root.
func TestCSIHostpathImage(t *testing.T) {
	img := csiHostpathImage([]byte("\x7fELF driver"))
	if img.Name != "docker.io/minikubelet/csi-hostpath:local" || len(img.Config.Entrypoint) != 1 || img.Config.Entrypoint[0] != "/csi-hostpath" {
		t.Errorf("image %s, entrypoint %v; want docker.io/minikubelet/csi-hostpath:local running /csi-hostpath", img.Name, img.Config.Entrypoint)
	}
	last := img.Layer[len(img.Layer)-1]
	if last.Path != "csi-hostpath" || last.Mode != 0o755 || string(last.Data) != "\x7fELF driver" {
		t.Errorf("layer ends with %s %o %q, want the binary at /csi-hostpath, 0755", last.Path, last.Mode, last.Data)
	}
}
