package main

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each name of `e2e.test --list-images` we can build gets its image under exactly that name;
// the others are reported, not faked.
func TestE2EImagesByName(t *testing.T) {
	list := []string{
		"registry.k8s.io/e2e-test-images/agnhost:2.63.0",
		"registry.k8s.io/e2e-test-images/agnhost:2.55", // AgnhostPrev: our agnhost under its tag
		"gcr.io/k8s-authenticated-test/agnhost:2.6",
		"registry.k8s.io/e2e-test-images/busybox:1.37.0-1",
		"registry.k8s.io/e2e-test-images/nonroot:1.5",
		"registry.k8s.io/e2e-test-images/nginx:1.15-4", // no nginx given
		"registry.k8s.io/pause:3.10.2",
		"registry.k8s.io/e2e-test-images/nonewprivs:1.4",
		"registry.k8s.io/e2e-test-images/agnhost:2.40", // neither the current nor AgnhostPrev
	}
	in := e2eInputs{busybox: []byte("bb"), applets: []string{"sh"}, pause: []byte("p"), agnhost: []byte("agn"), agnhostVersion: "2.63.0", nnp: []byte("nnp"), nnpVersion: "1.4"}
	images, skipped := e2eImages(list, in)
	built := map[string]image{}
	for _, img := range images {
		built[img.Name] = img
	}
	for _, name := range []string{list[0], list[1], list[3], list[4], list[6], list[7]} {
		if _, ok := built[name]; !ok {
			t.Errorf("%s not built", name)
		}
	}
	if len(skipped) != 3 || skipped[0] != list[2] || skipped[1] != list[5] || skipped[2] != list[8] {
		t.Errorf("skipped %v, want the private agnhost, nginx and agnhost 2.40", skipped)
	}
	agn := built[list[0]].Config
	if len(agn.Entrypoint) != 1 || agn.Entrypoint[0] != "/agnhost" || len(agn.Cmd) != 1 || agn.Cmd[0] != "pause" {
		t.Errorf("agnhost config %+v, want upstream's ENTRYPOINT [/agnhost] CMD [pause]", agn)
	}
	// The two agnhost tags are two images (two IDs): a spec that switches from one to the other
	// sees the container's image change.
	if prev := built[list[1]]; prev.CreatedBy == built[list[0]].CreatedBy || !strings.Contains(prev.CreatedBy, "2.63.0") {
		t.Errorf("agnhost:2.55 history %q: must differ from 2.63.0's and name the version it is", prev.CreatedBy)
	}
	if u := built[list[4]].Config.User; u != "1234" {
		t.Errorf("nonroot user %q, want 1234", u)
	}
	if u := built[list[6]].Config.User; u != "65535:65535" {
		t.Errorf("pause user %q", u)
	}
	layer, err := layerTar(built[list[7]].Layer)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := readTar(t, layer); h["usr/local/bin/nnp"] == nil || h["usr/local/bin/nnp"].Mode != 0o4755 {
		t.Errorf("nonewprivs: usr/local/bin/nnp must be setuid root: %+v", h["usr/local/bin/nnp"])
	}
}

// The full suite's images, from their optional inputs: nginx (Debian's program, a config serving
// port 80, CMD as upstream's), kitten and nautilus (agnhost's test-webserver serving their html
// from /), sample-apiserver at the version of its tag.
func TestSuiteImages(t *testing.T) {
	in := e2eInputs{busybox: []byte("bb"), applets: []string{"sh"}, agnhost: []byte("agn"), agnhostVersion: "2.63.0",
		nginx:           []file{{Path: "bin/nginx", Mode: 0o755, Data: []byte("nginx")}},
		webserverData:   map[string][]file{"nautilus": {{Path: "data.json", Mode: 0o644, Data: []byte(`{"image": "nautilus.jpg"}`)}}},
		sampleAPIServer: map[string][]byte{"1.29.2": []byte("sample")}}
	list := []string{"registry.k8s.io/e2e-test-images/nginx:1.15-4", "registry.k8s.io/e2e-test-images/nautilus:1.8",
		"registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2",
		"registry.k8s.io/e2e-test-images/kitten:1.8", "registry.k8s.io/e2e-test-images/sample-apiserver:1.33.8"}
	images, skipped := e2eImages(list, in)
	if len(images) != 3 || len(skipped) != 2 || skipped[0] != list[3] || skipped[1] != list[4] {
		t.Fatalf("built %d, skipped %v; want nginx, nautilus and sample-apiserver 1.29.2 only (no kitten data, no 1.33.8 build)", len(images), skipped)
	}
	nginx, nautilus, sample := images[0], images[1], images[2]
	if c := nginx.Config.Cmd; strings.Join(c, " ") != "nginx -g daemon off;" {
		t.Errorf("nginx CMD %q, want upstream's [nginx -g daemon off;]", c)
	}
	layer, err := layerTar(nginx.Layer)
	if err != nil {
		t.Fatal(err)
	}
	_, files := readTar(t, layer)
	if conf := string(files["etc/nginx/nginx.conf"]); !strings.Contains(conf, "listen 80;") || !strings.Contains(conf, "user nginx;") ||
		!strings.Contains(string(files["etc/passwd"]), "nginx:x:101:") || string(files["bin/nginx"]) != "nginx" {
		t.Errorf("nginx layer: conf %q, passwd %q", conf, files["etc/passwd"])
	}
	if nautilus.Config.Entrypoint[0] != "/agnhost" || nautilus.Config.Cmd[0] != "test-webserver" {
		t.Errorf("nautilus config %+v, want agnhost test-webserver", nautilus.Config)
	}
	if layer, err = layerTar(nautilus.Layer); err != nil {
		t.Fatal(err)
	}
	if _, files = readTar(t, layer); !strings.Contains(string(files["data.json"]), "nautilus.jpg") || string(files["agnhost"]) != "agn" {
		t.Error("nautilus layer lacks /data.json or /agnhost")
	}
	if sample.Config.Entrypoint[0] != "/sample-apiserver" || string(sample.Layer[len(sample.Layer)-1].Data) != "sample" {
		t.Errorf("sample-apiserver: %+v", sample.Config)
	}
}

// The agnhost layer has what upstream's Dockerfile adds: /agnhost, the /agnhost-2 symlink, the
// user and group of the SupplementalGroups spec, and every parent directory of the host tools.
func TestAgnhostLayer(t *testing.T) {
	in := e2eInputs{busybox: []byte("bb"), applets: []string{"sh"}, agnhost: []byte("agn"),
		hostTools: []file{{Path: "bin/bash", Mode: 0o755, Data: []byte("b")}, {Path: "lib/x86_64-linux-gnu/libc.so.6", Mode: 0o755, Data: []byte("c")}}}
	layer, err := layerTar(agnhostFiles(in))
	if err != nil {
		t.Fatal(err)
	}
	headers, files := readTar(t, layer)
	if h := headers["agnhost-2"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "agnhost" {
		t.Errorf("agnhost-2: %+v", h)
	}
	if string(files["agnhost"]) != "agn" || headers["uploads/"] == nil {
		t.Error("agnhost or uploads/ missing")
	}
	for _, d := range []string{"lib/", "lib/x86_64-linux-gnu/"} {
		if h := headers[d]; h == nil || h.Typeflag != tar.TypeDir {
			t.Errorf("%s missing", d)
		}
	}
	if g := string(files["etc/group"]); !strings.Contains(g, "group-defined-in-image:x:50000:user-defined-in-image") {
		t.Errorf("etc/group: %q", g)
	}
}

// glibc-dns-testing: glibc's hostname in place of busybox's applet, and an nsswitch.conf that
// sends `hostname -f` to /etc/hosts.
func TestGlibcDNSTestingLayer(t *testing.T) {
	name := "registry.k8s.io/e2e-test-images/glibc-dns-testing:2.0"
	in := e2eInputs{busybox: []byte("bb"), applets: []string{"sh", "hostname"},
		glibcHostname: []file{{Path: "bin/hostname", Mode: 0o755, Data: []byte("glibc")}, {Path: "lib/x86_64-linux-gnu/libc.so.6", Mode: 0o755, Data: []byte("libc")}}}
	images, _ := e2eImages([]string{name}, in)
	if len(images) != 1 {
		t.Fatalf("built %d images, want 1", len(images))
	}
	layer, err := layerTar(images[0].Layer)
	if err != nil {
		t.Fatal(err)
	}
	h, data := readTar(t, layer)
	if string(data["bin/hostname"]) != "glibc" || h["bin/hostname"].Linkname != "" {
		t.Errorf("bin/hostname = %q (link %q), want glibc's program", data["bin/hostname"], h["bin/hostname"].Linkname)
	}
	if !strings.Contains(string(data["etc/nsswitch.conf"]), "hosts: files") || h["lib/x86_64-linux-gnu/"] == nil || h["bin/sh"] == nil {
		t.Errorf("layer lacks nsswitch.conf, a parent directory or sh: %v", h)
	}
	if _, skipped := e2eImages([]string{name}, e2eInputs{}); len(skipped) != 1 {
		t.Errorf("without Debian's hostname the image must not be built")
	}
}

// A program that is missing is named with the Debian 12 package that installs it, where that is
// not the program's own name (install.sh installs these).
func TestDebianPackage(t *testing.T) {
	for tool, want := range map[string]string{"dig": "bind9-dnsutils", "xtables-nft-multi": "iptables", "curl": "curl", "nc.openbsd": "netcat-openbsd"} {
		if got := debianPackage(tool); got != want {
			t.Errorf("debianPackage(%q) = %q, want %q", tool, got, want)
		}
	}
}

// A host tool replaces busybox's applet of the same name (agnhost's nc is netcat-openbsd's):
// one entry per path, the host tool's.
func TestReplacedApplets(t *testing.T) {
	busybox := []file{{Path: "bin/nc", LinkTo: "bin/busybox"}, {Path: "bin/sh", LinkTo: "bin/busybox"}}
	host := []file{{Path: "bin/nc", Data: []byte("nc.openbsd")}}
	got := replaced(busybox, host)
	if len(got) != 1 || got[0].Path != "bin/sh" {
		t.Errorf("replaced = %+v, want only bin/sh", got)
	}
}

// registry.k8s.io/etcd (the Aggregator spec's) is built only from an etcd that says it is the
// tag's version; without --etcd-bin-dir it stays "not built", and other names are left alone.
func TestEtcdImageNeedsItsVersion(t *testing.T) {
	skipped := []string{"registry.k8s.io/etcd:3.6.8-0", "registry.k8s.io/e2e-test-images/perl:5.26"}
	images, still, err := withEtcdImage(nil, skipped, "", nil)
	if err != nil || len(images) != 0 || len(still) != 2 {
		t.Errorf("without a bin dir: %d images, skipped %v, %v; want none built", len(images), still, err)
	}
	bb, err := os.ReadFile("/bin/busybox") // static, but not etcd: `etcd --version` fails
	if err != nil {
		t.Skipf("busybox-static is not installed: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "etcd"), bb, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := withEtcdImage(nil, skipped, dir, nil); err == nil {
		t.Error("an etcd that does not say it is 3.6.8 was made into registry.k8s.io/etcd:3.6.8-0")
	}
}
