package volume

// Projecting a payload atomically: the ..data swap and the user-visible links (upstream:
// pkg/volume/util/atomic_writer.go AtomicWriter.Write, createUserVisibleFiles,
// removeUserVisiblePaths).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// dataDirName is the symlink that names the current timestamped directory. Swapping it is
	// the one atomic step of an update.
	dataDirName = "..data"
	// newDataDirName is the symlink built next to dataDirName and renamed over it.
	newDataDirName = "..data_tmp"
	// tsDirLayout names the hidden timestamped directories (a time.Format layout). MkdirTemp
	// appends "_" and a random number, so two writes in the same nanosecond, or under a fake
	// clock, still get distinct names: ..2026_11_21_12_00_00.123456789_1234567890
	tsDirLayout = "..2006_01_02_15_04_05.000000000"
)

// FileProjection is one file of a volume: its content and its permission bits (0644, 0400 …).
type FileProjection struct {
	Data []byte
	Mode int32
}

// AtomicWriter projects a payload into a directory so that readers see either the whole old
// payload or the whole new one (see doc.go for the layout). The zero value is ready to use.
//
// Like upstream, it offers no locking: calls for the same directory must not overlap. The
// kubelet guarantees this because one pod worker owns each pod's volumes.
type AtomicWriter struct {
	// Clock stamps the names of the hidden data directories. nil means the real clock.
	Clock clock.PassiveClock
}

// Write makes dir hold exactly payload (keys are paths relative to dir). dir must exist.
// changed reports whether anything a reader can see changed; writing the payload that is
// already on disk changes nothing. setPerms, if not nil, runs after a new version is written
// and before it is published (the volume's fsGroup ownership: readers never see the new files
// with other owners). The steps, as upstream AtomicWriter.Write:
//
//  1. validate every path;
//  2. read ..data to find the current timestamped directory;
//  3. compare it with the payload (same paths, bytes and modes → no new directory);
//  4. otherwise write the payload into a new timestamped directory and fsync it, then setPerms;
//  5. symlink ..data_tmp → new directory, rename it over ..data (the atomic swap);
//  6. add the user-visible symlinks name → ..data/name that are missing;
//  7. remove user-visible symlinks whose name is no longer in the payload;
//  8. remove the old timestamped directory.
func (w AtomicWriter) Write(ctx context.Context, dir string, payload map[string]FileProjection, setPerms func() error) (changed bool, err error) {
	logger := klog.FromContext(ctx)

	// (1)
	clean, err := validatePayload(payload)
	if err != nil {
		return false, err
	}
	if info, err := os.Stat(dir); err != nil {
		return false, fmt.Errorf("atomic write into %s: %w", dir, err)
	} else if !info.IsDir() {
		return false, fmt.Errorf("atomic write into %s: not a directory", dir)
	}

	// (2)
	dataDirPath := filepath.Join(dir, dataDirName)
	oldTsDir, err := os.Readlink(dataDirPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read link %s: %w", dataDirPath, err)
	}

	// (3)
	needWrite := true
	if oldTsDir != "" {
		same, err := payloadOnDisk(clean, filepath.Join(dir, oldTsDir))
		if err != nil {
			return false, err
		}
		needWrite = !same
	}

	if needWrite {
		// (4) and (5)
		newTsDir, err := w.publish(dir, clean, setPerms)
		if err != nil {
			return false, err
		}
		logger.V(4).Info("Published new data directory", "dir", dir, "dataDir", newTsDir, "oldDataDir", oldTsDir)
		changed = true
	}

	// (6) Also when nothing was written: a crash between (5) and (6) leaves links missing
	// (upstream issue 121472).
	added, err := createUserVisibleLinks(dir, clean)
	if err != nil {
		return changed, err
	}
	// (7)
	removed, err := removeStaleUserVisibleLinks(dir, clean)
	if err != nil {
		return changed, err
	}
	changed = changed || added || removed

	// (8) Readers that opened a file there keep reading it: an unlinked file lives on until
	// its last descriptor is closed.
	if needWrite && oldTsDir != "" {
		if err := os.RemoveAll(filepath.Join(dir, oldTsDir)); err != nil {
			return changed, fmt.Errorf("remove old data directory %s: %w", oldTsDir, err)
		}
	}
	return changed, nil
}

// publish writes payload into a new timestamped directory under dir, runs setPerms (if not nil)
// and points ..data at it. It returns the new directory's name.
func (w AtomicWriter) publish(dir string, payload map[string]FileProjection, setPerms func() error) (string, error) {
	clk := w.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	tsPath, err := os.MkdirTemp(dir, clk.Now().UTC().Format(tsDirLayout)+"_*")
	if err != nil {
		return "", fmt.Errorf("create data directory in %s: %w", dir, err)
	}
	// Not left behind half-written if anything below fails.
	published := false
	defer func() {
		if !published {
			_ = os.RemoveAll(tsPath)
		}
	}()
	// 0755 whatever the umask, so non-root container users can traverse it (as upstream).
	if err := os.Chmod(tsPath, 0o755); err != nil {
		return "", err
	}
	if err := writePayload(tsPath, payload); err != nil {
		return "", err
	}
	if setPerms != nil {
		if err := setPerms(); err != nil {
			return "", err
		}
	}

	// The swap: a new symlink, then rename(2) over the old one. rename is atomic, so ..data
	// names the old directory or the new one, never nothing.
	tsName := filepath.Base(tsPath)
	newLink := filepath.Join(dir, newDataDirName)
	if err := os.Remove(newLink); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("remove leftover %s: %w", newLink, err)
	}
	if err := os.Symlink(tsName, newLink); err != nil {
		return "", fmt.Errorf("create symlink %s: %w", newLink, err)
	}
	if err := os.Rename(newLink, filepath.Join(dir, dataDirName)); err != nil {
		_ = os.Remove(newLink)
		return "", fmt.Errorf("swap %s: %w", dataDirName, err)
	}
	published = true
	// Make the swap itself durable.
	if err := syncDir(dir); err != nil {
		return tsName, err
	}
	return tsName, nil
}

// createUserVisibleLinks makes sure every top-level name of the payload is a symlink
// name → ..data/name. For "a/b/c" only "a" is a link; the rest is reached through it.
func createUserVisibleLinks(dir string, payload map[string]FileProjection) (added bool, err error) {
	for _, name := range topLevelNames(payload) {
		link := filepath.Join(dir, name)
		want := filepath.Join(dataDirName, name)
		got, err := os.Readlink(link)
		switch {
		case err == nil && got == want:
			continue
		case err == nil:
			return added, fmt.Errorf("%s is a symlink to %s, want %s", link, got, want)
		case !errors.Is(err, fs.ErrNotExist):
			return added, fmt.Errorf("%s exists and is not a symlink into %s: %w", link, dataDirName, err)
		}
		if err := os.Symlink(want, link); err != nil {
			return added, fmt.Errorf("create symlink %s: %w", link, err)
		}
		added = true
	}
	return added, nil
}

// removeStaleUserVisibleLinks removes links name → ..data/name whose name the payload no longer
// has. It looks at what is in dir rather than at the old payload, so links left by a crash go
// too; anything that is not such a link is left alone.
func removeStaleUserVisibleLinks(dir string, payload map[string]FileProjection) (removed bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	keep := topLevelNames(payload)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") || e.Type()&fs.ModeSymlink == 0 || slices.Contains(keep, name) {
			continue
		}
		link := filepath.Join(dir, name)
		target, err := os.Readlink(link)
		if err != nil || target != filepath.Join(dataDirName, name) {
			continue
		}
		if err := os.Remove(link); err != nil {
			return removed, fmt.Errorf("remove old symlink %s: %w", link, err)
		}
		removed = true
	}
	return removed, nil
}

// topLevelNames returns the sorted, distinct first elements of the payload's paths.
func topLevelNames(payload map[string]FileProjection) []string {
	var names []string
	for p := range payload {
		first, _, _ := strings.Cut(p, "/")
		if !slices.Contains(names, first) {
			names = append(names, first)
		}
	}
	slices.Sort(names)
	return names
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
