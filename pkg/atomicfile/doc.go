// Package atomicfile writes a file so that a reader, or a crash, sees the old content or the new,
// never half of it. The kubelet's certificates and keys (pkg/bootstrap, pkg/server) and a pod's
// managed /etc/hosts (pkg/kubelet) are written this way.
//
// Upstream counterparts: the certificate store's Update
// (staging/src/k8s.io/client-go/util/certificate/certificate_store.go: write a new
// "kubelet-client-<ts>.pem", then rename a symlink over "current") and the temp-file and rename
// primitives of pkg/util/filesystem (defaultfs.go TempFile, Rename) that its callers combine. Upstream
// writes a pod's /etc/hosts in place (kubelet_pods.go ensureHostsFile, os.WriteFile); we use the
// same writer for it as for the keys.
//
// The one step, WriteFile:
//
//	CreateTemp(".<name>.tmp-*" in the target's directory)   ← same filesystem, so rename is atomic
//	Chmod(mode)                                             ← before any byte: a key is never readable by others
//	Write(data); Sync                                       ← the bytes are on disk before they are visible
//	Close; Rename(temp → target)                            ← readers see old or new
//	(any failure: the temp file is removed, the target is untouched)
//
// Simplified: one function, no filesystem interface to fake in tests (tests use t.TempDir), no
// fsync of the directory after the rename (a crash right after it may keep the old name's content;
// it never leaves a partial file).
package atomicfile
