package volume

// The files of one version: a timestamped data directory, written durably and compared with a
// payload (upstream: pkg/volume/util/atomic_writer.go writePayloadToDir, shouldWritePayload).

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writePayload writes every file with its exact mode, fsyncs it, then fsyncs every directory,
// so nothing of the new version is only in the page cache when ..data starts pointing at it.
func writePayload(tsPath string, payload map[string]FileProjection) error {
	for _, p := range sortedKeys(payload) {
		full := filepath.Join(tsPath, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("create directory for %s: %w", p, err)
		}
		if err := writeFileSync(full, payload[p]); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return filepath.WalkDir(tsPath, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return syncDir(p)
	})
}

func writeFileSync(name string, fp FileProjection) error {
	mode := os.FileMode(fp.Mode).Perm()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(fp.Data)
	if err == nil {
		// OpenFile applied the umask; the payload's mode is what the pod asked for.
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// payloadOnDisk reports whether tsPath holds exactly payload: the same set of files, each
// with the same bytes and permission bits. Upstream compares bytes only; comparing modes too
// means a changed mode is published like a changed content.
func payloadOnDisk(payload map[string]FileProjection, tsPath string) (bool, error) {
	files := 0
	same := true
	err := filepath.WalkDir(tsPath, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(tsPath, p)
		if err != nil {
			return err
		}
		want, ok := payload[rel]
		if !ok || !d.Type().IsRegular() {
			same = false
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != os.FileMode(want.Mode).Perm() {
			same = false
			return filepath.SkipAll
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want.Data) {
			same = false
			return filepath.SkipAll
		}
		files++
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		// ..data points at a directory that is gone: write afresh.
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("compare payload with %s: %w", tsPath, err)
	}
	return same && files == len(payload), nil
}
