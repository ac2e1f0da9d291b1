package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	kindv1alpha4 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// kindAPIVersion is the kind config API hack/kind-up.sh writes.
const kindAPIVersion = "kind.x-k8s.io/v1alpha4"

// checkKindConfig decodes a kind config the way kind v0.33 does (its encoding.Parse: the type meta
// first, then yaml.v3 with known fields only into kind's own v1alpha4 types) and checks what
// hack/kind-up.sh relies on. It returns a one-line summary.
func checkKindConfig(data []byte) (string, error) {
	var tm struct {
		Kind       string `yaml:"kind"`
		APIVersion string `yaml:"apiVersion"`
	}
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return "", fmt.Errorf("could not determine kind / apiVersion: %w", err)
	}
	if tm.APIVersion != kindAPIVersion || tm.Kind != "Cluster" {
		return "", fmt.Errorf("apiVersion %q, kind %q: want %s Cluster", tm.APIVersion, tm.Kind, kindAPIVersion)
	}
	var cfg kindv1alpha4.Cluster
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return "", fmt.Errorf("kind could not decode it: %w", err)
	}

	controlPlanes := 0
	var images []string
	for i, n := range cfg.Nodes {
		switch n.Role {
		case kindv1alpha4.ControlPlaneRole:
			controlPlanes++
		case kindv1alpha4.WorkerRole:
		default:
			return "", fmt.Errorf("nodes[%d]: role %q; want %s or %s", i, n.Role, kindv1alpha4.ControlPlaneRole, kindv1alpha4.WorkerRole)
		}
		// kind's release notes: "You must use the @sha256 digest to guarantee an image built for
		// this release".
		if n.Image != "" && !strings.Contains(n.Image, "@sha256:") {
			return "", fmt.Errorf("nodes[%d]: image %q has no @sha256: digest; kind supports only the images built for its release", i, n.Image)
		}
		images = append(images, n.Image)
	}
	if controlPlanes == 0 {
		return "", errors.New("no control-plane node")
	}

	grace := ""
	for i, raw := range cfg.KubeadmConfigPatches {
		g, err := graceFromPatch(raw)
		if err != nil {
			return "", fmt.Errorf("kubeadmConfigPatches[%d]: %w", i, err)
		}
		if g != "" {
			grace = g
		}
	}
	summary := fmt.Sprintf("%d node(s), image %s, node-monitor-grace-period ", len(cfg.Nodes), strings.Join(images, ", "))
	if grace == "" {
		return summary + "(kube-controller-manager's default)", nil
	}
	return summary + grace, nil
}

// graceFromPatch returns the node-monitor-grace-period a kubeadm ClusterConfiguration patch gives
// kube-controller-manager, in either extraArgs form: the map of kubeadm v1beta3, or the list of
// {name, value} of v1beta4. It returns "" for other patches.
func graceFromPatch(raw string) (string, error) {
	var patch struct {
		Kind              string `yaml:"kind"`
		ControllerManager struct {
			ExtraArgs yaml.Node `yaml:"extraArgs"`
		} `yaml:"controllerManager"`
	}
	if err := yaml.Unmarshal([]byte(raw), &patch); err != nil {
		return "", fmt.Errorf("not YAML: %w", err)
	}
	if patch.Kind == "" {
		return "", errors.New("no kind: kind matches patches to kubeadm documents by kind")
	}
	if patch.Kind != "ClusterConfiguration" {
		return "", nil
	}
	value := ""
	args := &patch.ControllerManager.ExtraArgs
	switch args.Kind {
	case 0: // absent
	case yaml.MappingNode:
		var m map[string]string
		if err := args.Decode(&m); err != nil {
			return "", fmt.Errorf("controllerManager.extraArgs: %w", err)
		}
		value = m["node-monitor-grace-period"]
	case yaml.SequenceNode:
		var l []struct{ Name, Value string }
		if err := args.Decode(&l); err != nil {
			return "", fmt.Errorf("controllerManager.extraArgs: %w", err)
		}
		for _, a := range l {
			if a.Name == "node-monitor-grace-period" {
				value = a.Value
			}
		}
	default:
		return "", errors.New("controllerManager.extraArgs is neither a map nor a list")
	}
	if value == "" {
		return "", nil
	}
	if _, err := time.ParseDuration(value); err != nil {
		return "", fmt.Errorf("node-monitor-grace-period %q is not a Go duration: %w", value, err)
	}
	return value, nil
}
