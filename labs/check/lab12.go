package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Lab 12: a pod with a configMap, an emptyDir and a claim created before its PV (it waits with
// FailedMount, then runs); the ConfigMap updated; a subPath through a symlink to / refused; the
// pod deleted and created again (its volumes torn down, its directory removed, the PV's data
// kept). The checks read the API objects and Events, the pod's files through exec, the
// kubelet's journal (source volume) and the PV's directory on the node.
const (
	lab12Pod       = "lab12-vol"
	lab12Escape    = "lab12-escape"
	lab12Config    = "lab12-config"
	lab12Claim     = "lab12-data"
	lab12PV        = "lab12-pv"
	lab12Original  = "color=blue"
	lab12Apply     = "kubectl apply -f labs/12-volume-manager/lab12.yaml"
	lab12ApplyPod  = `sed "s/NODE_NAME/$NODE/" labs/12-volume-manager/pod.yaml | kubectl apply -f -`
	lab12ApplyPV   = "kubectl apply -f labs/12-volume-manager/lab12-pv.yaml"
	lab12Update    = `kubectl patch configmap lab12-config -p '{"data":{"app.conf":"color=green"}}'`
	lab12Exercise3 = "do exercise 3: kubectl apply -f labs/12-volume-manager/escape.yaml"
	lab12Exercise4 = "do exercise 4: kubectl delete pod lab12-vol, then " + lab12ApplyPod
	// lab12EscapeMessage is upstream's CreateContainerConfigError message for the escape.
	lab12EscapeMessage = `failed to prepare subPath for volumeMount "work" of container "app"`
)

// lab12Volumes are the pod's volumes, each with the type the journal records for it.
var lab12Volumes = map[string]string{"config": "configMap", "scratch": "emptyDir", "data": "persistentVolumeClaim → hostPath"}

func lab12() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		{name: "pod lab12-vol waited for its claim", run: func(ctx context.Context, e *env) result {
			events, err := e.eventsNamed(ctx, lab12Pod)
			if err != nil {
				return missing("Events of "+e.podRef(lab12Pod)+": "+err.Error(), "see the error")
			}
			return waitedForClaim(e.podRef(lab12Pod), events)
		}},
		{name: "claim lab12-data is bound to lab12-pv", run: func(ctx context.Context, e *env) result {
			pvc, err := e.client.CoreV1().PersistentVolumeClaims(e.cfg.namespace).Get(ctx, lab12Claim, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return missing("claim "+e.cfg.namespace+"/"+lab12Claim+" does not exist", "do exercise 1: "+lab12Apply)
			}
			if err != nil {
				return missing("claim "+lab12Claim+": "+err.Error(), "see the error")
			}
			return claimBound(pvc)
		}},
		podRunning(lab12Pod, lab12ApplyPod),
		{name: "the journal shows lab12-vol's volumes set up", needs: []string{podRuns(lab12Pod)}, run: func(ctx context.Context, e *env) result {
			pod, events, err := e.podAndJournal(ctx)
			if err != nil {
				return missing(err.Error(), "see the error")
			}
			return volumesSetUp(e.podRef(lab12Pod), pod.UID, events)
		}},
		{name: "the ConfigMap's update reached the whole volume", needs: []string{podRuns(lab12Pod)}, run: func(ctx context.Context, e *env) result {
			cm, err := e.client.CoreV1().ConfigMaps(e.cfg.namespace).Get(ctx, lab12Config, metav1.GetOptions{})
			if err != nil {
				return missing("ConfigMap "+lab12Config+": "+err.Error(), "do exercise 1: "+lab12Apply)
			}
			value := cm.Data["app.conf"]
			return configReached(value, e.exec(ctx, lab12Pod, nil, "cat", "/etc/config/app.conf"))
		}},
		{name: "the subPath escape of lab12-escape was refused", run: func(ctx context.Context, e *env) result {
			pod, err := e.pod(ctx, lab12Escape)
			if err != nil {
				return missing("pod "+e.podRef(lab12Escape)+": "+err.Error(), "see the error")
			}
			var events []corev1.Event
			if pod != nil {
				if events, err = e.podEvents(ctx, pod); err != nil {
					return missing("Events of "+e.podRef(lab12Escape)+": "+err.Error(), "see the error")
				}
			}
			return escapeRefused(e.podRef(lab12Escape), pod, events)
		}},
		{name: "an earlier lab12-vol was torn down and its directory removed", needs: []string{podRuns(lab12Pod)}, run: func(ctx context.Context, e *env) result {
			pod, events, err := e.podAndJournal(ctx)
			if err != nil {
				return missing(err.Error(), "see the error")
			}
			return tornDown(e.podRef(lab12Pod), pod.UID, events)
		}},
		{name: "the PV's data outlived the pod", needs: []string{"claim lab12-data is bound to lab12-pv"}, run: func(ctx context.Context, e *env) result {
			pv, err := e.client.CoreV1().PersistentVolumes().Get(ctx, lab12PV, metav1.GetOptions{})
			if err != nil || pv.Spec.HostPath == nil {
				return missing(fmt.Sprintf("PersistentVolume %s with a hostPath: %v", lab12PV, err), "do exercise 1: "+lab12ApplyPV)
			}
			log := filepath.Join(pv.Spec.HostPath.Path, "log")
			data, err := os.ReadFile(log)
			if err != nil && !os.IsNotExist(err) {
				return missing(log+": "+err.Error(), "see the error")
			}
			return dataKept(log, string(data))
		}},
	}
}

// eventsNamed are the Events about every pod of this name, whatever its UID (the first
// lab12-vol is deleted in exercise 4).
func (e *env) eventsNamed(ctx context.Context, name string) ([]corev1.Event, error) {
	list, err := e.client.CoreV1().Events(e.cfg.namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + name,
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// podAndJournal reads lab12-vol and the journal's volume events (all pods: a removed directory
// names only a UID).
func (e *env) podAndJournal(ctx context.Context) (*corev1.Pod, []journal.Event, error) {
	pod, err := e.pod(ctx, lab12Pod)
	if err != nil || pod == nil {
		return nil, nil, fmt.Errorf("pod %s: %v", e.podRef(lab12Pod), err)
	}
	body, err := e.kubeletGet(ctx, journal.Path+"?source="+journal.SourceVolume)
	if err != nil {
		return nil, nil, fmt.Errorf("the kubelet's journal: %w", err)
	}
	page, err := decodePage(body)
	return pod, page, err
}

// waitedForClaim: the kubelet reported the unbound claim in a FailedMount Event. Pure.
func waitedForClaim(ref string, events []corev1.Event) result {
	for _, ev := range kubeletEvents(events, "FailedMount", "PVC is not bound") {
		return passed("FailedMount on %s at %s: %s", ref, firstTime(&ev).UTC().Format("15:04:05"), ev.Message)
	}
	return missing("no FailedMount Event on "+ref+" says its claim was not bound",
		"do exercise 1 in order: delete the pod, the claim and the PV if you made them, "+lab12Apply+", "+lab12ApplyPod+", read `kubectl describe pod lab12-vol`, then "+lab12ApplyPV)
}

// claimBound: the claim is Bound to the lab's PV. Pure.
func claimBound(pvc *corev1.PersistentVolumeClaim) result {
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName != lab12PV {
		return missing(fmt.Sprintf("claim %s is %s (volume %q)", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName),
			"create the PV the claim waits for: "+lab12ApplyPV)
	}
	return passed("claim %s is Bound to %s", pvc.Name, pvc.Spec.VolumeName)
}

// volumesSetUp: the journal holds a setUp of each of the pod's volumes, of its type, for this
// UID. Pure.
func volumesSetUp(ref string, uid types.UID, events []journal.Event) result {
	seen := map[string]string{}
	for _, ev := range events {
		if ev.Kind == "setUp" && ev.UID == string(uid) {
			seen[ev.Fields["volume"]] = ev.Fields["type"]
		}
	}
	var lacking []string
	for name, typ := range lab12Volumes {
		if seen[name] != typ {
			lacking = append(lacking, name+" ("+typ+")")
		}
	}
	if len(lacking) > 0 {
		slices.Sort(lacking)
		return missing(fmt.Sprintf("the kubelet's journal shows no setUp of %s for %s (uid %s)", strings.Join(lacking, ", "), ref, uid),
			"was minikubelet restarted since the pod started? delete the pod and "+lab12ApplyPod)
	}
	return passed("setUp of config (configMap), scratch (emptyDir), data (persistentVolumeClaim → hostPath) for %s", ref)
}

// configReached: the ConfigMap was changed, and the whole volume shows the change. Pure.
func configReached(value string, res execResult) result {
	if value == lab12Original {
		return missing("ConfigMap "+lab12Config+" still has app.conf="+lab12Original, "do exercise 2: "+lab12Update)
	}
	got := strings.TrimSuffix(res.stdout, "\n")
	if res.err != nil || res.exitCode != 0 {
		return missing(fmt.Sprintf("cat /etc/config/app.conf in %s failed: exit %d, %v %s", lab12Pod, res.exitCode, res.err, strings.TrimSpace(res.stderr)),
			"is the pod created from labs/12-volume-manager/pod.yaml?")
	}
	if got != value {
		return missing(fmt.Sprintf("/etc/config/app.conf shows %q, the ConfigMap has %q", got, value), "wait for the pod's next sync (up to a minute) and run the check again")
	}
	return passed("kubectl exec %s -- cat /etc/config/app.conf → %q, as in the ConfigMap (app.conf was %q)", lab12Pod, got, lab12Original)
}

// escapeRefused: the escape pod's container waits with upstream's error, and a Failed Event says
// it. Pure.
func escapeRefused(ref string, pod *corev1.Pod, events []corev1.Event) result {
	if pod == nil {
		return missing("pod "+ref+" does not exist", lab12Exercise3)
	}
	var waiting string
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			waiting = w.Reason + ": " + w.Message
		}
	}
	if waiting != "CreateContainerConfigError: "+lab12EscapeMessage {
		return missing(fmt.Sprintf("container app of %s is not refused with CreateContainerConfigError (%q)", ref, waiting),
			"wait for its init container to make the link; `kubectl describe pod "+lab12Escape+"`")
	}
	for _, ev := range kubeletEvents(events, "Failed", lab12EscapeMessage) {
		return passed("%s refused: %s", ref, ev.Message)
	}
	return missing("no Failed Event on "+ref+" says why", "wait a few seconds and run the check again")
}

// tornDown: an earlier pod of this name (another UID) had all its volumes torn down, then its
// directory removed. Pure.
func tornDown(ref string, current types.UID, events []journal.Event) result {
	down := map[string]map[string]bool{}
	for _, ev := range events {
		if ev.Kind == "tearDown" && ev.Pod == ref && ev.UID != string(current) {
			if down[ev.UID] == nil {
				down[ev.UID] = map[string]bool{}
			}
			down[ev.UID][ev.Fields["volume"]] = true
		}
	}
	for _, ev := range events {
		uid := ev.UID
		if ev.Kind != "removeOrphan" || ev.Fields["error"] != "" || !allTornDown(down[uid]) {
			continue
		}
		return passed("%s (uid %s): tearDown of %d volumes, then its directory removed (journal seq %d)", ref, uid, len(down[uid]), ev.Seq)
	}
	return missing(fmt.Sprintf("the kubelet's journal shows no earlier %s torn down and removed since minikubelet started (%d earlier pod(s) with a tearDown)", ref, len(down)),
		lab12Exercise4)
}

// allTornDown: each of the lab's volumes is in down (the pod's service account token, too, but
// the lab does not name it).
func allTornDown(down map[string]bool) bool {
	for name := range lab12Volumes {
		if !down[name] {
			return false
		}
	}
	return true
}

// dataKept: the PV's log has a line from each life of the pod (two at least). Pure.
func dataKept(path, content string) result {
	lines := strings.Count(content, "started\n")
	if lines < 2 {
		return missing(fmt.Sprintf("%s has %d line(s) \"started\": one per pod that ran on the PV", path, lines), lab12Exercise4)
	}
	return passed("%s has %d lines \"started\": the data outlived the pod", path, lines)
}
