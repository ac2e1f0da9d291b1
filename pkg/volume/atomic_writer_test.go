package volume

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

func fp(data string, mode int32) FileProjection {
	return FileProjection{Data: []byte(data), Mode: mode}
}

// visible lists the entries of dir that do not start with "..", as "name -> target".
func visible(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatalf("%s is not a symlink: %v", e.Name(), err)
		}
		out = append(out, e.Name()+" -> "+target)
	}
	return out
}

// hidden lists the entries of dir that start with "..".
func hidden(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			out = append(out, e.Name())
		}
	}
	return out
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Upstream layout (AtomicWriter.Write step 10): files live in a hidden timestamped directory,
// ..data links to it, and each top-level name links to ..data/name.
func TestWriteLayout(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	clk := testingclock.NewFakePassiveClock(time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC))
	w := AtomicWriter{Clock: clk}

	changed, err := w.Write(ctx, dir, map[string]FileProjection{
		"username":   fp("admin", 0o644),
		"tls/ca.crt": fp("CA", 0o400),
		"tls/sub/x":  fp("x", 0o600),
	}, nil)
	if err != nil || !changed {
		t.Fatalf("Write = (%v, %v), want (true, nil)", changed, err)
	}

	tsDir, err := os.Readlink(filepath.Join(dir, dataDirName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tsDir, "..2026_11_21_12_00_00.123456789_") {
		t.Errorf("..data -> %s, want a hidden directory named after the clock's time", tsDir)
	}
	if got, want := hidden(t, dir), []string{tsDir, dataDirName}; !slices.Equal(got, want) {
		t.Errorf("hidden entries = %v, want %v (no ..data_tmp left)", got, want)
	}
	if got, want := visible(t, dir), []string{"tls -> ..data/tls", "username -> ..data/username"}; !slices.Equal(got, want) {
		t.Errorf("visible entries = %v, want %v", got, want)
	}
	for name, want := range map[string]struct {
		data string
		mode os.FileMode
	}{"username": {"admin", 0o644}, "tls/ca.crt": {"CA", 0o400}, "tls/sub/x": {"x", 0o600}} {
		if got := readFile(t, filepath.Join(dir, name)); got != want.data {
			t.Errorf("%s = %q, want %q", name, got, want.data)
		}
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want.mode {
			t.Errorf("%s mode = %v, want %v (exact, whatever the umask)", name, info.Mode().Perm(), want.mode)
		}
	}
}

// Upstream AtomicWriter.Write step 4: a payload equal to what is on disk writes nothing.
// An update creates a new directory, swaps ..data and removes the old directory and the
// links of keys that are gone (steps 5-12).
func TestWriteUpdatesAndIdempotence(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	w := AtomicWriter{}
	write := func(payload map[string]FileProjection) bool {
		t.Helper()
		changed, err := w.Write(ctx, dir, payload, nil)
		if err != nil {
			t.Fatal(err)
		}
		return changed
	}
	dataDir := func() string {
		t.Helper()
		ts, err := os.Readlink(filepath.Join(dir, dataDirName))
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}

	v1 := map[string]FileProjection{"a": fp("1", 0o644), "b": fp("2", 0o644), "d/e": fp("3", 0o644)}
	if !write(v1) {
		t.Fatal("first write reported no change")
	}
	first := dataDir()

	if write(v1) {
		t.Error("writing the same payload again reported a change")
	}
	if dataDir() != first {
		t.Error("writing the same payload again created a new data directory")
	}

	// Mode only: a change (upstream compares bytes only; we publish mode changes too).
	v1mode := map[string]FileProjection{"a": fp("1", 0o600), "b": fp("2", 0o644), "d/e": fp("3", 0o644)}
	if !write(v1mode) {
		t.Error("a mode change reported no change")
	}

	// Remove "b" and "d/e", change "a", add "c".
	v2 := map[string]FileProjection{"a": fp("one", 0o644), "c": fp("new", 0o644)}
	if !write(v2) {
		t.Fatal("update reported no change")
	}
	second := dataDir()
	if second == first {
		t.Fatal("update did not create a new data directory")
	}
	if got, want := visible(t, dir), []string{"a -> ..data/a", "c -> ..data/c"}; !slices.Equal(got, want) {
		t.Errorf("visible entries = %v, want %v (links of removed keys gone)", got, want)
	}
	if got, want := hidden(t, dir), []string{second, dataDirName}; !slices.Equal(got, want) {
		t.Errorf("hidden entries = %v, want %v (old data directories removed)", got, want)
	}
	if got := readFile(t, filepath.Join(dir, "a")); got != "one" {
		t.Errorf("a = %q, want %q", got, "one")
	}

	// A key that is removed from the payload while the others stay equal is still a change.
	if !write(map[string]FileProjection{"a": fp("one", 0o644)}) {
		t.Error("removing a key reported no change")
	}
	if got, want := visible(t, dir), []string{"a -> ..data/a"}; !slices.Equal(got, want) {
		t.Errorf("visible entries = %v, want %v", got, want)
	}

	// An empty payload (an optional, missing Secret) leaves an empty volume.
	if !write(map[string]FileProjection{}) {
		t.Error("emptying the volume reported no change")
	}
	if got := visible(t, dir); len(got) != 0 {
		t.Errorf("visible entries = %v, want none", got)
	}
}

// Upstream issue 121472: when the data is current but a user-visible link is missing (a crash
// after the swap), Write recreates the link. Files that are not our links are left alone.
func TestWriteRepairsLinks(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	payload := map[string]FileProjection{"a": fp("1", 0o644)}
	if _, err := (AtomicWriter{}).Write(ctx, dir, payload, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "unrelated"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := AtomicWriter{}.Write(ctx, dir, payload, nil)
	if err != nil || !changed {
		t.Fatalf("Write = (%v, %v), want (true, nil)", changed, err)
	}
	if got := readFile(t, filepath.Join(dir, "a")); got != "1" {
		t.Errorf("a = %q after repair, want %q", got, "1")
	}
	if got := readFile(t, filepath.Join(dir, "unrelated")); got != "x" {
		t.Errorf("a file that is not ours was touched: %q", got)
	}
}

// Upstream validatePath: paths may not be empty or absolute, contain "..", start with ".."
// (reserved for ..data and the timestamped directories), or be too long.
func TestValidatePath(t *testing.T) {
	tests := []struct {
		path    string
		wantErr string
	}{
		{"key", ""},
		{"a/b/c", ""},
		{"a..b", ""},
		{".hidden", ""},
		{"a/..b", ""},
		{"", "must not be empty"},
		{"/etc/passwd", "must be relative"},
		{"..", "must not contain '..'"},
		{"a/../b", "must not contain '..'"},
		{"a/..", "must not contain '..'"},
		{"..data", "must not start with '..'"},
		{"..data/key", "must not start with '..'"},
		{"...", "must not start with '..'"},
		{"./", "must name a file"},
		{strings.Repeat("x", 256), "filenames must be less than or equal to 255"},
		{strings.Repeat("x/", 2049), "must be less than or equal to 4096"},
	}
	for _, tc := range tests {
		name := tc.path
		if len(name) > 20 {
			name = name[:20] + "…"
		}
		t.Run(name, func(t *testing.T) {
			err := validatePath(tc.path)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("validatePath(%q) = %v, want nil", tc.path, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("validatePath(%q) = %v, want an error containing %q", tc.path, err, tc.wantErr)
			}
		})
	}
}

// An invalid payload is refused as a whole and leaves the directory untouched.
func TestWriteRejectsInvalidPayload(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	for name, payload := range map[string]map[string]FileProjection{
		"reserved name":     {"ok": fp("1", 0o644), "..data": fp("x", 0o644)},
		"escape":            {"ok": fp("1", 0o644), "../x": fp("x", 0o644)},
		"same file twice":   {"a": fp("1", 0o644), "./a": fp("2", 0o644)},
		"file and its dir":  {"a": fp("1", 0o644), "a/b": fp("2", 0o644)},
		"absolute path key": {"/abs": fp("1", 0o644)},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := (AtomicWriter{}).Write(ctx, dir, payload, nil); err == nil {
				t.Fatal("Write accepted an invalid payload")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("directory not left untouched: %v", names)
			}
		})
	}
	if _, err := (AtomicWriter{}).Write(ctx, filepath.Join(t.TempDir(), "missing"), nil, nil); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}

// The promise of the atomic writer (upstream's reason for ..data): a reader opening dir/key
// at any moment gets the complete old or the complete new content, never a mix or a prefix.
// Payloads are large and of different sizes so that an in-place write would be caught.
// An ENOENT is allowed: the reader's path walk may reach an old directory just as it is
// removed (see doc.go); it is retried, never taken as content.
func TestWriteConcurrentReaderSeesWholeVersions(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	const updates = 200

	payloads := make([][]byte, updates)
	for gen := range payloads {
		size := 64<<10 + gen*997
		b := bytes.Repeat([]byte{byte('a' + gen%26)}, size)
		copy(b, fmt.Sprintf("%06d\n", gen))
		payloads[gen] = b
	}
	write := func(gen int) {
		t.Helper()
		changed, err := AtomicWriter{}.Write(ctx, dir, map[string]FileProjection{
			"key":        {Data: payloads[gen], Mode: 0o644},
			"nested/key": {Data: payloads[gen], Mode: 0o644},
		}, nil)
		if err != nil || !changed {
			t.Fatalf("write %d = (%v, %v), want (true, nil)", gen, changed, err)
		}
	}
	write(0)

	var (
		wg       sync.WaitGroup
		done     = make(chan struct{})
		firstOK  = make(chan struct{})
		reads    int
		notFound int
		seen     = map[int]bool{}
		bad      []string
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		signalled := false
		defer func() {
			if !signalled { // never leave the main goroutine waiting
				close(firstOK)
			}
		}()
		for {
			select {
			case <-done:
				return
			default:
			}
			got, err := os.ReadFile(filepath.Join(dir, "key"))
			if errors.Is(err, fs.ErrNotExist) {
				notFound++
				continue
			}
			if err != nil {
				bad = append(bad, err.Error())
				return
			}
			gen, perr := strconv.Atoi(string(got[:min(6, len(got))]))
			if perr != nil || gen < 0 || gen >= updates || !bytes.Equal(got, payloads[gen]) {
				bad = append(bad, fmt.Sprintf("read %d bytes starting %q: not one of the written payloads", len(got), got[:min(10, len(got))]))
				return
			}
			reads++
			seen[gen] = true
			if !signalled {
				close(firstOK)
				signalled = true
			}
		}
	}()

	<-firstOK // the reader is running before the updates start
	for gen := 1; gen < updates; gen++ {
		write(gen)
	}
	close(done)
	wg.Wait()

	if len(bad) > 0 {
		t.Fatalf("reader saw content that was never written whole: %v", bad)
	}
	if len(seen) < 2 {
		t.Errorf("reader saw %d version(s) in %d reads, want several: the test did not exercise concurrent updates", len(seen), reads)
	}
	t.Logf("%d whole reads of %d distinct versions, %d ENOENT retries", reads, len(seen), notFound)
	if got := readFile(t, filepath.Join(dir, "nested", "key")); got != string(payloads[updates-1]) {
		t.Error("nested/key does not hold the last payload")
	}
	if got := hidden(t, dir); len(got) != 2 {
		t.Errorf("hidden entries = %v, want exactly ..data and one data directory", got)
	}
}
