package volume

// fsGroup: a volume's files made group-owned by the pod's fsGroup, so that every container of
// the pod — each gets the fsGroup as a supplementary group — may read them, and write them when
// the volume is writable (upstream: pkg/volume/volume_linux.go SetVolumeOwnership,
// changeFilePermission, with fsGroupChangePolicy Always, as the secret, configMap, projected,
// downwardAPI and emptyDir plugins call it).

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// The bits SetVolumeOwnership adds (upstream rwMask, roMask, execMask): read (and write, when
// the volume is writable) for owner and group; directories also get search and setgid, so what
// the containers create there later belongs to the fsGroup too.
const (
	ownerGroupRW   os.FileMode = 0o660
	ownerGroupRO   os.FileMode = 0o440
	ownerGroupExec os.FileMode = 0o110
)

// podFSGroup is the pod's spec.securityContext.fsGroup, or nil.
func podFSGroup(pod *corev1.Pod) *int64 {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	return pod.Spec.SecurityContext.FSGroup
}

// fsGroupModes returns payload with every file's mode as SetVolumeOwnership leaves it on a
// read-only volume (mode | 0440), so that the atomic writer's comparison with the files on disk
// stays true after the ownership change and an unchanged volume is not rewritten on every sync.
func fsGroupModes(payload map[string]FileProjection) map[string]FileProjection {
	out := make(map[string]FileProjection, len(payload))
	for p, f := range payload {
		f.Mode |= int32(ownerGroupRO)
		out[p] = f
	}
	return out
}

// setVolumeOwnership walks dir without following symlinks and gives every entry, dir included,
// the group fsGroup and the bits above; symlinks get the group only (chmod would reach their
// target). As upstream, a failed chown or chmod is logged and the walk goes on — the container
// may still manage, and the event a user sees comes from what it cannot read — while a path
// that cannot be read stops the walk with an error.
func setVolumeOwnership(ctx context.Context, dir string, fsGroup int64, readOnly bool) error {
	logger := klog.FromContext(ctx)
	mask := ownerGroupRW
	if readOnly {
		mask = ownerGroupRO
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, int(fsGroup)); err != nil {
			logger.Error(err, "Lchown failed", "path", p)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := info.Mode() | mask
		if d.IsDir() {
			want |= os.ModeSetgid | ownerGroupExec
		}
		if err := os.Chmod(p, want); err != nil {
			logger.Error(err, "Chmod failed", "path", p)
		}
		return nil
	})
}
