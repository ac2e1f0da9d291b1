package kuberuntime

// Termination messages (upstream: kuberuntime_container.go makeMounts' termination-log file,
// getTerminationMessage, readLastStringFromContainerLogs): the kubelet gives every container a
// file of its own at terminationMessagePath, and reports what the container wrote there (or,
// with FallbackToLogsOnError, the tail of its log) as state.terminated.message.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime/logs"
)

// Limits of a termination message, as upstream kubecontainer: 4 KiB from the file; from the log,
// its last 80 lines and 2 KiB.
const (
	maxTerminationMessage     = 4 * 1024
	maxTerminationLogLines    = 80
	maxTerminationLogMessage  = 2 * 1024
	terminationMessageFileMod = 0o666 // the container may run as any user
)

// terminationMessageMount makes a new, empty file for container c's termination message in its
// pod container directory and returns the mount that puts it at c.TerminationMessagePath; nil
// when the container has no path or the kubelet gave no directory.
func terminationMessageMount(c *corev1.Container, podContainerDir string) (*runtimeapi.Mount, error) {
	if c.TerminationMessagePath == "" || podContainerDir == "" {
		return nil, nil
	}
	id := make([]byte, 4)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	path := filepath.Join(podContainerDir, hex.EncodeToString(id))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create the termination message file of container %s: %w", c.Name, err)
	}
	_ = f.Close()
	if err := os.Chmod(path, terminationMessageFileMod); err != nil { // past the umask
		return nil, err
	}
	return &runtimeapi.Mount{HostPath: path, ContainerPath: c.TerminationMessagePath}, nil
}

// addTerminationMessage puts the termination message of an exited container into cs.Message,
// after the runtime's own message: the content of the file mounted at its
// terminationMessagePath (annotated at creation), or, with FallbackToLogsOnError and a non-zero
// exit, the tail of its log when the file is empty.
func (m *Manager) addTerminationMessage(ctx context.Context, cs *kubecontainer.ContainerStatus, s *runtimeapi.ContainerStatus) {
	if s.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
		return
	}
	a := s.GetAnnotations()
	fallback := corev1.TerminationMessagePolicy(a[annotationTerminationMessagePolicy]) == corev1.TerminationMessageFallbackToLogsOnError &&
		cs.ExitCode != 0 && cs.Reason != "ContainerCannotRun"
	msg, checkLogs := readTerminationMessage(s.GetMounts(), a[annotationTerminationMessagePath], fallback)
	if checkLogs {
		msg = m.logTail(ctx, s.GetLogPath())
	}
	if msg == "" {
		return
	}
	if cs.Message != "" {
		cs.Message += ": "
	}
	cs.Message += msg
}

// readTerminationMessage reads at most 4 KiB of the file mounted at path, and says whether the
// log should be read instead (fallback, and nothing there). Pure but for reading the file.
func readTerminationMessage(mounts []*runtimeapi.Mount, path string, fallback bool) (string, bool) {
	if path == "" {
		return "", fallback
	}
	for _, mnt := range mounts {
		if mnt.GetContainerPath() != path {
			continue
		}
		data, err := readAtMost(mnt.GetHostPath(), maxTerminationMessage)
		if err != nil {
			if os.IsNotExist(err) {
				return "", fallback
			}
			return fmt.Sprintf("Error on reading termination log %s: %v", mnt.GetHostPath(), err), false
		}
		return string(data), fallback && len(data) == 0
	}
	return "", fallback
}

// readAtMost returns the last max bytes of the file at path.
func readAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if size := info.Size(); size > max {
		if _, err := f.Seek(size-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// logTail is the last 80 lines of the container's CRI log, at most its last 2 KiB.
func (m *Manager) logTail(ctx context.Context, path string) string {
	lines := int64(maxTerminationLogLines)
	var out bytes.Buffer
	if err := logs.ReadLogs(ctx, m.clock, path, logs.Options{TailLines: &lines}, func() bool { return false }, &out, &out); err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	b := out.Bytes()
	if len(b) > maxTerminationLogMessage {
		b = b[len(b)-maxTerminationLogMessage:]
	}
	return string(b)
}
