package kubelet

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/podsource"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// takeUpdate hands configCh's updates to the syncLoop, one turn each, until one of op for pod has
// been handled (the status manager's own writes come back as RECONCILEs meanwhile).
func (tk *testKubelet) takeUpdate(t *testing.T, op podsource.Op, pod *corev1.Pod) {
	t.Helper()
	tk.waitFor(t, "configCh "+op.String()+" of "+pod.Name, func() bool {
		select {
		case u := <-tk.k.podSources.Updates():
			one := make(chan podsource.PodUpdate, 1)
			one <- u
			for len(one) > 0 { // a turn may take a probe result instead
				tk.k.syncLoopIteration(tk.ctx, one, nil, nil, nil)
			}
			return u.Op == op && slices.ContainsFunc(u.Pods, func(p *corev1.Pod) bool { return p.UID == pod.UID })
		default:
			return false
		}
	})
}

// start creates the pod in the API and lets the Kubelet run it.
func (tk *testKubelet) start(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if _, err := tk.client.CoreV1().Pods(pod.Namespace).Create(tk.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tk.takeUpdate(t, podsource.ADD, pod)
	tk.settle(t, "the pod to run", func() bool {
		p := tk.apiPod(t, pod)
		return p.Status.Phase == corev1.PodRunning && tk.apiContainer(t, pod).State.Running != nil
	})
}

// stopped waits until the pod's worker has finished it and nothing of it runs.
func (tk *testKubelet) stopped(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	tk.settle(t, "the worker to finish the pod", func() bool {
		st, _ := tk.k.podWorkers.State(pod.UID)
		return st == podworkers.Finished
	})
	if _, running := tk.runtimePod(t, pod.UID); running {
		t.Error("the worker finished the pod, but the runtime still runs part of it")
	}
}

// What the API server does to a pod reaches the syncLoop as one configCh operation, and its
// handler (HandlePodAdditions, HandlePodUpdates, HandlePodRemoves, HandlePodReconcile) does what
// upstream's does with it.
func TestPodHandlers(t *testing.T) {
	const gate = "example.com/load-balancer"
	tests := []struct {
		name    string
		pod     func(*corev1.Pod) // changes to the test pod
		running bool              // started before act
		act     func(t *testing.T, tk *testKubelet, pod *corev1.Pod)
		op      podsource.Op
		check   func(t *testing.T, tk *testKubelet, pod *corev1.Pod)
	}{
		{
			name: "ADD: admitted, a worker starts it",
			act:  createPod,
			op:   podsource.ADD,
			check: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				if st, ok := tk.k.podWorkers.State(pod.UID); !ok || st != podworkers.Syncing {
					t.Fatalf("worker %v (known %v), want syncing", st, ok)
				}
				tk.settle(t, "the container to run", func() bool { _, running := tk.runtimePod(t, pod.UID); return running })
			},
		},
		{
			name: "ADD: rejected by admission, Failed, no worker",
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
			},
			act: createPod,
			op:  podsource.ADD,
			check: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				if _, ok := tk.k.podWorkers.State(pod.UID); ok {
					t.Error("a rejected pod has a worker")
				}
				tk.settle(t, "the API to say Failed", func() bool { return tk.apiPod(t, pod).Status.Phase == corev1.PodFailed })
				if got := tk.apiPod(t, pod).Status.Reason; got != "OutOfcpu" || !tk.hasEvent("OutOfcpu") {
					t.Errorf("status reason %q (Events %q), want OutOfcpu and its Event", got, tk.events())
				}
				if exists, _ := tk.runtimePod(t, pod.UID); exists {
					t.Error("the runtime has a sandbox of a rejected pod")
				}
			},
		},
		{
			name:    "UPDATE: a new label reaches the pod manager; the container goes on",
			running: true,
			act: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				p := tk.apiPod(t, pod)
				p.Labels = map[string]string{"tier": "web"}
				if _, err := tk.client.CoreV1().Pods(p.Namespace).Update(tk.ctx, p, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			op: podsource.UPDATE,
			check: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				before := tk.apiContainer(t, pod).ContainerID
				if p, _ := tk.k.podManager.GetPodByUID(pod.UID); p == nil || p.Labels["tier"] != "web" {
					t.Errorf("the pod manager has %v, want the label tier=web", p)
				}
				tk.advance(t, 0)
				if st, _ := tk.k.podWorkers.State(pod.UID); st != podworkers.Syncing || tk.apiContainer(t, pod).ContainerID != before {
					t.Errorf("after a label change: worker %v, container %s (was %s); want syncing, the same", st, tk.apiContainer(t, pod).ContainerID, before)
				}
			},
		},
		{
			name:    "DELETE: the graceful deletion stops it",
			running: true,
			act: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				p := tk.apiPod(t, pod)
				p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &metav1.Time{Time: tk.clock.Now()}, ptr.To[int64](5)
				if _, err := tk.client.CoreV1().Pods(p.Namespace).Update(tk.ctx, p, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			op:    podsource.DELETE,
			check: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) { tk.stopped(t, pod) },
		},
		{
			name:    "REMOVE: gone from the API at once (force delete): stopped and forgotten",
			running: true,
			act: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				if err := tk.client.CoreV1().Pods(pod.Namespace).Delete(tk.ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
					t.Fatal(err)
				}
			},
			op: podsource.REMOVE,
			check: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				if _, ok := tk.k.podManager.GetPodByUID(pod.UID); ok {
					t.Error("after REMOVE the pod manager still has the pod")
				}
				tk.stopped(t, pod)
			},
		},
		{
			name:    "RECONCILE: a readiness gate someone else set True makes the pod Ready",
			pod:     func(p *corev1.Pod) { p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}} },
			running: true,
			act: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				if podIsReady(tk.apiPod(t, pod)) {
					t.Fatal("Ready before its readiness gate is True")
				}
				p := tk.apiPod(t, pod)
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: gate, Status: corev1.ConditionTrue})
				if _, err := tk.client.CoreV1().Pods(p.Namespace).UpdateStatus(tk.ctx, p, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			op: podsource.RECONCILE,
			check: func(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
				tk.settle(t, "Ready to follow the gate", func() bool { return podIsReady(tk.apiPod(t, pod)) })
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("web")
			if tc.pod != nil {
				tc.pod(pod)
			}
			tk := newTestKubelet(t)
			tk.waitFor(t, "the pod sources' first list", tk.k.podSources.AllSourcesReady)
			if tc.running {
				tk.start(t, pod)
			}
			tc.act(t, tk, pod)
			tk.takeUpdate(t, tc.op, pod)
			tc.check(t, tk, pod)
		})
	}
}

func createPod(t *testing.T, tk *testKubelet, pod *corev1.Pod) {
	t.Helper()
	if _, err := tk.client.CoreV1().Pods(pod.Namespace).Create(tk.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
