package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// Housekeeping (HandlePodCleanups, upstream kubelet_pods.go) stops what no desired pod needs and
// removes what is left of pods that are gone, through the pod workers as upstream: it never stops
// a container itself.
func TestHousekeeping(t *testing.T) {
	tests := []struct {
		name string
		// before makes the situation housekeeping finds: pod runs in the runtime, and maybe
		// more (after tk.start, unless runtimeOnly).
		runtimeOnly bool
		pod         func(*corev1.Pod) // changes to the test pod
		before      func(t *testing.T, tk *testKubelet, pod *corev1.Pod)
		// desired: the pod is still desired; housekeeping must leave it alone.
		desired bool
	}{
		{
			// Orphaned by a kubelet restart: the runtime runs a pod nobody desires and no worker
			// knows. Housekeeping hands it to the pod workers as a SyncPodKill with its RunningPod
			// (SyncTerminatingRuntimePod); the next housekeeping removes the worker and the pod.
			name:        "an orphan in the runtime",
			runtimeOnly: true,
		},
		{
			name: "a pod removed from the API: stopped by its worker, then cleaned up",
			before: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				if err := tk.client.CoreV1().Pods(pod.Namespace).Delete(tk.ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
					t.Fatal(err)
				}
				tk.settle(t, "REMOVE and the worker to finish", func() bool {
					st, _ := tk.k.podWorkers.State(pod.UID)
					return st == podworkers.Finished
				})
			},
		},
		{
			// Succeeded, but still in the API: its worker is finished, yet its status and what the
			// runtime keeps of it stay until the pod is deleted.
			name:    "a finished pod still in the API keeps its status and sandbox",
			desired: true,
			pod: func(p *corev1.Pod) {
				p.Spec.RestartPolicy = corev1.RestartPolicyNever
				p.Spec.Containers[0].Command = []string{"sleep", "2"}
			},
			before: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				tk.settle(t, "the pod to succeed", func() bool {
					st, _ := tk.k.podWorkers.State(pod.UID)
					return st == podworkers.Finished && tk.apiPod(t, pod).Status.Phase == corev1.PodSucceeded
				})
			},
		},
		{
			name:    "a desired running pod is left alone",
			desired: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("web")
			if tc.pod != nil {
				tc.pod(pod)
			}
			tk := newTestKubelet(t)
			k := tk.k
			tk.waitFor(t, "the pod sources' first list", k.podSources.AllSourcesReady)
			if tc.runtimeOnly {
				status, err := k.containerRuntime.GetPodStatus(tk.ctx, pod.UID, pod.Name, pod.Namespace)
				if err != nil {
					t.Fatal(err)
				}
				if err := k.containerRuntime.SyncPod(tk.ctx, pod, status).Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				tk.start(t, pod)
			}
			if tc.before != nil {
				tk.advance(t, 2*time.Second) // `sleep 2` ends
				tc.before(t, tk, pod)
			}
			stateBefore, _ := k.podWorkers.State(pod.UID)
			container := tk.apiContainer(t, pod).ContainerID

			tk.housekeep(t)
			if tc.desired {
				tk.advance(t, 0)
				st, known := k.podWorkers.State(pod.UID)
				exists, _ := tk.runtimePod(t, pod.UID)
				_, hasStatus := k.statusManager.GetPodStatus(pod.UID)
				if !known || st != stateBefore || !exists || !hasStatus || tk.apiContainer(t, pod).ContainerID != container {
					t.Errorf("after housekeeping: worker %v (known %v, was %v), in the runtime %v, status %v, container %s (was %s); want all untouched",
						st, known, stateBefore, exists, hasStatus, tk.apiContainer(t, pod).ContainerID, container)
				}
				return
			}
			// What still ran is being stopped by a worker (the orphan's: a new one); once it has,
			// the next housekeeping removes the worker, the status and what the runtime kept.
			tk.settle(t, "the pod's worker to finish (or be gone)", func() bool {
				st, known := k.podWorkers.State(pod.UID)
				return !known || st == podworkers.Finished
			})
			if _, running := tk.runtimePod(t, pod.UID); running {
				t.Error("the worker finished, but the runtime still runs part of the pod")
			}
			tk.housekeep(t)
			if k.podWorkers.Count() != 0 {
				t.Errorf("after housekeeping %d workers, want none", k.podWorkers.Count())
			}
			if _, ok := k.statusManager.GetPodStatus(pod.UID); ok {
				t.Error("after housekeeping the status manager still has the pod's status")
			}
			if exists, _ := tk.runtimePod(t, pod.UID); exists {
				t.Error("after housekeeping the runtime still has the pod's sandbox or containers")
			}
		})
	}
}
