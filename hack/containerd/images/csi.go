package main

// csiHostpathName is the image of our CSI node driver (tools/csi-hostpath), which the containerd
// e2e tests run as a DaemonSet: built here from its static binary, like pause, with no registry.
const csiHostpathName = "docker.io/minikubelet/csi-hostpath:local"

// csiHostpathImage is the driver's image: /csi-hostpath as the entrypoint (its flags are the
// container's args), run as root, which it needs to make sockets and links in the kubelet's
// root directory.
func csiHostpathImage(binary []byte) image {
	return image{Name: csiHostpathName, Layer: append(baseFiles(), file{Path: "csi-hostpath", Mode: 0o755, Data: binary}),
		Config:    containerConfig{Entrypoint: []string{"/csi-hostpath"}},
		CreatedBy: "hack/containerd/images: CGO_ENABLED=0 go build ./tools/csi-hostpath"}
}
