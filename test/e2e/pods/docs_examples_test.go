package pods

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// The docs' examples, in the shape of kubernetes/website's content/en/examples (names kept
// unless two examples share one), each pinned to the test's node with a nodeSelector (the
// scheduling examples use their own rule). Differences from the docs' files: objects that
// several pages name alike are renamed (special-config-multikeys, nginx-ssd, dapi-test-pod-*,
// redis-storage); the DaemonSet does not mount the host's /var/log; the StatefulSet has no
// volumeClaimTemplates; shell-demo has no hostNetwork (it would take the host's port 80).

const (
	pending = corev1.PodPending
	running = corev1.PodRunning
	done    = corev1.PodSucceeded
)

// docsExamples lists the examples with what their pages say to observe.
func docsExamples() []docsExample {
	return slices.Concat(workloadExamples, moreWorkloadExamples, probeExamples, initExamples, envExamples, configExamples,
		volumeExamples, resourceExamples, securityExamples, podExamples, schedulingExamples, ownExamples)
}

// workloadExamples: Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs.
var workloadExamples = []docsExample{
	{name: "nginx-deployment", page: "concepts/workloads/controllers/deployment", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx-deployment, labels: {app: nginx}}
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
        readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 2}`,
		expect: []expect{workloadReady("deployment", "nginx-deployment", 3), servesHTTP("app=nginx", 80, "<title>Welcome to nginx!</title>")}},
	{name: "my-nginx", page: "tutorials/services/connect-applications-service", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: my-nginx}
spec:
  selector: {matchLabels: {run: my-nginx}}
  replicas: 2
  template:
    metadata: {labels: {run: my-nginx}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: my-nginx
        image: nginx
        ports: [{containerPort: 80}]`,
		expect: []expect{workloadReady("deployment", "my-nginx", 2), servesHTTP("run=my-nginx", 80, "Welcome to nginx!")}},
	{name: "frontend", page: "concepts/workloads/controllers/replicaset", yaml: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: frontend, labels: {app: guestbook, tier: frontend}}
spec:
  replicas: 3
  selector: {matchLabels: {tier: frontend}}
  template:
    metadata: {labels: {tier: frontend}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: php-redis
        image: us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5`,
		expect: []expect{workloadReady("replicaset", "frontend", 3)}},
	{name: "nginx-rc", page: "concepts/workloads/controllers/replicationcontroller", yaml: `
apiVersion: v1
kind: ReplicationController
metadata: {name: nginx}
spec:
  replicas: 3
  selector: {app: nginx-rc}
  template:
    metadata: {name: nginx, labels: {app: nginx-rc}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: nginx
        image: nginx
        ports: [{containerPort: 80}]`,
		expect: []expect{workloadReady("replicationcontroller", "nginx", 3)}},
	{name: "redis-leader", page: "tutorials/stateless-application/guestbook", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: redis-leader, labels: {app: redis, role: leader, tier: backend}}
spec:
  replicas: 1
  selector: {matchLabels: {app: redis}}
  template:
    metadata: {labels: {app: redis, role: leader, tier: backend}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: leader
        image: docker.io/redis:6.0.5
        resources: {requests: {cpu: 100m, memory: 100Mi}}
        ports: [{containerPort: 6379}]`,
		expect: []expect{workloadReady("deployment", "redis-leader", 1), answersPing("app=redis,role=leader")}},
	{name: "php-apache", page: "tasks/run-application/horizontal-pod-autoscale-walkthrough", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: php-apache}
spec:
  selector: {matchLabels: {run: php-apache}}
  template:
    metadata: {labels: {run: php-apache}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: php-apache
        image: registry.k8s.io/hpa-example
        ports: [{containerPort: 80}]
        resources: {limits: {cpu: 500m}, requests: {cpu: 200m}}`,
		expect: []expect{workloadReady("deployment", "php-apache", 1)}},
	{name: "web", page: "tutorials/stateful-application/basic-stateful-set", yaml: `
apiVersion: v1
kind: Service
metadata: {name: nginx, labels: {app: nginx-sts}}
spec:
  ports: [{port: 80, name: web}]
  clusterIP: None
  selector: {app: nginx-sts}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: nginx
  replicas: 2
  selector: {matchLabels: {app: nginx-sts}}
  template:
    metadata: {labels: {app: nginx-sts}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: nginx
        image: registry.k8s.io/nginx-slim:0.24
        ports: [{containerPort: 80, name: web}]`,
		expect: []expect{workloadReady("statefulset", "web", 2), execHas("web-0", "", "^web-0\n$", "sh", "-c", "hostname"),
			execHas("web-1", "", "^web-1\n$", "sh", "-c", "hostname")}},
	{name: "fluentd-elasticsearch", page: "concepts/workloads/controllers/daemonset", yaml: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: fluentd-elasticsearch, labels: {k8s-app: fluentd-logging}}
spec:
  selector: {matchLabels: {name: fluentd-elasticsearch}}
  template:
    metadata: {labels: {name: fluentd-elasticsearch}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      tolerations:
      - {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}
      - {key: node-role.kubernetes.io/master, operator: Exists, effect: NoSchedule}
      containers:
      - name: fluentd-elasticsearch
        image: quay.io/fluentd_elasticsearch/fluentd:v5.0.1
        resources: {limits: {memory: 200Mi}, requests: {cpu: 100m, memory: 200Mi}}
      terminationGracePeriodSeconds: 30`,
		expect: []expect{workloadReady("daemonset", "fluentd-elasticsearch", 1)}},
	{name: "pi", page: "concepts/workloads/controllers/job", yaml: `
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
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]`,
		expect: []expect{jobCondition("pi", "Complete", ""), logHas("job-name=pi", "", `^3\.14159265358979323846264338327950288419716939937510\d{1000}\d{949}\n$`)}},
	{name: "process-item", page: "tasks/job/parallel-processing-expansion", yaml: jobTmpl("apple") + "\n---\n" + jobTmpl("banana") + "\n---\n" + jobTmpl("cherry"),
		expect: []expect{jobCondition("process-item-apple", "Complete", ""), jobCondition("process-item-banana", "Complete", ""),
			jobCondition("process-item-cherry", "Complete", ""), logHas("job-name=process-item-cherry", "", "^Processing item cherry\n$")}},
	{name: "indexed-job", page: "tasks/job/indexed-parallel-processing-static", yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: indexed-job}
spec:
  completions: 5
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      restartPolicy: Never
      containers:
      - name: worker
        image: docker.io/library/busybox
        command: [rev, /input/data.txt]
        volumeMounts: [{mountPath: /input, name: input}]
      volumes:
      - name: input
        downwardAPI:
          items:
          - path: data.txt
            fieldRef: {fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}`,
		expect: []expect{jobCondition("indexed-job", "Complete", ""), logHas("job-name=indexed-job,batch.kubernetes.io/job-completion-index=3", "", "^3\n$")}},
	{name: "job-pod-failure-policy-example", page: "tasks/job/pod-failure-policy", yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: job-pod-failure-policy-example}
spec:
  completions: 12
  parallelism: 3
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      restartPolicy: Never
      containers:
      - name: main
        image: docker.io/library/bash:5
        command: ["bash"]
        args: [-c, 'echo "Hello world!" && sleep 5 && exit 42']
  backoffLimit: 6
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [42]}
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]`,
		expect: []expect{jobCondition("job-pod-failure-policy-example", "Failed", "PodFailurePolicy")}},
	{name: "myjob", page: "concepts/workloads/pods/sidecar-containers", yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: myjob}
spec:
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: myjob
        image: alpine:latest
        command: ['sh', '-c', 'echo "logging" > /opt/logs.txt']
        volumeMounts: [{name: data, mountPath: /opt}]
      initContainers:
      - name: logshipper
        image: alpine:latest
        restartPolicy: Always
        command: ['sh', '-c', 'tail -F /opt/logs.txt']
        volumeMounts: [{name: data, mountPath: /opt}]
      restartPolicy: Never
      volumes: [{name: data, emptyDir: {}}]`,
		expect: []expect{jobCondition("myjob", "Complete", "")}},
	{name: "myapp-deployment", page: "concepts/workloads/pods/sidecar-containers", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: myapp, labels: {app.kubernetes.io/name: myapp}}
spec:
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/name: myapp}}
  template:
    metadata: {labels: {app.kubernetes.io/name: myapp}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: myapp
        image: alpine:latest
        command: ['sh', '-c', 'while true; do echo "logging" >> /opt/logs.txt; sleep 1; done']
        volumeMounts: [{name: data, mountPath: /opt}]
      initContainers:
      - name: logshipper
        image: alpine:latest
        restartPolicy: Always
        command: ['sh', '-c', 'tail -F /opt/logs.txt']
        volumeMounts: [{name: data, mountPath: /opt}]
      volumes: [{name: data, emptyDir: {}}]`,
		expect: []expect{workloadReady("deployment", "myapp", 1), logHas("app.kubernetes.io/name=myapp", "logshipper", "(?m)^logging\nlogging$")}},
	{name: "hello", page: "tasks/job/automated-tasks-with-cron-jobs", yaml: `
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
            command: ["/bin/sh", "-c", "date; echo Hello from the Kubernetes cluster"]`,
		expect: []expect{phaseIs("hello-*", done), logHas("hello-*", "", `^`+busyboxDate+"\nHello from the Kubernetes cluster\n$")}},
}

// jobHello is the Pods page's Job, renamed job-hello (the CronJob's pods are hello-…).
const jobHello = `
apiVersion: batch/v1
kind: Job
metadata: {name: job-hello}
spec:
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: hello
        image: busybox:1.28
        command: ['sh', '-c', 'echo "Hello, Kubernetes!" && sleep 3600']
      restartPolicy: OnFailure`

// jobTmpl is the docs' job-tmpl.yaml with $ITEM expanded, as the page's sed loop does.
func jobTmpl(item string) string {
	return `
apiVersion: batch/v1
kind: Job
metadata: {name: process-item-` + item + `, labels: {jobgroup: jobexample}}
spec:
  template:
    metadata: {name: jobexample, labels: {jobgroup: jobexample}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: c
        image: busybox:1.28
        command: ["sh", "-c", "echo Processing item ` + item + ` && sleep 5"]
      restartPolicy: Never`
}

// probeExamples: configure-liveness-readiness-startup-probes and the pod-lifecycle page.
var probeExamples = []docsExample{
	{name: "liveness-exec", page: "tasks/configure-pod-container/configure-liveness-readiness-startup-probes", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: liveness-exec, labels: {test: liveness}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: liveness
    image: registry.k8s.io/busybox:1.27.2
    args: [/bin/sh, -c, touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600]
    livenessProbe: {exec: {command: [cat, /tmp/healthy]}, initialDelaySeconds: 5, periodSeconds: 5}`,
		expect: []expect{readyIs("liveness-exec"), restarted("liveness-exec")}},
	{name: "liveness-http", page: "tasks/configure-pod-container/configure-liveness-readiness-startup-probes", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: liveness-http, labels: {test: liveness}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: liveness
    image: registry.k8s.io/e2e-test-images/agnhost:2.40
    args: [liveness]
    livenessProbe:
      httpGet: {path: /healthz, port: 8080, httpHeaders: [{name: Custom-Header, value: Awesome}]}
      initialDelaySeconds: 3
      periodSeconds: 3`,
		expect: []expect{restarted("liveness-http")}},
	{name: "goproxy", page: "tasks/configure-pod-container/configure-liveness-readiness-startup-probes", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: goproxy, labels: {app: goproxy}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: goproxy
    image: registry.k8s.io/goproxy:0.1
    ports: [{containerPort: 8080}]
    readinessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 2, periodSeconds: 2}
    livenessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 2, periodSeconds: 2}`,
		expect: []expect{readyIs("goproxy")}},
	{name: "etcd-with-grpc", page: "tasks/configure-pod-container/configure-liveness-readiness-startup-probes", yaml: `
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
    readinessProbe: {grpc: {port: 2379}, periodSeconds: 2}`,
		expect: []expect{readyIs("etcd-with-grpc")}},
	{name: "readiness-exec", page: "tasks/configure-pod-container/configure-liveness-readiness-startup-probes", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: readiness-exec}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: readiness
    image: registry.k8s.io/busybox:1.27.2
    args: [/bin/sh, -c, touch /tmp/healthy; sleep 3600]
    readinessProbe: {exec: {command: [cat, /tmp/healthy]}, initialDelaySeconds: 2, periodSeconds: 2}`,
		expect: []expect{readyIs("readiness-exec")}},
	{name: "pod-with-tcp-socket-healthcheck", page: "concepts/workloads/pods/pod-lifecycle", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: pod-with-tcp-socket-healthcheck}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: redis
    image: redis
    livenessProbe: {tcpSocket: {port: 6379}, initialDelaySeconds: 30, timeoutSeconds: 1}
    ports: [{containerPort: 6379}]`,
		expect: []expect{readyIs("pod-with-tcp-socket-healthcheck"), answersPing("pod-with-tcp-socket-healthcheck")}},
}

// initExamples: init containers and sidecars.
var initExamples = []docsExample{
	{name: "init-demo", page: "tasks/configure-pod-container/configure-pod-initialization",
		cannot: "its init container downloads http://info.cern.ch: the fake reaches no address outside the node", yaml: `
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
  volumes: [{name: workdir, emptyDir: {}}]`,
		expect: []expect{phaseIs("init-demo", running), execHas("init-demo", "nginx", "info.cern.ch", "curl", "localhost")},
		instead: []expect{terminatedWith("init-demo", "Error", ""), phaseIs("init-demo", pending),
			logHas("init-demo", "install", "wget: bad address 'info.cern.ch'")}},
	{name: "myapp-pod", page: "concepts/workloads/pods/init-containers",
		cannot: "it waits for Services by DNS name, and the fake has no DNS: creating them does not let it start", yaml: `
apiVersion: v1
kind: Service
metadata: {name: myservice}
spec:
  ports: [{protocol: TCP, port: 80, targetPort: 9376}]
---
apiVersion: v1
kind: Service
metadata: {name: mydb}
spec:
  ports: [{protocol: TCP, port: 80, targetPort: 9377}]
---
apiVersion: v1
kind: Pod
metadata: {name: myapp-pod, labels: {app.kubernetes.io/name: MyApp}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: myapp-container
    image: busybox:1.28
    command: ['sh', '-c', 'echo The app is running! && sleep 3600']
  initContainers:
  - name: init-myservice
    image: busybox:1.28
    command: ['sh', '-c', "until nslookup myservice.$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace).svc.cluster.local; do echo waiting for myservice; sleep 2; done"]
  - name: init-mydb
    image: busybox:1.28
    command: ['sh', '-c', "until nslookup mydb.$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace).svc.cluster.local; do echo waiting for mydb; sleep 2; done"]`,
		expect: []expect{phaseIs("myapp-pod", running), logHas("myapp-pod", "myapp-container", "^The app is running!\n$")},
		instead: []expect{phaseIs("myapp-pod", pending),
			logHas("myapp-pod", "init-myservice", `nslookup: can't resolve 'myservice\.e2e-pods-\w+\.svc\.cluster\.local'\nwaiting for myservice\n`)}},
	{name: "startup-coordination-example", page: "concepts/workloads/pods/sidecar-containers", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: startup-coordination-example}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  initContainers:
  - name: config-sidecar
    image: registry.k8s.io/busybox:1.27.2
    restartPolicy: Always
    command: ["sh", "-c", 'echo "greeting=hello" > /config/app.conf; while true; do sleep 3600; done']
    startupProbe: {exec: {command: ["test", "-f", "/config/app.conf"]}, periodSeconds: 2}
    volumeMounts: [{name: config, mountPath: /config}]
  containers:
  - name: main-app
    image: registry.k8s.io/busybox:1.27.2
    command: ["sh", "-c", 'cat /config/app.conf; while true; do sleep 3600; done']
    volumeMounts: [{name: config, mountPath: /config}]
  volumes: [{name: config, emptyDir: {}}]`,
		expect: []expect{readyIs("startup-coordination-example"), logHas("startup-coordination-example", "main-app", "^greeting=hello\n$")}},
	{name: "localhost-example", page: "concepts/workloads/pods/sidecar-containers", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: localhost-example}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  initContainers:
  - name: client
    image: registry.k8s.io/busybox:1.27.2
    restartPolicy: Always
    command: ["sh", "-c", 'while true; do wget -qO- http://localhost:80 | head -n 4; sleep 5; done']
  containers:
  - name: web
    image: nginx:1.29
    ports: [{containerPort: 80}]`,
		expect: []expect{logHas("localhost-example", "client", "<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n")}},
	{name: "shared-volume-example", page: "concepts/workloads/pods/sidecar-containers", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: shared-volume-example}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  initContainers:
  - name: content-writer
    image: registry.k8s.io/busybox:1.27.2
    command: ["sh", "-c", 'echo "Hello from the init container" > /content/index.html']
    volumeMounts: [{name: content, mountPath: /content}]
  containers:
  - name: web
    image: nginx:1.29
    volumeMounts: [{name: content, mountPath: /usr/share/nginx/html, readOnly: true}]
  volumes: [{name: content, emptyDir: {sizeLimit: 10Mi}}]`,
		expect: []expect{servesHTTP("shared-volume-example", 80, "^Hello from the init container\n$")}},
	{name: "adapter-pattern-example", page: "concepts/workloads/pods/sidecar-containers",
		cannot: "its sidecar pipes tail -F into a while-read loop, which the fake's shell does not model", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: adapter-pattern-example}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  initContainers:
  - name: adapter
    image: registry.k8s.io/busybox:1.27.2
    restartPolicy: Always
    volumeMounts: [{name: shared-logs, mountPath: /var/log/app}]
    command: ["sh", "-c", 'touch /var/log/app/raw.log; tail -F /var/log/app/raw.log | while read line; do echo "adapted: $line"; done']
  containers:
  - name: main-app
    image: registry.k8s.io/busybox:1.27.2
    command: ["sh", "-c", 'while true; do echo "$(date) raw event" >> /var/log/app/raw.log; sleep 2; done']
    volumeMounts: [{name: shared-logs, mountPath: /var/log/app}]
  volumes: [{name: shared-logs, emptyDir: {}}]`,
		expect:  []expect{logHas("adapter-pattern-example", "adapter", `(?m)^adapted: `+busyboxDate+` raw event$`)},
		instead: []expect{logHas("adapter-pattern-example", "adapter", `cannot pipe into "while"`)}},
	{name: "two-containers", page: "tasks/access-application-cluster/communicate-containers-same-pod-shared-volume", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: two-containers}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  restartPolicy: Never
  volumes: [{name: shared-data, emptyDir: {}}]
  containers:
  - name: nginx-container
    image: nginx
    volumeMounts: [{name: shared-data, mountPath: /usr/share/nginx/html}]
  - name: debian-container
    image: debian
    volumeMounts: [{name: shared-data, mountPath: /pod-data}]
    command: ["/bin/sh"]
    args: ["-c", "echo Hello from the debian container > /pod-data/index.html"]`,
		expect: []expect{terminatedWith("two-containers", "Completed", ""),
			execHas("two-containers", "nginx-container", "^Hello from the debian container\n$", "curl", "-s", "localhost")}},
}

// envExamples: commands and args, environment variables, the downward API in env.
var envExamples = []docsExample{
	{name: "command-demo", page: "tasks/inject-data-application/define-command-argument-container", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: command-demo, labels: {purpose: demonstrate-command}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: command-demo-container
    image: debian
    command: ["printenv"]
    args: ["HOSTNAME", "KUBERNETES_PORT"]
  restartPolicy: OnFailure`,
		expect: []expect{phaseIs("command-demo", done), logHas("command-demo", "", `^command-demo\ntcp://[0-9.]+:443\n$`)}},
	{name: "env-args-demo", page: "tasks/inject-data-application/define-command-argument-container", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: env-args-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  restartPolicy: OnFailure
  containers:
  - name: env-args
    image: debian
    env: [{name: MESSAGE, value: "hello world"}]
    command: ["/bin/echo"]
    args: ["$(MESSAGE)"]`,
		expect: []expect{phaseIs("env-args-demo", done), logHas("env-args-demo", "", "^hello world\n$")}},
	{name: "shell-args-demo", page: "tasks/inject-data-application/define-command-argument-container", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: shell-args-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: shell
    image: debian
    command: ["/bin/sh"]
    args: ["-c", "while true; do echo hello; sleep 10;done"]`,
		expect: []expect{logHas("shell-args-demo", "", "^hello\n")}},
	{name: "envar-demo", page: "tasks/inject-data-application/define-environment-variable-container", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: envar-demo, labels: {purpose: demonstrate-envars}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: envar-demo-container
    image: gcr.io/google-samples/hello-app:2.0
    env:
    - {name: DEMO_GREETING, value: "Hello from the environment"}
    - {name: DEMO_FAREWELL, value: "Such a sweet sorrow"}`,
		expect: []expect{execHas("envar-demo", "", "(?m)^DEMO_GREETING=Hello from the environment\nDEMO_FAREWELL=Such a sweet sorrow$", "printenv")}},
	{name: "dependent-envars-demo", page: "tasks/inject-data-application/define-interdependent-environment-variables", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dependent-envars-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: dependent-envars-demo
    args:
    - while true; do echo -en '\n'; printf UNCHANGED_REFERENCE=$UNCHANGED_REFERENCE'\n'; printf SERVICE_ADDRESS=$SERVICE_ADDRESS'\n';printf ESCAPED_REFERENCE=$ESCAPED_REFERENCE'\n'; sleep 30; done;
    command: [sh, -c]
    image: busybox:1.28
    env:
    - {name: SERVICE_PORT, value: "80"}
    - {name: SERVICE_IP, value: "172.17.0.1"}
    - {name: UNCHANGED_REFERENCE, value: "$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"}
    - {name: PROTOCOL, value: "https"}
    - {name: SERVICE_ADDRESS, value: "$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"}
    - {name: ESCAPED_REFERENCE, value: "$$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"}`,
		expect: []expect{logHas("dependent-envars-demo", "", `^\nUNCHANGED_REFERENCE=\$\(PROTOCOL\)://172\.17\.0\.1:80\nSERVICE_ADDRESS=https://172\.17\.0\.1:80\nESCAPED_REFERENCE=\$\(PROTOCOL\)://172\.17\.0\.1:80\n`)}},
	{name: "dapi-envars-fieldref", page: "tasks/inject-data-application/environment-variable-expose-pod-information", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dapi-envars-fieldref}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["sh", "-c"]
    args:
    - while true; do
        echo -en '\n';
        printenv MY_NODE_NAME MY_POD_NAME MY_POD_NAMESPACE;
        printenv MY_POD_IP MY_POD_SERVICE_ACCOUNT;
        sleep 10;
      done;
    env:
    - {name: MY_NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: MY_POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: MY_POD_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
    - {name: MY_POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: MY_POD_SERVICE_ACCOUNT, valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}}
  restartPolicy: Never`,
		expect: []expect{logHas("dapi-envars-fieldref", "", `^\ne2e-pods-examples\ndapi-envars-fieldref\ne2e-pods-\w+\n127\.[0-9.]+\ndefault\n`)}},
	{name: "dapi-envars-resourcefieldref", page: "tasks/inject-data-application/environment-variable-expose-pod-information", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dapi-envars-resourcefieldref}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["sh", "-c"]
    args:
    - while true; do
        echo -en '\n';
        printenv MY_CPU_REQUEST MY_CPU_LIMIT;
        printenv MY_MEM_REQUEST MY_MEM_LIMIT;
        sleep 10;
      done;
    resources: {requests: {memory: 32Mi, cpu: 125m}, limits: {memory: 64Mi, cpu: 250m}}
    env:
    - {name: MY_CPU_REQUEST, valueFrom: {resourceFieldRef: {containerName: test-container, resource: requests.cpu}}}
    - {name: MY_CPU_LIMIT, valueFrom: {resourceFieldRef: {containerName: test-container, resource: limits.cpu}}}
    - {name: MY_MEM_REQUEST, valueFrom: {resourceFieldRef: {containerName: test-container, resource: requests.memory}}}
    - {name: MY_MEM_LIMIT, valueFrom: {resourceFieldRef: {containerName: test-container, resource: limits.memory}}}
  restartPolicy: Never`,
		expect: []expect{logHas("dapi-envars-resourcefieldref", "", "^\n1\n1\n33554432\n67108864\n")}},
}

// configExamples: ConfigMaps and Secrets, in env and in volumes.
var configExamples = []docsExample{
	{name: "dapi-test-pod-single", page: "tasks/configure-pod-container/configure-pod-configmap", yaml: configMaps + `
---
apiVersion: v1
kind: Pod
metadata: {name: dapi-test-pod-single}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["/bin/sh", "-c", "env"]
    env:
    - {name: SPECIAL_LEVEL_KEY, valueFrom: {configMapKeyRef: {name: special-config, key: special.how}}}
  restartPolicy: Never`,
		expect: []expect{phaseIs("dapi-test-pod-single", done), logHas("dapi-test-pod-single", "", "(?m)^SPECIAL_LEVEL_KEY=very$")}},
	{name: "dapi-test-pod-multiple", page: "tasks/configure-pod-container/configure-pod-configmap", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dapi-test-pod-multiple}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["/bin/sh", "-c", "env"]
    env:
    - {name: SPECIAL_LEVEL_KEY, valueFrom: {configMapKeyRef: {name: special-config, key: special.how}}}
    - {name: LOG_LEVEL, valueFrom: {configMapKeyRef: {name: env-config, key: log_level}}}
  restartPolicy: Never`,
		expect: []expect{phaseIs("dapi-test-pod-multiple", done), logHas("dapi-test-pod-multiple", "", "(?m)^SPECIAL_LEVEL_KEY=very\nLOG_LEVEL=INFO$")}},
	{name: "dapi-test-pod-envfrom", page: "tasks/configure-pod-container/configure-pod-configmap", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dapi-test-pod-envfrom}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["/bin/sh", "-c", "env"]
    envFrom: [{configMapRef: {name: special-config-multikeys}}]
  restartPolicy: Never`,
		expect: []expect{phaseIs("dapi-test-pod-envfrom", done), logHas("dapi-test-pod-envfrom", "", "(?m)^SPECIAL_LEVEL=very\nSPECIAL_TYPE=charm$")}},
	{name: "dapi-test-pod-valuefrom", page: "tasks/configure-pod-container/configure-pod-configmap", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dapi-test-pod-valuefrom}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["/bin/echo", "$(SPECIAL_LEVEL_KEY) $(SPECIAL_TYPE_KEY)"]
    env:
    - {name: SPECIAL_LEVEL_KEY, valueFrom: {configMapKeyRef: {name: special-config-multikeys, key: SPECIAL_LEVEL}}}
    - {name: SPECIAL_TYPE_KEY, valueFrom: {configMapKeyRef: {name: special-config-multikeys, key: SPECIAL_TYPE}}}
  restartPolicy: Never`,
		expect: []expect{phaseIs("dapi-test-pod-valuefrom", done), logHas("dapi-test-pod-valuefrom", "", "^very charm\n$")}},
	{name: "dapi-test-pod-volume", page: "tasks/configure-pod-container/configure-pod-configmap", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dapi-test-pod-volume}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["/bin/sh", "-c", "ls /etc/config/"]
    volumeMounts: [{name: config-volume, mountPath: /etc/config}]
  volumes: [{name: config-volume, configMap: {name: special-config-multikeys}}]
  restartPolicy: Never`,
		expect: []expect{phaseIs("dapi-test-pod-volume", done), logHas("dapi-test-pod-volume", "", "^SPECIAL_LEVEL\nSPECIAL_TYPE\n$")}},
	{name: "dapi-test-pod-volume-key", page: "tasks/configure-pod-container/configure-pod-configmap", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dapi-test-pod-volume-key}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["/bin/sh", "-c", "cat /etc/config/keys"]
    volumeMounts: [{name: config-volume, mountPath: /etc/config}]
  volumes:
  - name: config-volume
    configMap: {name: special-config-multikeys, items: [{key: SPECIAL_LEVEL, path: keys}]}
  restartPolicy: Never`,
		expect: []expect{phaseIs("dapi-test-pod-volume-key", done), logHas("dapi-test-pod-volume-key", "", "^very\n$")}},
	{name: "dapi-test-pod-optional", page: "tasks/configure-pod-container/configure-pod-configmap", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: dapi-test-pod-optional}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: gcr.io/google_containers/busybox
    command: ["/bin/sh", "-c", "env"]
    env:
    - {name: SPECIAL_LEVEL_KEY, valueFrom: {configMapKeyRef: {name: a-config, key: akey, optional: true}}}
  restartPolicy: Never`,
		expect: []expect{phaseIs("dapi-test-pod-optional", done), logLacks("dapi-test-pod-optional", "SPECIAL_LEVEL_KEY")}},
	{name: "secret-test-pod", page: "tasks/inject-data-application/distribute-credentials-secure", yaml: secrets + `
---
apiVersion: v1
kind: Pod
metadata: {name: secret-test-pod}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-container
    image: nginx
    volumeMounts: [{name: secret-volume, mountPath: /etc/secret-volume, readOnly: true}]
  volumes: [{name: secret-volume, secret: {secretName: test-secret}}]`,
		expect: []expect{execHas("secret-test-pod", "", "^password\nusername\n$", "ls", "/etc/secret-volume"),
			execHas("secret-test-pod", "", `^my-app$`, "cat", "/etc/secret-volume/username")}},
	{name: "secret-envars-test-pod", page: "tasks/inject-data-application/distribute-credentials-secure", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: secret-envars-test-pod}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: envars-test-container
    image: nginx
    env:
    - {name: SECRET_USERNAME, valueFrom: {secretKeyRef: {name: test-secret, key: username}}}
    - {name: SECRET_PASSWORD, valueFrom: {secretKeyRef: {name: test-secret, key: password}}}`,
		expect: []expect{execHas("secret-envars-test-pod", "", `(?m)^SECRET_USERNAME=my-app\nSECRET_PASSWORD=39528\$vdg7Jb$`, "printenv")}},
	{name: "env-single-secret", page: "tasks/inject-data-application/distribute-credentials-secure", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: env-single-secret}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: envars-test-container
    image: nginx
    env:
    - {name: SECRET_USERNAME, valueFrom: {secretKeyRef: {name: backend-user, key: backend-username}}}`,
		expect: []expect{execHas("env-single-secret", "", "^backend-admin\n$", "/bin/sh", "-c", "echo $SECRET_USERNAME")}},
	{name: "envvars-multiple-secrets", page: "tasks/inject-data-application/distribute-credentials-secure", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: envvars-multiple-secrets}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: envars-test-container
    image: nginx
    env:
    - {name: BACKEND_USERNAME, valueFrom: {secretKeyRef: {name: backend-user, key: backend-username}}}
    - {name: DB_USERNAME, valueFrom: {secretKeyRef: {name: db-user, key: db-username}}}`,
		expect: []expect{execHas("envvars-multiple-secrets", "", "^BACKEND_USERNAME=backend-admin\nDB_USERNAME=db-admin\n$", "/bin/sh", "-c", "env | grep _USERNAME")}},
	{name: "envfrom-secret", page: "tasks/inject-data-application/distribute-credentials-secure", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: envfrom-secret}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: envars-test-container
    image: nginx
    envFrom: [{secretRef: {name: test-secret}}]`,
		expect: []expect{execHas("envfrom-secret", "", `^username: my-app\npassword: 39528\$vdg7Jb\n$`, "/bin/sh", "-c", `echo -e "username: $username\npassword: $password"`)}},
}

// configMaps are the ConfigMaps of configure-pod-configmap: special-config and env-config
// (configmap/configmaps.yaml) and the page's two-key special-config
// (configmap/configmap-multikeys.yaml), renamed special-config-multikeys so both can exist.
const configMaps = `
apiVersion: v1
kind: ConfigMap
metadata: {name: special-config}
data: {special.how: very}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: env-config}
data: {log_level: INFO}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: special-config-multikeys}
data: {SPECIAL_LEVEL: very, SPECIAL_TYPE: charm}`

// secrets are the Secrets of distribute-credentials-secure (pods/inject/secret.yaml and the
// page's kubectl create secret lines), projected-volume-storage's user and pass, and the
// projected volume page's mysecret and myconfigmap.
const secrets = `
apiVersion: v1
kind: Secret
metadata: {name: test-secret}
stringData: {username: my-app, password: 39528$vdg7Jb}
---
apiVersion: v1
kind: Secret
metadata: {name: backend-user}
stringData: {backend-username: backend-admin}
---
apiVersion: v1
kind: Secret
metadata: {name: db-user}
stringData: {db-username: db-admin}
---
apiVersion: v1
kind: Secret
metadata: {name: user}
stringData: {username.txt: admin}
---
apiVersion: v1
kind: Secret
metadata: {name: pass}
stringData: {password.txt: 1f2d1e2e67df}
---
apiVersion: v1
kind: Secret
metadata: {name: mysecret}
stringData: {username: my-username}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: myconfigmap}
data: {config: my-config-value}`

// volumeExamples: emptyDir, projected volumes, downward API files, service account tokens.
var volumeExamples = []docsExample{
	{name: "redis-storage", page: "tasks/configure-pod-container/configure-volume-storage", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: redis-storage}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: redis
    image: redis
    volumeMounts: [{name: redis-storage, mountPath: /data/redis}]
  volumes: [{name: redis-storage, emptyDir: {}}]`,
		expect: []expect{execHas("redis-storage", "", "", "sh", "-c", "cd /data/redis/ && echo Hello > test-file"),
			execHas("redis-storage", "", "^test-file\n$", "ls", "/data/redis")}},
	{name: "test-projected-volume", page: "tasks/configure-pod-container/configure-projected-volume-storage", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: test-projected-volume}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: test-projected-volume
    image: busybox:1.28
    args: [sleep, "86400"]
    volumeMounts: [{name: all-in-one, mountPath: /projected-volume, readOnly: true}]
  volumes:
  - name: all-in-one
    projected:
      sources:
      - secret: {name: user}
      - secret: {name: pass}`,
		expect: []expect{execHas("test-projected-volume", "", "^password.txt\nusername.txt\n$", "ls", "/projected-volume/")}},
	{name: "volume-test", page: "concepts/storage/projected-volumes", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: volume-test, labels: {app: volume-test}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: container-test
    image: busybox:1.28
    command: [sleep, "3600"]
    volumeMounts: [{mountPath: /projected-volume, name: all-in-one, readOnly: true}]
  volumes:
  - name: all-in-one
    projected:
      sources:
      - secret: {name: mysecret, items: [{key: username, path: my-group/my-username}]}
      - downwardAPI:
          items:
          - {path: labels, fieldRef: {fieldPath: metadata.labels}}
          - {path: cpu_limit, resourceFieldRef: {containerName: container-test, resource: limits.cpu}}
      - configMap: {name: myconfigmap, items: [{key: config, path: my-group/my-config}]}`,
		expect: []expect{execHas("volume-test", "", "^cpu_limit\nlabels\nmy-group\n$", "ls", "/projected-volume"),
			execHas("volume-test", "", "^my-username$", "cat", "/projected-volume/my-group/my-username"),
			execHas("volume-test", "", `^app="volume-test"$`, "cat", "/projected-volume/labels")}},
	{name: "sa-token-test", page: "tasks/configure-pod-container/configure-service-account", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: sa-token-test}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: container-test
    image: busybox:1.28
    command: [sleep, "3600"]
    volumeMounts: [{mountPath: /service-account, name: token-vol, readOnly: true}]
  serviceAccountName: default
  volumes:
  - name: token-vol
    projected:
      sources:
      - serviceAccountToken: {audience: api, expirationSeconds: 3600, path: token}`,
		expect: []expect{execHas("sa-token-test", "", `^eyJ[\w-]+\.[\w-]+\.[\w-]+$`, "cat", "/service-account/token")}},
	{name: "kubernetes-downwardapi-volume-example", page: "tasks/inject-data-application/downward-api-volume-expose-pod-information", yaml: `
apiVersion: v1
kind: Pod
metadata:
  name: kubernetes-downwardapi-volume-example
  labels: {zone: us-est-coast, cluster: test-cluster1, rack: rack-22}
  annotations: {build: two, builder: john-doe}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: client-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["sh", "-c"]
    args:
    - while true; do
        if [[ -e /etc/podinfo/labels ]]; then
          echo -en '\n\n'; cat /etc/podinfo/labels; fi;
        if [[ -e /etc/podinfo/annotations ]]; then
          echo -en '\n\n'; cat /etc/podinfo/annotations; fi;
        sleep 5;
      done;
    volumeMounts: [{name: podinfo, mountPath: /etc/podinfo}]
  volumes:
  - name: podinfo
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}}`,
		expect: []expect{logHas("kubernetes-downwardapi-volume-example", "", `^\n\ncluster="test-cluster1"\nrack="rack-22"\nzone="us-est-coast"\n\nbuild="two"\nbuilder="john-doe"`),
			execHas("kubernetes-downwardapi-volume-example", "", `^cluster="test-cluster1"\nrack="rack-22"\nzone="us-est-coast"$`, "cat", "/etc/podinfo/labels"),
			execHas("kubernetes-downwardapi-volume-example", "", "(?m)^annotations\nlabels$", "ls", "/etc/podinfo")}},
	{name: "kubernetes-downwardapi-volume-example-2", page: "tasks/inject-data-application/downward-api-volume-expose-pod-information", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: kubernetes-downwardapi-volume-example-2}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: client-container
    image: registry.k8s.io/busybox:1.27.2
    command: ["sh", "-c"]
    args:
    - while true; do
        echo -en '\n';
        if [[ -e /etc/podinfo/cpu_limit ]]; then
          echo -en '\n'; cat /etc/podinfo/cpu_limit; fi;
        if [[ -e /etc/podinfo/cpu_request ]]; then
          echo -en '\n'; cat /etc/podinfo/cpu_request; fi;
        if [[ -e /etc/podinfo/mem_limit ]]; then
          echo -en '\n'; cat /etc/podinfo/mem_limit; fi;
        if [[ -e /etc/podinfo/mem_request ]]; then
          echo -en '\n'; cat /etc/podinfo/mem_request; fi;
        sleep 5;
      done;
    resources: {requests: {memory: 32Mi, cpu: 125m}, limits: {memory: 64Mi, cpu: 250m}}
    volumeMounts: [{name: podinfo, mountPath: /etc/podinfo}]
  volumes:
  - name: podinfo
    downwardAPI:
      items:
      - {path: cpu_limit, resourceFieldRef: {containerName: client-container, resource: limits.cpu, divisor: 1m}}
      - {path: cpu_request, resourceFieldRef: {containerName: client-container, resource: requests.cpu, divisor: 1m}}
      - {path: mem_limit, resourceFieldRef: {containerName: client-container, resource: limits.memory, divisor: 1Mi}}
      - {path: mem_request, resourceFieldRef: {containerName: client-container, resource: requests.memory, divisor: 1Mi}}`,
		expect: []expect{logHas("kubernetes-downwardapi-volume-example-2", "", `^\n\n250\n125\n64\n32\n`)}},
	{name: "shell-demo", page: "tasks/debug/debug-application/get-shell-running-container", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: shell-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  volumes: [{name: shared-data, emptyDir: {}}]
  containers:
  - name: nginx
    image: nginx
    volumeMounts: [{name: shared-data, mountPath: /usr/share/nginx/html}]`,
		expect: []expect{execHas("shell-demo", "", "^$", "sh", "-c", "echo Hello shell demo > /usr/share/nginx/html/index.html"),
			execHas("shell-demo", "", "^Hello shell demo\n$", "curl", "http://localhost/")}},
}

// resourceExamples: memory and CPU requests and limits, and QoS classes.
var resourceExamples = []docsExample{
	{name: "memory-demo", page: "tasks/configure-pod-container/assign-memory-resource", yaml: memoryDemo("memory-demo", "100Mi", "200Mi", "150M"),
		expect: []expect{phaseIs("memory-demo", running), podIs("not restarted", "memory-demo", func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount == 0
		})}},
	{name: "memory-demo-2", page: "tasks/configure-pod-container/assign-memory-resource", yaml: memoryDemo("memory-demo-2", "50Mi", "100Mi", "250M"),
		expect: []expect{terminatedWith("memory-demo-2", "OOMKilled", "")}},
	{name: "memory-demo-3", page: "tasks/configure-pod-container/assign-memory-resource", yaml: memoryDemo("memory-demo-3", "1000Gi", "1000Gi", "150M"),
		expect: []expect{unschedulable("memory-demo-3", "Unschedulable", "Insufficient memory")}},
	{name: "cpu-demo", page: "tasks/configure-pod-container/assign-cpu-resource", yaml: cpuDemo("cpu-demo", "1", "0.5"),
		expect: []expect{phaseIs("cpu-demo", running), logHas("cpu-demo", "", `^stress: info: \[1\] dispatching hogs: 2 cpu, 0 io, 0 vm, 0 hdd\n$`)}},
	{name: "cpu-demo-2", page: "tasks/configure-pod-container/assign-cpu-resource", yaml: cpuDemo("cpu-demo-2", "100", "100"),
		expect: []expect{unschedulable("cpu-demo-2", "Unschedulable", "Insufficient cpu")}},
	{name: "qos-demo", page: "tasks/configure-pod-container/quality-service-pod", yaml: qosDemo("qos-demo",
		"resources: {limits: {memory: 200Mi, cpu: 700m}, requests: {memory: 200Mi, cpu: 700m}}"),
		expect: []expect{qosIs("qos-demo", corev1.PodQOSGuaranteed), readyIs("qos-demo")}},
	{name: "qos-demo-2", page: "tasks/configure-pod-container/quality-service-pod", yaml: qosDemo("qos-demo-2",
		"resources: {limits: {memory: 200Mi}, requests: {memory: 100Mi}}"),
		expect: []expect{qosIs("qos-demo-2", corev1.PodQOSBurstable), readyIs("qos-demo-2")}},
	{name: "qos-demo-3", page: "tasks/configure-pod-container/quality-service-pod", yaml: qosDemo("qos-demo-3", "resources: {}"),
		expect: []expect{qosIs("qos-demo-3", corev1.PodQOSBestEffort), readyIs("qos-demo-3")}},
	{name: "qos-demo-4", page: "tasks/configure-pod-container/quality-service-pod", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: qos-demo-4}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: qos-demo-4-ctr-1
    image: nginx
    resources: {requests: {memory: 200Mi}}
  - name: qos-demo-4-ctr-2
    image: redis`,
		expect: []expect{qosIs("qos-demo-4", corev1.PodQOSBurstable), readyIs("qos-demo-4")}},
}

func memoryDemo(name, request, limit, use string) string {
	return `
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: ` + name + `-ctr
    image: polinux/stress
    resources: {requests: {memory: ` + request + `}, limits: {memory: ` + limit + `}}
    command: ["stress"]
    args: ["--vm", "1", "--vm-bytes", "` + use + `", "--vm-hang", "1"]`
}

func cpuDemo(name, limit, request string) string {
	return `
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: ` + name + `-ctr
    image: vish/stress
    resources: {limits: {cpu: "` + limit + `"}, requests: {cpu: "` + request + `"}}
    args: ["-cpus", "2"]`
}

func qosDemo(name, resources string) string {
	return `
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: ` + name + `-ctr
    image: nginx
    ` + resources
}

// securityExamples: security contexts.
var securityExamples = []docsExample{
	{name: "security-context-demo", page: "tasks/configure-pod-container/security-context", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: security-context-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  securityContext: {runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000]}
  volumes: [{name: sec-ctx-vol, emptyDir: {}}]
  containers:
  - name: sec-ctx-demo
    image: busybox:1.28
    command: ["sh", "-c", "sleep 1h"]
    volumeMounts: [{name: sec-ctx-vol, mountPath: /data/demo}]
    securityContext: {allowPrivilegeEscalation: false}`,
		expect: []expect{execHas("security-context-demo", "", "^uid=1000 gid=3000 groups=2000,3000,4000\n$", "id"),
			execHas("security-context-demo", "", "^hello\n$", "sh", "-c", "cd /data/demo && echo hello > testfile && cat testfile")}},
	{name: "security-context-demo-2", page: "tasks/configure-pod-container/security-context", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: security-context-demo-2}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  securityContext: {runAsUser: 1000}
  containers:
  - name: sec-ctx-demo-2
    image: gcr.io/google-samples/hello-app:2.0
    securityContext: {runAsUser: 2000, allowPrivilegeEscalation: false}`,
		expect: []expect{execHas("security-context-demo-2", "", "^2000\n$", "id", "-u")}},
}

// podExamples: lifecycle hooks, termination messages, logging and debugging, scheduling.
var podExamples = []docsExample{
	{name: "lifecycle-demo", page: "tasks/configure-pod-container/attach-handler-lifecycle-event", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: lifecycle-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: lifecycle-demo-container
    image: nginx
    lifecycle:
      postStart: {exec: {command: ["/bin/sh", "-c", "echo Hello from the postStart handler > /usr/share/message"]}}
      preStop: {exec: {command: ["/bin/sh", "-c", "nginx -s quit; while killall -0 nginx; do sleep 1; done"]}}`,
		expect: []expect{execHas("lifecycle-demo", "", "^Hello from the postStart handler\n$", "cat", "/usr/share/message")}},
	{name: "termination-demo", page: "tasks/debug/debug-application/determine-reason-pod-failure", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: termination-demo}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: termination-demo-container
    image: debian
    command: ["/bin/sh"]
    args: ["-c", "sleep 10 && echo Sleep expired > /dev/termination-log"]`,
		expect: []expect{terminatedWith("termination-demo", "Completed", "Sleep expired")}},
	{name: "counter", page: "concepts/cluster-administration/logging", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: counter}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: count
    image: busybox:1.28
    args: [/bin/sh, -c, 'i=0; while true; do echo "$i: $(date)"; i=$((i+1)); sleep 1; done']`,
		expect: []expect{logHas("counter", "", `^0: `+busyboxDate+`\n1: `+busyboxDate+`\n2: `+busyboxDate+`\n`)}},
	{name: "counter-err", page: "concepts/cluster-administration/logging", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: counter-err}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: count
    image: busybox:1.28
    args: [/bin/sh, -c, 'i=0; while true; do echo "$i: $(date)"; echo "$i: err" >&2 ; i=$((i+1)); sleep 1; done']`,
		expect: []expect{logHas("counter-err", "", `^0: `+busyboxDate+`\n0: err\n1: `+busyboxDate+`\n1: err\n`)}},
	{name: "counter-streaming", page: "concepts/cluster-administration/logging", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: counter-streaming}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: count
    image: busybox:1.28
    args:
    - /bin/sh
    - -c
    - >
      i=0;
      while true;
      do
        echo "$i: $(date)" >> /var/log/1.log;
        echo "$(date) INFO $i" >> /var/log/2.log;
        i=$((i+1));
        sleep 1;
      done
    volumeMounts: [{name: varlog, mountPath: /var/log}]
  - name: count-log-1
    image: busybox:1.28
    args: [/bin/sh, -c, 'tail -n+1 -F /var/log/1.log']
    volumeMounts: [{name: varlog, mountPath: /var/log}]
  - name: count-log-2
    image: busybox:1.28
    args: [/bin/sh, -c, 'tail -n+1 -F /var/log/2.log']
    volumeMounts: [{name: varlog, mountPath: /var/log}]
  volumes: [{name: varlog, emptyDir: {}}]`,
		expect: []expect{logHas("counter-streaming", "count-log-1", `(?m)^0: `+busyboxDate+`\n1: `+busyboxDate+`$`),
			logHas("counter-streaming", "count-log-2", `(?m)^`+busyboxDate+` INFO 0\n`+busyboxDate+` INFO 1$`)}},
	{name: "myapp", page: "tasks/debug/debug-application/debug-running-pod", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: myapp, labels: {run: myapp}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  restartPolicy: Never
  containers:
  - name: myapp
    image: busybox:1.28
    args: [sleep, 1d]`,
		expect: []expect{readyIs("myapp"), execHas("myapp", "", "^myapp\n$", "hostname"),
			execHas("myapp", "", "^e2e-pods-", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/namespace")}},
	{name: "share-process-namespace", page: "tasks/configure-pod-container/share-process-namespace", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: nginx-share-process}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  shareProcessNamespace: true
  containers:
  - name: nginx
    image: nginx
  - name: shell
    image: busybox:1.28
    command: ["sleep", "3600"]
    securityContext: {capabilities: {add: [SYS_PTRACE]}}
    stdin: true
    tty: true`,
		expect: []expect{readyIs("nginx-share-process")}},
	{name: "nginx-ssd", page: "tasks/configure-pod-container/assign-pods-nodes", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: nginx-ssd, labels: {env: test}}
spec:
  containers:
  - name: nginx
    image: nginx
    imagePullPolicy: IfNotPresent
  nodeSelector: {disktype: ssd}`,
		expect: []expect{readyIs("nginx-ssd"), onTheNode("nginx-ssd")}},
	{name: "nginx-specific-node", page: "tasks/configure-pod-container/assign-pods-nodes", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: nginx-specific-node}
spec:
  nodeName: NODE
  containers:
  - name: nginx
    image: nginx`,
		expect: []expect{readyIs("nginx-specific-node")}},
	{name: "nginx-required-affinity", page: "tasks/configure-pod-container/assign-pods-nodes-using-node-affinity", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: nginx-required-affinity}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: disktype, operator: In, values: [ssd]}]
  containers:
  - name: nginx
    image: nginx
    imagePullPolicy: IfNotPresent`,
		expect: []expect{readyIs("nginx-required-affinity"), onTheNode("nginx-required-affinity")}},
	{name: "nginx-toleration", page: "concepts/scheduling-eviction/taint-and-toleration", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: nginx-toleration, labels: {env: test}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: nginx
    image: nginx
    imagePullPolicy: IfNotPresent
  tolerations:
  - {key: example-key, operator: Exists, effect: NoSchedule}`,
		expect: []expect{readyIs("nginx-toleration")}},
	{name: "test-pod", page: "concepts/scheduling-eviction/pod-scheduling-readiness", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: test-pod}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  schedulingGates: [{name: example.com/foo}, {name: example.com/bar}]
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.6`,
		expect: []expect{unschedulable("test-pod", "SchedulingGated", "")}},
}

// onTheNode expects the pod on the test's node (the one labelled disktype=ssd).
func onTheNode(ref string) expect {
	return expect{ref + " on the disktype=ssd node", func(e *exampleEnv) (bool, string) {
		pod, detail := e.podNamed(ref)
		return pod != nil && pod.Spec.NodeName == e.node, detail
	}}
}

// ownExamples are not the docs' but pin what docs/fake-runtime.md says: a redis pod answers
// PING, a shell loop runs, an unknown command says it is not modelled.
var ownExamples = []docsExample{
	{name: "redis", page: "docs/fake-runtime.md (a redis pod)", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: redis}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: redis
    image: redis
    ports: [{containerPort: 6379}]
    readinessProbe: {tcpSocket: {port: 6379}, periodSeconds: 2}`,
		expect: []expect{readyIs("redis"), answersPing("redis")}},
	{name: "loops", page: "docs/fake-runtime.md (the shell)", yaml: `
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
      for w in a b; do echo "word $w"; done`,
		expect: []expect{phaseIs("loops", done), logHas("loops", "", "^3 is odd\n2 is even\n1 is odd\nword a\nword b\n$")}},
	{name: "unknown", page: "docs/fake-runtime.md (an unknown command)", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: unknown}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: app
    image: example.com/app:1
    command: ["myapp", "--serve"]`,
		expect: []expect{phaseIs("unknown", running), logHas("unknown", "",
			`^minikubelet fake runtime: "myapp" is not modelled; this container runs until stopped \(what is modelled: docs/fake-runtime.md\)`+"\n$")}},
}

// moreWorkloadExamples: the workloads of the services, Jobs and StatefulSet pages.
var moreWorkloadExamples = []docsExample{
	{name: "hello-world", page: "tutorials/stateless-application/expose-external-ip-address", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: hello-world, labels: {app.kubernetes.io/name: load-balancer-example}}
spec:
  replicas: 5
  selector: {matchLabels: {app.kubernetes.io/name: load-balancer-example}}
  template:
    metadata: {labels: {app.kubernetes.io/name: load-balancer-example}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - image: gcr.io/google-samples/hello-app:2.0
        name: hello-world
        ports: [{containerPort: 8080}]`,
		expect: []expect{workloadReady("deployment", "hello-world", 5)}},
	{name: "backend", page: "tasks/access-application-cluster/connecting-frontend-backend", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: backend}
spec:
  selector: {matchLabels: {app: hello, tier: backend, track: stable}}
  replicas: 3
  template:
    metadata: {labels: {app: hello, tier: backend, track: stable}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: hello
        image: "gcr.io/google-samples/hello-go-gke:1.0"
        ports: [{name: http, containerPort: 80}]`,
		expect: []expect{workloadReady("deployment", "backend", 3)}},
	{name: "hostnames", page: "tasks/debug/debug-application/debug-service", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: hostnames, labels: {app: hostnames}}
spec:
  selector: {matchLabels: {app: hostnames}}
  replicas: 3
  template:
    metadata: {labels: {app: hostnames}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: hostnames
        image: registry.k8s.io/serve_hostname`,
		expect: []expect{workloadReady("deployment", "hostnames", 3)}},
	{name: "web-parallel", page: "tutorials/stateful-application/basic-stateful-set", yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web-parallel}
spec:
  serviceName: nginx
  podManagementPolicy: Parallel
  replicas: 2
  selector: {matchLabels: {app: nginx-parallel}}
  template:
    metadata: {labels: {app: nginx-parallel}}
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: nginx
        image: registry.k8s.io/nginx-slim:0.24
        ports: [{containerPort: 80, name: web}]`,
		expect: []expect{workloadReady("statefulset", "web-parallel", 2), execHas("web-parallel-1", "", "^web-parallel-1\n$", "hostname")}},
	{name: "job-hello", page: "concepts/workloads/pods", yaml: jobHello,
		expect: []expect{phaseIs("job-name=job-hello", running), logHas("job-name=job-hello", "", "^Hello, Kubernetes!\n$")}},
	{name: "pi-with-ttl", page: "concepts/workloads/controllers/ttlafterfinished", yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi-with-ttl}
spec:
  ttlSecondsAfterFinished: 100
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]
      restartPolicy: Never`,
		expect: []expect{jobCondition("pi-with-ttl", "Complete", "")}},
	{name: "pi-with-timeout", page: "concepts/workloads/controllers/job", yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi-with-timeout}
spec:
  backoffLimit: 5
  activeDeadlineSeconds: 100
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]
      restartPolicy: Never`,
		expect: []expect{jobCondition("pi-with-timeout", "Complete", "")}},
	{name: "job-pod-failure-policy-failjob", page: "tasks/job/pod-failure-policy", yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: job-pod-failure-policy-failjob}
spec:
  completions: 8
  parallelism: 2
  template:
    spec:
      nodeSelector: {kubernetes.io/hostname: NODE}
      restartPolicy: Never
      containers:
      - name: main
        image: docker.io/library/bash:5
        command: [bash]
        args: [-c, 'echo "Hello world! I''m going to exit with 42 to simulate a software bug." && sleep 30 && exit 42']
  backoffLimit: 6
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [42]}`,
		expect: []expect{jobCondition("job-pod-failure-policy-failjob", "Failed", "PodFailurePolicy"),
			logHas("job-name=job-pod-failure-policy-failjob", "", "^Hello world! I'm going to exit with 42 to simulate a software bug.\n$")}},
}

// schedulingExamples: more of the scheduling pages, the DNS page's hostnames, host aliases.
var schedulingExamples = []docsExample{
	{name: "nginx", page: "concepts/workloads/pods", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: nginx}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: nginx
    image: nginx:1.14.2
    ports: [{containerPort: 80}]`,
		expect: []expect{readyIs("nginx"), servesHTTP("nginx", 80, "Welcome to nginx!")}},
	{name: "nginx-preferred-affinity", page: "tasks/configure-pod-container/assign-pods-nodes-using-node-affinity", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: nginx-preferred-affinity}
spec:
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        preference:
          matchExpressions: [{key: disktype, operator: In, values: [ssd]}]
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: nginx
    image: nginx
    imagePullPolicy: IfNotPresent`,
		expect: []expect{readyIs("nginx-preferred-affinity"), onTheNode("nginx-preferred-affinity")}},
	{name: "no-annotation", page: "tasks/extend-kubernetes/configure-multiple-schedulers", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: no-annotation, labels: {name: multischeduler-example}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: pod-with-no-annotation-container
    image: registry.k8s.io/pause:3.8`,
		expect: []expect{readyIs("no-annotation")}},
	{name: "annotation-default-scheduler", page: "tasks/extend-kubernetes/configure-multiple-schedulers", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: annotation-default-scheduler, labels: {name: multischeduler-example}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  schedulerName: default-scheduler
  containers:
  - name: pod-with-default-annotation-container
    image: registry.k8s.io/pause:3.8`,
		expect: []expect{readyIs("annotation-default-scheduler")}},
	{name: "annotation-second-scheduler", page: "tasks/extend-kubernetes/configure-multiple-schedulers", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: annotation-second-scheduler, labels: {name: multischeduler-example}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  schedulerName: my-scheduler
  containers:
  - name: pod-with-second-annotation-container
    image: registry.k8s.io/pause:3.8`,
		expect: []expect{podIs("Pending and not scheduled (no my-scheduler runs)", "annotation-second-scheduler", func(p *corev1.Pod) bool {
			return p.Status.Phase == pending && p.Spec.NodeName == ""
		})}},
	{name: "busybox-1", page: "concepts/services-networking/dns-pod-service", yaml: busyboxHostname("busybox1", "busybox-1"),
		expect: []expect{execHas("busybox1", "busybox", "^busybox-1\n$", "hostname")}},
	{name: "busybox-2", page: "concepts/services-networking/dns-pod-service", yaml: busyboxHostname("busybox2", "busybox-2"),
		expect: []expect{execHas("busybox2", "busybox", "^busybox-2\n$", "hostname")}},
	{name: "hostaliases-pod", page: "tasks/network/customize-hosts-file-for-pods", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: hostaliases-pod}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  restartPolicy: Never
  hostAliases:
  - ip: "127.0.0.1"
    hostnames: ["foo.local", "bar.local"]
  - ip: "10.1.2.3"
    hostnames: ["foo.remote", "bar.remote"]
  containers:
  - name: cat-hosts
    image: busybox:1.28
    command: [cat]
    args: ["/etc/hosts"]`,
		expect: []expect{phaseIs("hostaliases-pod", done),
			logHas("hostaliases-pod", "", "(?m)^# Entries added by HostAliases.\n127.0.0.1\tfoo.local\tbar.local\n10.1.2.3\tfoo.remote\tbar.remote$")}},
	{name: "configmap-demo-pod", page: "concepts/configuration/configmap", yaml: `
apiVersion: v1
kind: ConfigMap
metadata: {name: game-demo}
data:
  player_initial_lives: "3"
  ui_properties_file_name: "user-interface.properties"
  game.properties: |
    enemy.types=aliens,monsters
    player.maximum-lives=5
  user-interface.properties: |
    color.good=purple
    color.bad=yellow
    allow.textmode=true
---
apiVersion: v1
kind: Pod
metadata: {name: configmap-demo-pod}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: demo
    image: alpine
    command: ["sleep", "3600"]
    env:
    - {name: PLAYER_INITIAL_LIVES, valueFrom: {configMapKeyRef: {name: game-demo, key: player_initial_lives}}}
    - {name: UI_PROPERTIES_FILE_NAME, valueFrom: {configMapKeyRef: {name: game-demo, key: ui_properties_file_name}}}
    volumeMounts: [{name: config, mountPath: "/config", readOnly: true}]
  volumes:
  - name: config
    configMap:
      name: game-demo
      items:
      - {key: "game.properties", path: "game.properties"}
      - {key: "user-interface.properties", path: "user-interface.properties"}`,
		expect: []expect{execHas("configmap-demo-pod", "", "^3\nuser-interface.properties\n$", "printenv", "PLAYER_INITIAL_LIVES", "UI_PROPERTIES_FILE_NAME"),
			execHas("configmap-demo-pod", "", "^enemy.types=aliens,monsters\nplayer.maximum-lives=5\n$", "cat", "/config/game.properties")}},
	{name: "mypod", page: "concepts/configuration/secret", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: mypod}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - name: mypod
    image: redis
    volumeMounts: [{name: foo, mountPath: "/etc/foo", readOnly: true}]
  volumes:
  - name: foo
    secret: {secretName: mysecret, optional: true}`,
		expect: []expect{execHas("mypod", "", "^my-username$", "cat", "/etc/foo/username")}},
	{name: "test-pd", page: "concepts/storage/volumes", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: test-pd}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  containers:
  - image: registry.k8s.io/test-webserver
    name: test-container
    volumeMounts: [{mountPath: /cache, name: cache-volume}]
  volumes:
  - name: cache-volume
    emptyDir: {sizeLimit: 500Mi}`,
		expect: []expect{readyIs("test-pd"), execHas("test-pd", "", "^$", "ls", "/cache")}},
	{name: "default-pod", page: "tutorials/security/seccomp", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: default-pod, labels: {app: default-pod}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  securityContext:
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: test-container
    image: hashicorp/http-echo:1.0
    args: ["-text=just made some more syscalls!"]
    securityContext: {allowPrivilegeEscalation: false}`,
		expect: []expect{phaseIs("default-pod", running)}},
	{name: "termination-demo-fallback", page: "tasks/debug/debug-application/determine-reason-pod-failure", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: termination-demo-fallback}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  restartPolicy: Never
  containers:
  - name: termination-demo-container
    image: debian
    terminationMessagePolicy: FallbackToLogsOnError
    command: ["/bin/sh"]
    args: ["-c", "echo Something went wrong >&2; exit 1"]`,
		expect: []expect{terminatedWith("termination-demo-fallback", "Error", "Something went wrong")}},
	{name: "ambassador-sidecar-example", page: "concepts/workloads/pods/sidecar-containers", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: ambassador-sidecar-example}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  initContainers:
  - name: ambassador-sidecar
    image: docker.io/alpine/socat:1.8.0.3
    restartPolicy: Always
    args: ["tcp-listen:5432,fork", "tcp-connect:external-db.example.com:5432"]
    ports: [{containerPort: 5432}]
  containers:
  - name: main-app
    image: registry.k8s.io/busybox:1.27.2
    command: ["sh", "-c", "while true; do sleep 3600; done"]
    env: [{name: DATABASE_URL, value: "localhost:5432"}]`,
		expect: []expect{readyIs("ambassador-sidecar-example"), execHas("ambassador-sidecar-example", "main-app", "^localhost:5432\n$", "printenv", "DATABASE_URL")}},
}

// busyboxHostname is the DNS page's busybox pod with a hostname and a subdomain.
func busyboxHostname(name, hostname string) string {
	return `
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, labels: {name: busybox}}
spec:
  nodeSelector: {kubernetes.io/hostname: NODE}
  hostname: ` + hostname + `
  subdomain: busybox-subdomain
  containers:
  - image: busybox:1.28
    command: [sleep, "3600"]
    name: busybox`
}
