// Package options turns the command line and a KubeletConfiguration file into validated Options.
//
// Upstream counterparts: cmd/kubelet/app/options/options.go (KubeletFlags: identity and files,
// command line only) and pkg/kubelet/apis/config (KubeletConfiguration: behaviour, file or flag).
// As upstream, a flag given on the command line wins over the file: the file is loaded onto the
// defaults, then the config-backed flags the user set are applied again on top.
//
// Simplified: only the v1beta1 fields minikubelet acts on are defaulted and validated; every other
// known field is accepted and reported once as ignored (so a real kubelet's config loads), while a
// field unknown to v1beta1 is an error, because a typo should not pass silently.
package options
