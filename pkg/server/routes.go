package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// routes registers the handlers, with the upstream paths (pkg/kubelet/server/server.go,
// InstallAuthNotRequiredHandlers and InstallAuthRequiredHandlers). Every route sits behind
// withAuth.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.getHealthz)
	mux.HandleFunc("GET /pods", s.getPods)
	if s.cfg.Configz != nil {
		mux.HandleFunc("GET /configz", s.getConfigz)
	}
	if s.cfg.Metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.cfg.Metrics, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	}
	if s.cfg.ResourceMetrics != nil {
		mux.Handle("GET /metrics/resource", promhttp.HandlerFor(s.cfg.ResourceMetrics, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	}
	if s.cfg.Stats != nil {
		// upstream accepts GET and POST (pkg/kubelet/server/stats/handler.go)
		mux.HandleFunc("GET /stats/summary", s.getStatsSummary)
		mux.HandleFunc("POST /stats/summary", s.getStatsSummary)
	}
	if s.cfg.Profiling {
		// As upstream: go tool pprof https://<node>:10250/debug/pprof/heap with a client
		// certificate allowed nodes/proxy.
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.getContainerLogs)
	if s.cfg.Journal != nil {
		journal.Routes(mux, s.cfg.Journal) // /debug/journal, /debug/journal/ui
	}

	// kubectl exec/attach/port-forward come as upgrade requests; upstream accepts GET and POST.
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		mux.HandleFunc(method+" /exec/{namespace}/{pod}/{container}", s.getExec)
		mux.HandleFunc(method+" /exec/{namespace}/{pod}/{uid}/{container}", s.getExec)
		mux.HandleFunc(method+" /attach/{namespace}/{pod}/{container}", s.getAttach)
		mux.HandleFunc(method+" /attach/{namespace}/{pod}/{uid}/{container}", s.getAttach)
		mux.HandleFunc(method+" /portForward/{namespace}/{pod}", s.getPortForward)
		mux.HandleFunc(method+" /portForward/{namespace}/{pod}/{uid}", s.getPortForward)
	}
	mux.HandleFunc("POST /run/{namespace}/{pod}/{container}", s.getRun)
	mux.HandleFunc("POST /run/{namespace}/{pod}/{uid}/{container}", s.getRun)
	return mux
}

// getHealthz answers "ok". Upstream also runs the syncloop health check here; minikubelet has
// no checks on this port yet.
func (s *Server) getHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = io.WriteString(w, "ok")
}

// getPods returns the pods bound to this kubelet as a v1 PodList.
func (s *Server) getPods(w http.ResponseWriter, r *http.Request) {
	list := podList(s.cfg.Host.GetPods())
	writeJSON(w, r, list)
}

// getStatsSummary returns the node's Summary as JSON; with ?only_cpu_and_memory=true only its
// CPU and memory figures, as upstream's handleSummary.
func (s *Server) getStatsSummary(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, fmt.Sprintf("Internal Error: parse form failed: %v", err), http.StatusInternalServerError)
		return
	}
	get := s.cfg.Stats.Summary
	if only := r.Form["only_cpu_and_memory"]; len(only) == 1 && only[0] == "true" {
		get = s.cfg.Stats.CPUAndMemoryStats
	}
	summary, err := get(r.Context())
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "HTTP InternalServerError serving", "request", "/stats/summary")
		http.Error(w, fmt.Sprintf("Internal Error: %v", err), http.StatusInternalServerError)
		return
	}
	writeJSON(w, r, summary)
}

// podList wraps pods into a v1 PodList, as upstream's encodePods.
func podList(pods []*corev1.Pod) *corev1.PodList {
	list := &corev1.PodList{Items: make([]corev1.Pod, 0, len(pods))}
	list.Kind, list.APIVersion = "PodList", "v1"
	for _, pod := range pods {
		list.Items = append(list.Items, *pod)
	}
	return list
}

// getConfigz returns the running configuration under the name "kubeletconfig", the shape of
// k8s.io/component-base/configz.
func (s *Server) getConfigz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, map[string]any{"kubeletconfig": s.cfg.Configz()})
}

func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, fmt.Sprintf("encode response: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(data); err != nil {
		klog.FromContext(r.Context()).V(4).Info("Failed to write response", "path", r.URL.Path, "err", err)
	}
}
