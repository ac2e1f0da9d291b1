package main

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lab 07, the secret and configmap managers: a pod reads a Secret as a file and as an env
// variable, and a ConfigMap as a file; after the Secret is updated the file follows (at the pod's
// next sync), the env variable does not; /metrics counts the managers' API requests.
const (
	lab07App      = "lab07-app"
	lab07Secret   = "lab07-secret"
	lab07Config   = "lab07-config"
	lab07Manifest = "labs/07-secret-configmap-managers/lab07.yaml"
	lab07Apply    = "kubectl apply -f " + lab07Manifest
	// lab07Original is the Secret's value in the manifest; the exercise changes it.
	lab07Original = "s3cret"
	lab07Update   = `kubectl patch secret ` + lab07Secret + ` -p '{"stringData":{"password":"n3w-value"}}'`
	metricName    = "kubelet_object_manager_api_requests_total"
)

func lab07() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		{name: "the Secret was updated", run: func(ctx context.Context, e *env) result {
			value, r := secretValue(ctx, e)
			if !r.ok {
				return r
			}
			return secretUpdated(e.podRef(lab07Secret), value)
		}},
		podRunning(lab07App, lab07Apply),
		{name: "the secret volume shows the Secret's current value", needs: []string{podRuns(lab07App)}, run: func(ctx context.Context, e *env) result {
			value, r := secretValue(ctx, e)
			if !r.ok {
				return r
			}
			return fileShows(e.exec(ctx, lab07App, nil, "cat", "/etc/secret/password"), "/etc/secret/password", value,
				"the kubelet rewrites secret volumes at the pod's next sync (syncFrequency, 1 min by default): wait and run the check again")
		}},
		{name: "the env variable from the Secret", needs: []string{podRuns(lab07App)}, run: func(ctx context.Context, e *env) result {
			res := e.exec(ctx, lab07App, nil, "printenv", "PASSWORD")
			value := strings.TrimSpace(res.stdout)
			if res.err != nil || res.exitCode != 0 || value == "" {
				return missing(fmt.Sprintf("printenv PASSWORD in %s: exit %d, %v %s", lab07App, res.exitCode, res.err, res.stderr),
					"the pod must be created from "+lab07Manifest+" (env PASSWORD from secretKeyRef)")
			}
			return passed("PASSWORD=%q: set when the container started, it does not follow the Secret", value)
		}},
		{name: "the configmap volume", needs: []string{podRuns(lab07App)}, run: func(ctx context.Context, e *env) result {
			cm, err := e.client.CoreV1().ConfigMaps(e.cfg.namespace).Get(ctx, lab07Config, metav1.GetOptions{})
			if err != nil {
				return missing("ConfigMap "+e.podRef(lab07Config)+": "+err.Error(), "create it: "+lab07Apply)
			}
			return fileShows(e.exec(ctx, lab07App, nil, "cat", "/etc/config/greeting"), "/etc/config/greeting", cm.Data["greeting"],
				"the kubelet rewrites configmap volumes at the pod's next sync: wait and run the check again")
		}},
		{name: "the managers' API requests in /metrics", needs: []string{podRuns(lab07App)}, run: func(ctx context.Context, e *env) result {
			body, err := e.kubeletGet(ctx, "/metrics")
			if err != nil {
				return missing("the kubelet's /metrics cannot be read: "+err.Error(),
					"is the kubelet API up? The check uses the admin client certificate of "+e.cfg.kubeconfig)
			}
			return objectRequests(parseObjectRequests(string(body)))
		}},
	}
}

func secretValue(ctx context.Context, e *env) (string, result) {
	s, err := e.client.CoreV1().Secrets(e.cfg.namespace).Get(ctx, lab07Secret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", missing("Secret "+e.podRef(lab07Secret)+" does not exist", "create it and the pod: "+lab07Apply)
	}
	if err != nil {
		return "", missing("Secret "+e.podRef(lab07Secret)+": "+err.Error(), "see the error")
	}
	return string(s.Data["password"]), passed("")
}

// secretUpdated: exercise 2 changed the Secret's password from the manifest's. Pure.
func secretUpdated(ref, value string) result {
	if value == lab07Original {
		return missing("Secret "+ref+" still has password="+lab07Original, "do exercise 2: "+lab07Update)
	}
	return passed("Secret %s has password=%q (the manifest said %q)", ref, value, lab07Original)
}

// fileShows: cat of the file in the container printed want. Pure.
func fileShows(res execResult, path, want, fix string) result {
	got := strings.TrimSuffix(res.stdout, "\n")
	if res.err != nil || res.exitCode != 0 {
		return missing(fmt.Sprintf("cat %s through the API server failed: exit %d, %v %s", path, res.exitCode, res.err, strings.TrimSpace(res.stderr)),
			"is the volume mounted there? The pod must be created from "+lab07Manifest)
	}
	if got != want {
		return missing(fmt.Sprintf("%s shows %q, the API object has %q", path, got, want), fix)
	}
	return passed("kubectl exec %s -- cat %s → %q, as in the API", lab07App, path, got)
}

// parseObjectRequests reads kubelet_object_manager_api_requests_total from Prometheus text:
// kind → verb → count. Pure.
func parseObjectRequests(text string) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metricName+"{") {
			continue
		}
		labels, value, ok := strings.Cut(strings.TrimPrefix(line, metricName+"{"), "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		var kind, verb string
		for _, kv := range strings.Split(labels, ",") {
			k, val, _ := strings.Cut(kv, "=")
			val = strings.Trim(val, `"`)
			switch k {
			case "kind":
				kind = val
			case "verb":
				verb = val
			}
		}
		if out[kind] == nil {
			out[kind] = map[string]float64{}
		}
		out[kind][verb] = v
	}
	return out
}

// objectRequests: the secret manager has asked the API server for Secrets at least once. Pure.
func objectRequests(counts map[string]map[string]float64) result {
	total := 0.0
	for _, v := range counts["secrets"] {
		total += v
	}
	if total == 0 {
		return missing(metricName+" counts no request for secrets",
			"the pod's Secret is fetched when the pod is first synced: is "+lab07App+" running on this node?")
	}
	var parts []string
	for _, kind := range []string{"secrets", "configmaps"} {
		verbs := make([]string, 0, len(counts[kind]))
		for verb := range counts[kind] {
			verbs = append(verbs, verb)
		}
		sort.Strings(verbs)
		for _, verb := range verbs {
			parts = append(parts, fmt.Sprintf("%s %s=%g", kind, verb, counts[kind][verb]))
		}
	}
	return passed("%s: %s", metricName, strings.Join(parts, ", "))
}
