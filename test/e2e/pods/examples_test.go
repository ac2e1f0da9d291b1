package pods

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// docsExamples are manifests shaped like the Kubernetes docs' task pages (kubernetes.io/docs/
// tasks/…), pinned to the test's node (NODE). Each should behave on the fake runtime as its page
// says; docs/fake-runtime.md lists them, with those that cannot (init-demo downloads from the
// internet).
const docsExamples = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx-deployment}
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 2}
---
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  backoffLimit: 4
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      restartPolicy: Never
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          nodeSelector: {kubernetes.io/hostname: NODE}
          restartPolicy: OnFailure
          containers:
          - name: hello
            image: busybox:1.28
            imagePullPolicy: IfNotPresent
            command: ["/bin/sh", "-c", "date; echo Hello from the Kubernetes cluster"]
---
apiVersion: v1
kind: Pod
metadata: {name: counter}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: count
    image: busybox:1.28
    args: [/bin/sh, -c, 'i=0; while true; do echo "$i: $(date)"; i=$((i+1)); sleep 1; done']
---
apiVersion: v1
kind: Pod
metadata: {name: memory-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: memory-demo-ctr
    image: polinux/stress
    resources: {requests: {memory: 100Mi}, limits: {memory: 200Mi}}
    command: ["stress"]
    args: ["--vm", "1", "--vm-bytes", "150M", "--vm-hang", "1"]
---
apiVersion: v1
kind: Pod
metadata: {name: memory-demo-2}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: memory-demo-2-ctr
    image: polinux/stress
    resources: {requests: {memory: 50Mi}, limits: {memory: 100Mi}}
    command: ["stress"]
    args: ["--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"]
---
apiVersion: v1
kind: Pod
metadata: {name: cpu-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: cpu-demo-ctr
    image: vish/stress
    resources: {limits: {cpu: "1"}, requests: {cpu: "0.5"}}
    args: ["-cpus", "2"]
---
apiVersion: v1
kind: Pod
metadata: {name: liveness-http}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: liveness
    image: registry.k8s.io/e2e-test-images/agnhost:2.40
    args: [liveness]
    livenessProbe:
      httpGet: {path: /healthz, port: 8080, httpHeaders: [{name: Custom-Header, value: Awesome}]}
      initialDelaySeconds: 3
      periodSeconds: 3
---
apiVersion: v1
kind: Pod
metadata: {name: goproxy}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: goproxy
    image: registry.k8s.io/goproxy:0.1
    ports: [{containerPort: 8080}]
    readinessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 2, periodSeconds: 2}
    livenessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 2, periodSeconds: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: etcd-with-grpc}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.5.1-0
    command: ["/usr/local/bin/etcd", "--data-dir", "/var/lib/etcd", "--listen-client-urls", "http://0.0.0.0:2379", "--advertise-client-urls", "http://127.0.0.1:2379", "--log-level", "debug"]
    ports: [{containerPort: 2379}]
    livenessProbe: {grpc: {port: 2379}, initialDelaySeconds: 2, periodSeconds: 2}
    readinessProbe: {grpc: {port: 2379}, periodSeconds: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: redis}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: redis
    image: redis
    ports: [{containerPort: 6379}]
    readinessProbe: {tcpSocket: {port: 6379}, periodSeconds: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: loops}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  restartPolicy: Never
  containers:
  - name: loops
    image: busybox:1.36
    command: ["sh", "-c"]
    args:
    - |
      n=3
      until [ $n -eq 0 ]; do
        if [ $((n % 2)) -eq 1 ]; then echo "$n is odd"; else echo "$n is even"; fi
        n=$((n - 1))
      done
      for w in a b; do echo "word $w"; done
---
apiVersion: v1
kind: Pod
metadata: {name: unknown}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: app
    image: example.com/app:1
    command: ["myapp", "--serve"]
---
apiVersion: v1
kind: Pod
metadata: {name: init-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  initContainers:
  - name: install
    image: busybox:1.28
    command: [wget, "-O", "/work-dir/index.html", "http://info.cern.ch"]
    volumeMounts: [{name: workdir, mountPath: /work-dir}]
  containers:
  - name: nginx
    image: nginx
    ports: [{containerPort: 80}]
    volumeMounts: [{name: workdir, mountPath: /usr/share/nginx/html}]
  volumes: [{name: workdir, emptyDir: {}}]
`

// TestDocsExamples applies the docs' task-page examples and checks that each behaves as its page
// says: the nginx Deployment becomes 3/3 Ready and serves its welcome page, the pi Job completes
// with the digits in its log, the hello CronJob's job logs the date and Hello, the counter pod
// counts, memory-demo runs and memory-demo-2 is OOMKilled, cpu-demo runs, the liveness pages' pods
// (agnhost liveness, goproxy, etcd's grpc) are probed as their page says, redis answers PONG, a shell loop runs,
// an unknown command says it is not modelled, and init-demo fails offline as it must.
func TestDocsExamples(t *testing.T) {
	n := startNode(t, "e2e-pods-examples")
	ns := namespace(t)
	if out, code := kubectl(t, strings.ReplaceAll(docsExamples, "NODE", n.name), "-n", ns, "apply", "-f", "-"); code != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s", code, out)
	}
	t.Run("nginx Deployment is 3/3 Ready and serves nginx's page", func(t *testing.T) { checkNginx(t, ns) })
	t.Run("pi Job completes with 2000 digits", func(t *testing.T) { checkPi(t, ns) })
	t.Run("counter pod counts", func(t *testing.T) { checkCounter(t, ns) })
	t.Run("memory-demo runs, memory-demo-2 is OOMKilled", func(t *testing.T) { checkMemoryDemos(t, ns) })
	t.Run("cpu-demo runs two CPU hogs", func(t *testing.T) {
		waitPhase(t, ns, "cpu-demo", corev1.PodRunning)
		wantLog(t, ns, "cpu-demo", "", "stress: info: [1] dispatching hogs: 2 cpu, 0 io, 0 vm, 0 hdd\n")
	})
	t.Run("goproxy and etcd become Ready on their tcpSocket and grpc probes", func(t *testing.T) {
		for _, name := range []string{"goproxy", "etcd-with-grpc"} {
			framework.Eventually(t, time.Minute, name+" Ready", func() (bool, string) {
				pod := getPod(t, ns, name)
				return isReady(pod), describe(pod)
			})
		}
	})
	t.Run("liveness-http is restarted once /healthz fails", func(t *testing.T) {
		framework.Eventually(t, 2*time.Minute, "liveness-http restarted", func() (bool, string) {
			pod := getPod(t, ns, "liveness-http")
			return len(pod.Status.ContainerStatuses) == 1 && pod.Status.ContainerStatuses[0].RestartCount > 0, describe(pod)
		})
	})
	t.Run("redis answers PING", func(t *testing.T) { checkRedis(t, ns) })
	t.Run("a shell loop pod succeeds", func(t *testing.T) {
		waitPhase(t, ns, "loops", corev1.PodSucceeded)
		wantLog(t, ns, "loops", "", "3 is odd\n2 is even\n1 is odd\nword a\nword b\n")
	})
	t.Run("an unknown command says it is not modelled", func(t *testing.T) {
		waitPhase(t, ns, "unknown", corev1.PodRunning)
		wantLog(t, ns, "unknown", "", `minikubelet fake runtime: "myapp" is not modelled; this container runs until stopped (what is modelled: docs/fake-runtime.md)`+"\n")
	})
	t.Run("init-demo cannot download offline", func(t *testing.T) { checkInitDemo(t, ns) })
	t.Run("hello CronJob's job logs the date and Hello", func(t *testing.T) { checkHello(t, ns) })
}

func podLog(ns, pod, container string) (string, error) {
	data, err := cluster.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(context.Background())
	return string(data), err
}

// wantLog waits until the container's log is want.
func wantLog(t *testing.T, ns, pod, container, want string) {
	t.Helper()
	framework.Eventually(t, time.Minute, pod+"'s log", func() (bool, string) {
		log, err := podLog(ns, pod, container)
		return err == nil && log == want, fmt.Sprintf("log %q (%v), want %q", log, err, want)
	})
}

func waitPhase(t *testing.T, ns, name string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	framework.Eventually(t, 2*time.Minute, name+" "+string(phase), func() (bool, string) {
		pod = getPod(t, ns, name)
		return pod.Status.Phase == phase, describe(pod)
	})
	return pod
}

func checkNginx(t *testing.T, ns string) {
	ctx := context.Background()
	framework.Eventually(t, 2*time.Minute, "nginx-deployment 3/3 ready", func() (bool, string) {
		d, err := cluster.Client.AppsV1().Deployments(ns).Get(ctx, "nginx-deployment", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 3, fmt.Sprintf("%d/3 ready", d.Status.ReadyReplicas)
	})
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("nginx pods: %v", err)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + pods.Items[0].Status.PodIP + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<title>Welcome to nginx!</title>") {
		t.Errorf("GET the pod IP: %d %q, want 200 with nginx's welcome page", resp.StatusCode, body)
	}
}

func checkPi(t *testing.T, ns string) {
	ctx := context.Background()
	framework.Eventually(t, 2*time.Minute, "job pi complete", func() (bool, string) {
		j, err := cluster.Client.BatchV1().Jobs(ns).Get(ctx, "pi", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return j.Status.Succeeded == 1, fmt.Sprintf("succeeded %d, failed %d, active %d", j.Status.Succeeded, j.Status.Failed, j.Status.Active)
	})
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=pi"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pi's pods: %v (%d)", err, len(pods.Items))
	}
	log, err := podLog(ns, pods.Items[0].Name, "")
	if err != nil || len(log) != 2002 || !strings.HasPrefix(log, "3.14159265358979323846264338327950288419716939937510") {
		t.Errorf("pi's log (%v): %d bytes, starting %.60q; want 3.14159… with 2000 digits", err, len(log), log)
	}
}

// busyboxDate is busybox date's default format.
const busyboxDate = `[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d UTC \d{4}`

func checkCounter(t *testing.T, ns string) {
	line := regexp.MustCompile(`^(\d+): ` + busyboxDate + `$`)
	framework.Eventually(t, time.Minute, "counter logs 0:, 1:, 2:", func() (bool, string) {
		log, err := podLog(ns, "counter", "")
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if err != nil || len(lines) < 3 {
			return false, fmt.Sprintf("log %q (%v)", log, err)
		}
		for i, l := range lines[:3] {
			if m := line.FindStringSubmatch(l); m == nil || m[1] != fmt.Sprint(i) {
				return false, fmt.Sprintf("line %d is %q, want %q", i, l, fmt.Sprint(i)+": <date>")
			}
		}
		return true, ""
	})
}

func checkMemoryDemos(t *testing.T, ns string) {
	waitPhase(t, ns, "memory-demo", corev1.PodRunning)
	framework.Eventually(t, 2*time.Minute, "memory-demo-2 OOMKilled", func() (bool, string) {
		pod := getPod(t, ns, "memory-demo-2")
		for _, cs := range pod.Status.ContainerStatuses {
			for _, term := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
				if term != nil && term.Reason == "OOMKilled" && term.ExitCode == 137 {
					return true, ""
				}
			}
		}
		return false, describe(pod)
	})
	if pod := getPod(t, ns, "memory-demo"); pod.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("memory-demo restarted: %s", describe(pod))
	}
}

func checkRedis(t *testing.T, ns string) {
	pod := waitPhase(t, ns, "redis", corev1.PodRunning)
	framework.Eventually(t, time.Minute, "redis Ready", func() (bool, string) {
		pod = getPod(t, ns, "redis")
		return isReady(pod), describe(pod)
	})
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(pod.Status.PodIP, "6379"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	if reply, err := bufio.NewReader(conn).ReadString('\n'); reply != "+PONG\r\n" {
		t.Errorf("PING: %q (%v), want +PONG", reply, err)
	}
}

func checkInitDemo(t *testing.T, ns string) {
	framework.Eventually(t, 2*time.Minute, "init-demo's init container failed", func() (bool, string) {
		pod := getPod(t, ns, "init-demo")
		for _, cs := range pod.Status.InitContainerStatuses {
			for _, term := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
				if term != nil && term.ExitCode == 1 {
					return pod.Status.Phase == corev1.PodPending, describe(pod)
				}
			}
		}
		return false, describe(pod)
	})
	log, err := podLog(ns, "init-demo", "install")
	if err != nil || !strings.Contains(log, "wget: bad address 'info.cern.ch'") {
		t.Errorf("install's log %q (%v), want wget's bad address", log, err)
	}
}

func checkHello(t *testing.T, ns string) {
	want := regexp.MustCompile(`^` + busyboxDate + "\nHello from the Kubernetes cluster\n$")
	framework.Eventually(t, 3*time.Minute, "a hello job's pod logs the date and Hello", func() (bool, string) {
		pods, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		seen := "no hello pod yet"
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.Name, "hello-") || p.Status.Phase != corev1.PodSucceeded {
				continue
			}
			log, err := podLog(ns, p.Name, "")
			if err == nil && want.MatchString(log) {
				return true, ""
			}
			seen = fmt.Sprintf("%s: log %q (%v)", p.Name, log, err)
		}
		return false, seen
	})
}
