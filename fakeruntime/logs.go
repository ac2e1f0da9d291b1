package fakeruntime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// resolveLogPath applies the CRI rule: LogPath is relative to the sandbox's LogDirectory.
// Without a LogDirectory, LogRoot stands in; without either the result is "" and output is
// discarded. A LogPath that is absolute or climbs out of its directory ("../..") is refused:
// the fake runtime never writes outside the log directories it was given.
func resolveLogPath(logRoot, logDirectory, logPath string) (string, error) {
	if logPath == "" {
		return "", nil
	}
	if !filepath.IsLocal(logPath) {
		return "", fmt.Errorf("log_path %q must be a relative path inside the sandbox's log_directory", logPath)
	}
	switch {
	case logDirectory != "":
		return filepath.Join(logDirectory, logPath), nil
	case logRoot != "":
		return filepath.Join(logRoot, logPath), nil
	default:
		return "", nil
	}
}

// formatLogLines renders text in the CRI log format, one full ("F") line per line of text:
//
//	2016-10-06T00:17:09.669794202Z stdout F message
//
// The kubelet's reader (pkg/kubelet/kuberuntime/logs/logs.go) splits on the first three spaces.
func formatLogLines(t time.Time, stream runtimeapi.LogStreamType, text string) string {
	ts := t.UTC().Format(time.RFC3339Nano)
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fmt.Fprintf(&b, "%s %s %s %s\n", ts, stream, runtimeapi.LogTagFull, line)
	}
	return b.String()
}

// appendLog appends lines (formatLogLines; "" only creates the file) to the log file at path,
// creating the file and its directory if missing. The file is opened for every write, so after the
// kubelet rotates it (rename + ReopenContainerLog) output goes to a new file.
func appendLog(path, lines string) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create log directory for %q: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("open log file %q: %w", path, err)
	}
	if _, err := f.WriteString(lines); err != nil {
		_ = f.Close()
		return fmt.Errorf("write log file %q: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close log file %q: %w", path, err)
	}
	return nil
}
