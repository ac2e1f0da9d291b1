package podsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// fileSource reads the static pod manifests in dir and hands the full set to merge: at start,
// every period on the clock's ticker, and whenever fsnotify reports a change in dir (upstream
// pkg/kubelet/config/file.go and file_linux.go). The periodic re-read is the source of truth;
// notifications only make changes show up sooner.
type fileSource struct {
	dir      string
	nodeName string
	period   time.Duration
	clock    clock.WithTicker
	recorder record.EventRecorder
	nodeRef  *corev1.ObjectReference
	merge    func(ctx context.Context, pods []*corev1.Pod)
	// notify turns on fsnotify; tests turn it off to drive the source by the clock alone.
	notify bool

	// reported[path] is the content hash of the bad manifest we last sent a Warning event about,
	// so the same bad content is reported once, not on every re-read. Only the loop touches it.
	reported map[string]string
}

// run re-reads dir until ctx is done.
func (f *fileSource) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Watching the static pod manifest directory", "path", f.dir, "period", f.period)
	ticker := f.clock.NewTicker(f.period)
	defer ticker.Stop()

	// changes stays nil (never ready) when fsnotify is off or unavailable.
	var w *fsnotify.Watcher
	var changes <-chan fsnotify.Event
	var watchErrs <-chan error
	if f.notify {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			logger.Error(err, "Cannot watch the manifest directory; relying on the periodic re-read", "path", f.dir)
		} else {
			defer func() { _ = w.Close() }()
			changes, watchErrs = w.Events, w.Errors
		}
	}
	watching := false

	for {
		if w != nil && !watching {
			// The directory may appear later: try again on every turn until it is watched.
			watching = w.Add(f.dir) == nil
		}
		f.syncOnce(ctx)
		// Wait for the next reason to re-read.
		for wait := true; wait; {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C():
				wait = false
			case ev := <-changes:
				if ev.Name == f.dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
					watching = false // the watch went away with the directory
				}
				wait = !isManifestChange(f.dir, ev)
			case err := <-watchErrs:
				logger.Error(err, "Watching the manifest directory failed; relying on the periodic re-read", "path", f.dir)
			}
		}
	}
}

// syncOnce is one turn: read every manifest and hand the full set to the merger. A directory
// that does not exist means no static pods; a directory that cannot be read leaves the last set
// in place (upstream does the same).
func (f *fileSource) syncOnce(ctx context.Context) {
	pods, err := f.readDir(ctx)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Cannot read the static pod manifest directory; keeping the pods read before", "path", f.dir)
		return
	}
	f.merge(ctx, pods)
}

// readDir returns the pods of every good manifest in dir, in file name order. Bad manifests are
// reported (once per content) and skipped; the others go on.
func (f *fileSource) readDir(ctx context.Context) ([]*corev1.Pod, error) {
	logger := klog.FromContext(ctx)
	entries, err := os.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		logger.V(2).Info("The static pod manifest directory does not exist; no static pods", "path", f.dir)
		clear(f.reported)
		return []*corev1.Pod{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read manifest directory %q: %w", f.dir, err)
	}

	pods := []*corev1.Pod{}
	stillBad := map[string]bool{}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, entry := range entries {
		if !isManifestName(entry.Name()) {
			continue
		}
		path := filepath.Join(f.dir, entry.Name())
		data, err := readManifestFile(path)
		if err != nil {
			// A subdirectory named *.yaml, a file removed while we list: not a manifest now.
			logger.V(4).Info("Skipping an unreadable manifest", "path", path, "err", err)
			continue
		}
		pod, reason, err := manifestToPod(data, path, f.nodeName)
		if err != nil {
			stillBad[path] = true
			f.reportOnce(ctx, path, data, reason, err)
			continue
		}
		logger.V(4).Info("Read a static pod manifest", "path", path, "pod", klog.KObj(pod), "podUID", pod.UID)
		pods = append(pods, pod)
	}
	// Forget reports of files that are fixed or gone: if they break again, say so again.
	for path := range f.reported {
		if !stillBad[path] {
			delete(f.reported, path)
		}
	}
	return pods, nil
}

// reportOnce logs a bad manifest and sends one Warning event on the Node per file content.
func (f *fileSource) reportOnce(ctx context.Context, path string, data []byte, reason string, err error) {
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if f.reported[path] == hash {
		return
	}
	f.reported[path] = hash
	klog.FromContext(ctx).Error(err, "Skipping a bad static pod manifest; fix the file and it is read again", "path", path, "reason", reason)
	f.recorder.Eventf(f.nodeRef, corev1.EventTypeWarning, reason, "Skipping static pod manifest %s: %v", path, err)
}

// isManifestName: *.yaml, *.yml or *.json, not a dotfile (editors' swap files, atomic-write
// temporaries).
func isManifestName(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// isManifestChange tells whether a notification from the directory watch is worth a re-read.
func isManifestChange(dir string, ev fsnotify.Event) bool {
	return filepath.Dir(ev.Name) == filepath.Clean(dir) && isManifestName(filepath.Base(ev.Name))
}

// readManifestFile reads a regular file, following symlinks.
func readManifestFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.ReadFile(path)
}
