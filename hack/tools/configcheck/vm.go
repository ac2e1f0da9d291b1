package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// limaConfig mirrors the fields of a Lima instance template (lima-vm/lima pkg/limatype, the
// fields our vm.yaml uses; templates/default.yaml documents each). Decoding with known fields only
// makes any other field — a typo above all — an error.
type limaConfig struct {
	MinimumLimaVersion string          `yaml:"minimumLimaVersion"`
	VMType             string          `yaml:"vmType"`
	Arch               string          `yaml:"arch"`
	Images             []limaImage     `yaml:"images"`
	CPUs               int             `yaml:"cpus"`
	Memory             string          `yaml:"memory"`
	Disk               string          `yaml:"disk"`
	Mounts             []limaMount     `yaml:"mounts"`
	Containerd         *limaContainerd `yaml:"containerd"`
	Provision          []limaProvision `yaml:"provision"`
	Probes             []limaProbe     `yaml:"probes"`
	Message            string          `yaml:"message"`
}

type limaImage struct {
	Location string `yaml:"location"`
	Arch     string `yaml:"arch"`
	Digest   string `yaml:"digest"`
}

type limaMount struct {
	Location   string `yaml:"location"`
	MountPoint string `yaml:"mountPoint"`
	Writable   *bool  `yaml:"writable"`
}

type limaContainerd struct {
	System *bool `yaml:"system"`
	User   *bool `yaml:"user"`
}

type limaProvision struct {
	Mode   string `yaml:"mode"`
	Script string `yaml:"script"`
}

type limaProbe struct {
	Mode        string `yaml:"mode"`
	Description string `yaml:"description"`
	Script      string `yaml:"script"`
	Hint        string `yaml:"hint"`
}

// pins are tool versions. As wanted versions, an empty field is not compared.
type pins struct {
	Go, Kind, Kubectl, Delve string
}

// namedScript is a script of the file, named for writing it out.
type namedScript struct {
	name, text string
}

type vmResult struct {
	summary string
	scripts []namedScript
}

var (
	// limaArches are the architectures Lima knows (limatype.ArchTypes).
	limaArches = []string{"x86_64", "aarch64", "armv7l", "riscv64", "s390x", "ppc64le"}
	// hostArches are the ones minikubelet's VM must run on: Intel and Apple silicon hosts.
	hostArches = []string{"x86_64", "aarch64"}
	// pinLine is "NAME_VERSION=value" or "DOCKER_PACKAGE=value" alone on a line of a script.
	pinLine = regexp.MustCompile(`^\s*([A-Z]+)_(VERSION|PACKAGE)=(\S*)\s*$`)
	// exactVersion is a released version: no range, no branch, no alias.
	exactVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+$`)
	// floating matches version aliases that move.
	floating = regexp.MustCompile(`(?i)\blatest\b|stable\.txt|@master\b|@main\b`)
	// hardArch matches a download path with the architecture written in, instead of taken from
	// `uname -m`.
	hardArch = regexp.MustCompile(`linux[-_/.](amd64|arm64|x86_64|aarch64)\b|/(amd64|arm64)/`)
	// gibibytes is a Lima size such as "8GiB".
	gibibytes = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?)GiB$`)
)

// checkVM checks a Lima vm.yaml against our rules; want holds the versions the repo pins. It
// returns every problem found, not just the first: of the images, the size, the mounts, the
// provision scripts, the probes and the version pins, in that order.
func checkVM(data []byte, want pins) (vmResult, []error) {
	cfg, err := decodeLima(data)
	if err != nil {
		return vmResult{}, []error{err}
	}
	var p problems
	if cfg.MinimumLimaVersion == "" {
		p.add("minimumLimaVersion is not set: say which Lima can read this file")
	}
	p.checkImages(cfg.Images)
	p.checkSize(cfg)
	p.checkMounts(cfg.Mounts)
	scripts, provisionText := p.checkProvision(cfg.Provision)
	scripts = append(scripts, p.checkProbes(cfg.Probes)...)
	got := p.checkPins(provisionText, want)
	for _, m := range floating.FindAllString(string(data), -1) {
		p.add("%q: a version that moves; pin an exact one", m)
	}
	if len(p) > 0 {
		return vmResult{}, p
	}
	return vmResult{
		summary: fmt.Sprintf("images for %s; %d provision script(s), %d probe(s); go %s, kind %s, kubectl %s, dlv %s",
			strings.Join(hostArches, " and "), len(cfg.Provision), len(cfg.Probes), got.Go, got.Kind, got.Kubectl, got.Delve),
		scripts: scripts,
	}, nil
}

// decodeLima decodes the one YAML document of a Lima file, strictly (known fields only).
func decodeLima(data []byte) (limaConfig, error) {
	var cfg limaConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("not a Lima config we know: %w", err)
	}
	var extra limaConfig
	if err := dec.Decode(&extra); err == nil {
		return cfg, errors.New("more than one YAML document: Lima reads one")
	}
	return cfg, nil
}

// problems collects what checkVM finds, in order.
type problems []error

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

// checkImages: one image for each host architecture, fetched over HTTPS.
func (p *problems) checkImages(images []limaImage) {
	arches := map[string]bool{}
	for i, img := range images {
		if !slices.Contains(limaArches, img.Arch) {
			p.add("images[%d]: arch %q is not one of Lima's %v", i, img.Arch, limaArches)
		}
		if !strings.HasPrefix(img.Location, "https://") {
			p.add("images[%d]: location %q is not an https URL", i, img.Location)
		}
		arches[img.Arch] = true
	}
	for _, a := range hostArches {
		if !arches[a] {
			p.add("images: no image for arch %s; the VM must start on both x86_64 and aarch64 hosts", a)
		}
	}
}

// checkSize: enough CPUs and memory for a kind node and builds.
func (p *problems) checkSize(cfg limaConfig) {
	if cfg.CPUs < 2 {
		p.add("cpus: %d; a kind node and go builds need at least 2", cfg.CPUs)
	}
	if m := gibibytes.FindStringSubmatch(cfg.Memory); m == nil {
		p.add("memory: %q; write it in GiB, e.g. \"8GiB\"", cfg.Memory)
	} else if gib, _ := strconv.ParseFloat(m[1], 64); gib < 4 {
		p.add("memory: %s; a kind node and go builds need at least 4GiB", cfg.Memory)
	}
}

// checkMounts: the repo is built and its _output written inside the VM, so a writable mount must
// hold it.
func (p *problems) checkMounts(mounts []limaMount) {
	for _, m := range mounts {
		if m.Writable != nil && *m.Writable && (m.Location == "~" || strings.HasPrefix(m.Location, "/")) {
			return
		}
	}
	p.add("mounts: none is writable; mount \"~\" (or the repo's path) with writable: true")
}

// checkProvision checks the provision scripts — the shape Lima's templates use, so that a failing
// command stops provisioning; the architecture taken from `uname -m` — and returns them, and
// their text joined.
func (p *problems) checkProvision(provision []limaProvision) ([]namedScript, string) {
	var scripts []namedScript
	var text strings.Builder
	for i, pr := range provision {
		if pr.Mode != "system" && pr.Mode != "user" {
			p.add("provision[%d]: mode %q; this file uses only system and user scripts", i, pr.Mode)
		}
		if err := checkScriptHead(pr.Script); err != nil {
			p.add("provision[%d]: %v", i, err)
		}
		scripts = append(scripts, namedScript{fmt.Sprintf("provision-%d-%s.sh", i, pr.Mode), pr.Script})
		text.WriteString(pr.Script)
	}
	if len(provision) == 0 {
		p.add("provision: no scripts; the VM would have no tools")
	}
	if !strings.Contains(text.String(), "uname -m") {
		p.add("provision: no script asks `uname -m`; choose each download's architecture from it")
	}
	for _, m := range hardArch.FindAllString(text.String(), -1) {
		p.add("provision: %q names an architecture; use the one derived from `uname -m`", m)
	}
	return scripts, text.String()
}

// checkProbes checks the probes — one waits for kind and tells the user where to look when it
// fails — and returns their scripts.
func (p *problems) checkProbes(probes []limaProbe) []namedScript {
	var scripts []namedScript
	kindProbe := false
	for i, pr := range probes {
		if pr.Mode != "" && pr.Mode != "readiness" {
			p.add("probes[%d]: mode %q; Lima supports only readiness probes", i, pr.Mode)
		}
		if err := checkScriptHead(pr.Script); err != nil {
			p.add("probes[%d]: %v", i, err)
		}
		if strings.TrimSpace(pr.Hint) == "" {
			p.add("probes[%d]: no hint; say what to do when it fails", i)
		}
		if strings.Contains(pr.Script, "kind version") {
			kindProbe = true
		}
		scripts = append(scripts, namedScript{fmt.Sprintf("probe-%d.sh", i), pr.Script})
	}
	if !kindProbe {
		p.add("probes: none runs `kind version`")
	}
	return scripts
}

// checkPins: versions pinned exactly in the provision scripts, each with its reason, and the
// same as the repo's. It returns the pins found.
func (p *problems) checkPins(provisionText string, want pins) pins {
	got, pinErrs := findPins(provisionText)
	*p = append(*p, pinErrs...)
	for _, c := range []struct{ name, got, want string }{
		{"GO_VERSION", got.Go, want.Go},
		{"KIND_VERSION", got.Kind, want.Kind},
		{"KUBECTL_VERSION", got.Kubectl, want.Kubectl},
		{"DELVE_VERSION", got.Delve, want.Delve},
	} {
		switch {
		case c.got == "":
			p.add("provision: no %s=<version> line; pin it", c.name)
		case c.want != "" && strings.TrimPrefix(c.got, "v") != strings.TrimPrefix(c.want, "v"):
			p.add("provision: %s=%s, but the repo pins %s", c.name, c.got, c.want)
		}
	}
	return got
}

// checkScriptHead requires "#!/bin/bash" and then "set -eux…" as a script's first two lines:
// bash, stop at the first failing command or unset variable, and show each command in the log.
func checkScriptHead(script string) error {
	lines := strings.SplitN(script, "\n", 3)
	if len(lines) < 2 || lines[0] != "#!/bin/bash" || !strings.HasPrefix(lines[1], "set -eux") {
		return errors.New(`script must start with "#!/bin/bash" and then "set -eux" (-o pipefail may follow)`)
	}
	return nil
}

// findPins reads the NAME_VERSION= and DOCKER_PACKAGE= lines of the scripts. Each must be preceded
// by a comment line (the reason for the pin) and hold an exact version; Docker comes either from
// the distro (DOCKER_PACKAGE=docker.io) or at an exact DOCKER_VERSION.
func findPins(text string) (pins, []error) {
	var p pins
	var errs []error
	docker := false
	prev := ""
	for line := range strings.SplitSeq(text, "\n") {
		m := pinLine.FindStringSubmatch(line)
		if m == nil {
			if strings.TrimSpace(line) != "" {
				prev = strings.TrimSpace(line)
			}
			continue
		}
		name, kind, value := m[1], m[2], m[3]
		if !strings.HasPrefix(prev, "#") {
			errs = append(errs, fmt.Errorf("provision: %s_%s has no comment line above it giving the reason for the pin", name, kind))
		}
		prev = strings.TrimSpace(line)
		if kind == "PACKAGE" {
			if name == "DOCKER" && value == "docker.io" {
				docker = true
			} else {
				errs = append(errs, fmt.Errorf("provision: %s_PACKAGE=%s; only DOCKER_PACKAGE=docker.io (the distro's) is known", name, value))
			}
			continue
		}
		if !exactVersion.MatchString(value) {
			errs = append(errs, fmt.Errorf("provision: %s_VERSION=%s is not an exact version like v1.2.3", name, value))
			continue
		}
		switch name {
		case "GO":
			p.Go = value
		case "KIND":
			p.Kind = value
		case "KUBECTL":
			p.Kubectl = value
		case "DELVE":
			p.Delve = value
		case "DOCKER":
			docker = true
		}
	}
	if !docker {
		errs = append(errs, errors.New("provision: Docker is not pinned: DOCKER_PACKAGE=docker.io (the distro's) or DOCKER_VERSION=x.y.z"))
	}
	return p, errs
}
