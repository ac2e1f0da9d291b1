package kubelet

// The probes' side of the kubelet (upstream: kubelet.go, where NewMainKubelet builds the
// probe manager and its three results managers, and syncLoopIteration's livenessManager,
// readinessManager and startupManager cases with handleProbeSync).

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/prober"
)

// probes is the probe manager and the results it publishes.
type probes struct {
	manager                      *prober.Manager
	liveness, readiness, startup *prober.ResultsManager
	runtimeName                  string // the "<runtime>://" of the API's container IDs
}

// What kuberuntime and the prober ask of the kubelet's side, checked at compile time.
var (
	_ kuberuntime.ProbeResults = (*probes)(nil)
	_ prober.Exec              = execSync{}
)

// Liveness is the liveness result of the container with bare runtime ID id, for kuberuntime.
func (p *probes) Liveness(id string) (kuberuntime.ProbeResult, bool) {
	return probeResult(p.liveness.Get(p.runtimeName + "://" + id))
}

// Startup is the startup result of the container with bare runtime ID id, for kuberuntime.
func (p *probes) Startup(id string) (kuberuntime.ProbeResult, bool) {
	return probeResult(p.startup.Get(p.runtimeName + "://" + id))
}

func probeResult(r prober.Result, ok bool) (kuberuntime.ProbeResult, bool) {
	switch r {
	case prober.Success:
		return kuberuntime.ProbeSuccess, ok
	case prober.Failure:
		return kuberuntime.ProbeFailure, ok
	}
	return kuberuntime.ProbeUnknown, ok
}

// execSync runs exec probes through CRI ExecSync.
type execSync struct {
	runtime runtimeapi.RuntimeServiceClient
}

func (e execSync) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, int32, error) {
	// The runtime ends the command after Timeout; the call itself may take a little longer.
	ctx, cancel := context.WithTimeout(ctx, timeout+2*time.Second)
	defer cancel()
	resp, err := e.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: int64(timeout / time.Second)})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = status.Error(codes.DeadlineExceeded, err.Error())
		}
		return nil, nil, 0, err
	}
	return resp.GetStdout(), resp.GetStderr(), resp.GetExitCode(), nil
}

// handleProbeUpdate is one probe case of syncLoopIteration: readiness and startup results go
// into the status (the status manager's SetContainerReadiness / SetContainerStartup), and the
// pod is synced so kuberuntime acts on a failure (upstream handleProbeSync).
func (k *Kubelet) handleProbeUpdate(ctx context.Context, kind prober.Kind, u prober.Update) {
	switch kind {
	case prober.Liveness:
		if u.Result != prober.Failure {
			return
		}
	case prober.Readiness:
		k.statusManager.SetContainerReadiness(u.PodUID, u.ContainerID, u.Result == prober.Success)
	case prober.Startup:
		k.statusManager.SetContainerStartup(u.PodUID, u.ContainerID, u.Result == prober.Success)
	}
	pod, ok := k.podManager.GetPodByUID(u.PodUID)
	klog.FromContext(ctx).V(4).Info("SyncLoop probe update", "probe", kind, "result", u.Result, "containerID", u.ContainerID, "pod", klog.KObj(pod))
	k.syncLoopJournal.Record(strings.ToLower(kind.String())+"Ch", journal.Pod(journalPod(pod, ok)), map[string]string{"result": u.Result.String(), "id": u.ContainerID})
	if ok {
		k.HandlePodSyncs([]*corev1.Pod{pod})
	}
}

// journalPod is pod for the journal, or no pod when the kubelet no longer knows it.
func journalPod(pod *corev1.Pod, ok bool) *corev1.Pod {
	if !ok {
		return nil
	}
	return pod
}
