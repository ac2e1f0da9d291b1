package main

import (
	"archive/tar"
	"strings"
	"testing"
)

// Each name of `e2e.test --list-images` we can build gets its image under exactly that name;
// the others are reported, not faked.
func TestE2EImagesByName(t *testing.T) {
	list := []string{
		"registry.k8s.io/e2e-test-images/agnhost:2.63.0",
		"registry.k8s.io/e2e-test-images/agnhost:2.55", // another version: not this module's
		"gcr.io/k8s-authenticated-test/agnhost:2.6",
		"registry.k8s.io/e2e-test-images/busybox:1.37.0-1",
		"registry.k8s.io/e2e-test-images/nonroot:1.5",
		"registry.k8s.io/e2e-test-images/nginx:1.15-4",
		"registry.k8s.io/pause:3.10.2",
		"registry.k8s.io/e2e-test-images/nonewprivs:1.4",
	}
	in := e2eInputs{busybox: []byte("bb"), applets: []string{"sh"}, pause: []byte("p"), agnhost: []byte("agn"), agnhostVersion: "2.63.0", nnp: []byte("nnp"), nnpVersion: "1.4"}
	images, skipped := e2eImages(list, in)
	built := map[string]image{}
	for _, img := range images {
		built[img.Name] = img
	}
	for _, name := range []string{list[0], list[3], list[4], list[6], list[7]} {
		if _, ok := built[name]; !ok {
			t.Errorf("%s not built", name)
		}
	}
	if len(skipped) != 3 || skipped[0] != list[1] || skipped[1] != list[2] || skipped[2] != list[5] {
		t.Errorf("skipped %v, want the other agnhost versions and nginx", skipped)
	}
	agn := built[list[0]].Config
	if len(agn.Entrypoint) != 1 || agn.Entrypoint[0] != "/agnhost" || len(agn.Cmd) != 1 || agn.Cmd[0] != "pause" {
		t.Errorf("agnhost config %+v, want upstream's ENTRYPOINT [/agnhost] CMD [pause]", agn)
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
