package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path with mode (mode is set on the new file before any byte is
// written, so a key is never readable by others, even for a moment).
func WriteFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // no-op after a successful rename
	for _, step := range []func() error{
		func() error { return tmp.Chmod(mode) },
		func() error { _, err := tmp.Write(data); return err },
		tmp.Sync,
	} {
		if err := step(); err != nil {
			_ = tmp.Close()
			return fmt.Errorf("write %q: %w", path, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	return nil
}
