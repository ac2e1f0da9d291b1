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
// returns every problem found, not just the first.
func checkVM(data []byte, want pins) (vmResult, []error) {
	var cfg limaConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return vmResult{}, []error{fmt.Errorf("not a Lima config we know: %w", err)}
	}
	var extra limaConfig
	if err := dec.Decode(&extra); err == nil {
		return vmResult{}, []error{errors.New("more than one YAML document: Lima reads one")}
	}

	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if cfg.MinimumLimaVersion == "" {
		bad("minimumLimaVersion is not set: say which Lima can read this file")
	}

	// Images: one for each host architecture, fetched over HTTPS.
	arches := map[string]bool{}
	for i, img := range cfg.Images {
		if !slices.Contains(limaArches, img.Arch) {
			bad("images[%d]: arch %q is not one of Lima's %v", i, img.Arch, limaArches)
		}
		if !strings.HasPrefix(img.Location, "https://") {
			bad("images[%d]: location %q is not an https URL", i, img.Location)
		}
		arches[img.Arch] = true
	}
	for _, a := range hostArches {
		if !arches[a] {
			bad("images: no image for arch %s; the VM must start on both x86_64 and aarch64 hosts", a)
		}
	}

	// Size: enough for a kind node and builds.
	if cfg.CPUs < 2 {
		bad("cpus: %d; a kind node and go builds need at least 2", cfg.CPUs)
	}
	if m := gibibytes.FindStringSubmatch(cfg.Memory); m == nil {
		bad("memory: %q; write it in GiB, e.g. \"8GiB\"", cfg.Memory)
	} else if gib, _ := strconv.ParseFloat(m[1], 64); gib < 4 {
		bad("memory: %s; a kind node and go builds need at least 4GiB", cfg.Memory)
	}

	// The repo is built and its _output written inside the VM: a writable mount must hold it.
	writable := false
	for _, m := range cfg.Mounts {
		if m.Writable != nil && *m.Writable && (m.Location == "~" || strings.HasPrefix(m.Location, "/")) {
			writable = true
		}
	}
	if !writable {
		bad("mounts: none is writable; mount \"~\" (or the repo's path) with writable: true")
	}

	// Scripts: the shape Lima's templates use, so that a failing command stops provisioning.
	var scripts []namedScript
	var provisionText strings.Builder
	for i, p := range cfg.Provision {
		if p.Mode != "system" && p.Mode != "user" {
			bad("provision[%d]: mode %q; this file uses only system and user scripts", i, p.Mode)
		}
		if err := checkScriptHead(p.Script); err != nil {
			bad("provision[%d]: %v", i, err)
		}
		scripts = append(scripts, namedScript{fmt.Sprintf("provision-%d-%s.sh", i, p.Mode), p.Script})
		provisionText.WriteString(p.Script)
	}
	if len(cfg.Provision) == 0 {
		bad("provision: no scripts; the VM would have no tools")
	}
	if !strings.Contains(provisionText.String(), "uname -m") {
		bad("provision: no script asks `uname -m`; choose each download's architecture from it")
	}
	for _, m := range hardArch.FindAllString(provisionText.String(), -1) {
		bad("provision: %q names an architecture; use the one derived from `uname -m`", m)
	}

	// Probes: one waits for kind and tells the user where to look when it fails.
	kindProbe := false
	for i, p := range cfg.Probes {
		if p.Mode != "" && p.Mode != "readiness" {
			bad("probes[%d]: mode %q; Lima supports only readiness probes", i, p.Mode)
		}
		if err := checkScriptHead(p.Script); err != nil {
			bad("probes[%d]: %v", i, err)
		}
		if strings.TrimSpace(p.Hint) == "" {
			bad("probes[%d]: no hint; say what to do when it fails", i)
		}
		if strings.Contains(p.Script, "kind version") {
			kindProbe = true
		}
		scripts = append(scripts, namedScript{fmt.Sprintf("probe-%d.sh", i), p.Script})
	}
	if !kindProbe {
		bad("probes: none runs `kind version`")
	}

	// Versions: pinned exactly, each with its reason, and the same as the repo's.
	got, pinErrs := findPins(provisionText.String())
	errs = append(errs, pinErrs...)
	for _, c := range []struct{ name, got, want string }{
		{"GO_VERSION", got.Go, want.Go},
		{"KIND_VERSION", got.Kind, want.Kind},
		{"KUBECTL_VERSION", got.Kubectl, want.Kubectl},
		{"DELVE_VERSION", got.Delve, want.Delve},
	} {
		switch {
		case c.got == "":
			bad("provision: no %s=<version> line; pin it", c.name)
		case c.want != "" && strings.TrimPrefix(c.got, "v") != strings.TrimPrefix(c.want, "v"):
			bad("provision: %s=%s, but the repo pins %s", c.name, c.got, c.want)
		}
	}
	for _, m := range floating.FindAllString(string(data), -1) {
		bad("%q: a version that moves; pin an exact one", m)
	}

	if len(errs) > 0 {
		return vmResult{}, errs
	}
	return vmResult{
		summary: fmt.Sprintf("images for %s; %d provision script(s), %d probe(s); go %s, kind %s, kubectl %s, dlv %s",
			strings.Join(hostArches, " and "), len(cfg.Provision), len(cfg.Probes), got.Go, got.Kind, got.Kubectl, got.Delve),
		scripts: scripts,
	}, nil
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
