package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/internal/journal"
)

func lab12Event(reason, message string) corev1.Event {
	return corev1.Event{Reason: reason, Message: message, Source: corev1.EventSource{Component: kubeletSource},
		FirstTimestamp: metav1.Now()}
}

// Lab 12, exercise 1 skipped or done out of order (the PV made first): no FailedMount about the
// unbound claim, so the check fails and says to do it in order; a claim not bound fails too.
func TestLab12SkippedWaitForClaim(t *testing.T) {
	if r := waitedForClaim("default/lab12-vol", nil); r.ok || !strings.Contains(r.fix, "do exercise 1 in order") {
		t.Errorf("no Events: %s", r)
	}
	other := lab12Event("FailedMount", `MountVolume.SetUp failed for volume "config" : configmap "lab12-config" not found`)
	if r := waitedForClaim("default/lab12-vol", []corev1.Event{other}); r.ok {
		t.Errorf("another FailedMount passed: %s", r)
	}
	unbound := lab12Event("FailedMount", "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/lab12-data: PVC is not bound")
	if r := waitedForClaim("default/lab12-vol", []corev1.Event{other, unbound}); !r.ok {
		t.Errorf("the unbound claim's Event: %s", r)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: lab12Claim}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	if r := claimBound(pvc); r.ok || !strings.Contains(r.fix, lab12ApplyPV) {
		t.Errorf("pending claim: %s", r)
	}
	pvc.Spec.VolumeName, pvc.Status.Phase = lab12PV, corev1.ClaimBound
	if r := claimBound(pvc); !r.ok {
		t.Errorf("bound claim: %s", r)
	}
}

// The journal must show each volume set up, of its type, for the current pod: a pod whose PVC
// volume was skipped (as before the volume manager) fails.
func TestLab12VolumesSetUp(t *testing.T) {
	setUp := func(uid, volume, typ string) journal.Event {
		return journal.Event{Source: journal.SourceVolume, Kind: "setUp", Pod: "default/lab12-vol", UID: uid, Fields: map[string]string{"volume": volume, "type": typ}}
	}
	events := []journal.Event{setUp("u2", "config", "configMap"), setUp("u2", "scratch", "emptyDir"), setUp("u1", "data", "persistentVolumeClaim → hostPath")}
	if r := volumesSetUp("default/lab12-vol", "u2", events); r.ok || !strings.Contains(r.what, "data (persistentVolumeClaim → hostPath)") {
		t.Errorf("data set up only for an earlier pod: %s", r)
	}
	events = append(events, setUp("u2", "data", "persistentVolumeClaim → hostPath"))
	if r := volumesSetUp("default/lab12-vol", "u2", events); !r.ok {
		t.Errorf("all set up: %s", r)
	}
}

// Exercise 2 skipped: the ConfigMap keeps its manifest's value; done but not synced yet: the
// file still shows the old one.
func TestLab12SkippedConfigUpdate(t *testing.T) {
	if r := configReached(lab12Original, execResult{stdout: lab12Original}); r.ok || !strings.Contains(r.fix, "do exercise 2") {
		t.Errorf("not updated: %s", r)
	}
	if r := configReached("color=green", execResult{stdout: lab12Original}); r.ok {
		t.Errorf("updated, not synced: %s", r)
	}
	if r := configReached("color=green", execResult{stdout: "color=green"}); !r.ok {
		t.Errorf("synced: %s", r)
	}
}

// Exercise 3 skipped: no pod; a pod whose container started (a kubelet that joined the paths)
// fails; the refusal needs upstream's message and its Event.
func TestLab12SkippedEscape(t *testing.T) {
	if r := escapeRefused("default/lab12-escape", nil, nil); r.ok || r.fix != lab12Exercise3 {
		t.Errorf("no pod: %s", r)
	}
	pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	if r := escapeRefused("default/lab12-escape", pod, nil); r.ok {
		t.Errorf("the escape ran: %s", r)
	}
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: lab12EscapeMessage}}
	if r := escapeRefused("default/lab12-escape", pod, nil); r.ok {
		t.Errorf("no Event: %s", r)
	}
	ev := lab12Event("Failed", "Error: "+lab12EscapeMessage)
	if r := escapeRefused("default/lab12-escape", pod, []corev1.Event{ev}); !r.ok {
		t.Errorf("refused: %s", r)
	}
}

// Exercise 4 skipped: the only pod is the current one, and the PV's log has one line.
func TestLab12SkippedDelete(t *testing.T) {
	ev := func(kind, pod, uid, volume string) journal.Event {
		return journal.Event{Source: journal.SourceVolume, Kind: kind, Pod: pod, UID: uid, Fields: map[string]string{"volume": volume}}
	}
	var events []journal.Event
	for name := range lab12Volumes {
		events = append(events, ev("setUp", "default/lab12-vol", "u1", name))
	}
	if r := tornDown("default/lab12-vol", "u1", events); r.ok || r.fix != lab12Exercise4 {
		t.Errorf("not deleted: %s", r)
	}
	for name := range lab12Volumes {
		if name != "data" {
			events = append(events, ev("tearDown", "default/lab12-vol", "u1", name))
		}
	}
	events = append(events, ev("tearDown", "default/lab12-vol", "u1", "kube-api-access-x"), journal.Event{Source: journal.SourceVolume, Kind: "removeOrphan", UID: "u1"})
	if r := tornDown("default/lab12-vol", "u2", events); r.ok {
		t.Errorf("data not torn down: %s", r)
	}
	events = append(events, ev("tearDown", "default/lab12-vol", "u1", "data"))
	if r := tornDown("default/lab12-vol", "u2", events); !r.ok {
		t.Errorf("torn down and removed: %s", r)
	}
	if r := dataKept("/pv/log", "started\n"); r.ok {
		t.Errorf("one life: %s", r)
	}
	if r := dataKept("/pv/log", "started\nstarted\n"); !r.ok {
		t.Errorf("two lives: %s", r)
	}
}
