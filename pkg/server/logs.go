package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// getContainerLogs serves GET /containerLogs/{namespace}/{pod}/{container}: what the API server
// calls for `kubectl logs` (pods/log). Upstream: getContainerLogs in server.go.
func (s *Server) getContainerLogs(w http.ResponseWriter, r *http.Request) {
	namespace, pod, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	logger := klog.FromContext(r.Context())

	opts, err := podLogOptions(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := validatePodLogOptions(opts); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}

	// stdout and stderr both go to the body, interleaved in the order the runtime logged them,
	// as upstream without the alpha PodLogsQuerySplitStreams feature.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fw := &flushWriter{w: w, rc: http.NewResponseController(w)}
	logger.V(4).Info("Serving container logs", "pod", klog.KRef(namespace, pod), "container", container, "follow", opts.Follow)
	err = s.cfg.Host.ContainerLogs(r.Context(), namespace, pod, container, opts, fw, fw)
	if err == nil {
		return
	}
	if fw.started() {
		// The status line is gone; all we can do is stop and say why in our log.
		logger.V(2).Info("Container logs stream ended with an error", "pod", klog.KRef(namespace, pod), "container", container, "err", err)
		return
	}
	status := http.StatusBadRequest // upstream answers 400 for every log error
	if apierrors.IsNotFound(err) {
		status = http.StatusNotFound
	}
	http.Error(w, err.Error(), status)
}

// podLogOptions decodes the query of a /containerLogs request into v1 PodLogOptions, as the
// API server's parameter codec does: booleans are true unless "0" or "false"; "tail" is the
// old name of tailLines ("all" means no limit).
func podLogOptions(query url.Values) (*corev1.PodLogOptions, error) {
	opts := &corev1.PodLogOptions{
		Follow:     queryBool(query, "follow"),
		Previous:   queryBool(query, "previous"),
		Timestamps: queryBool(query, "timestamps"),
	}
	var err error
	if opts.SinceSeconds, err = queryInt64(query, "sinceSeconds"); err != nil {
		return nil, err
	}
	if opts.LimitBytes, err = queryInt64(query, "limitBytes"); err != nil {
		return nil, err
	}
	if opts.TailLines, err = queryInt64(query, "tailLines"); err != nil {
		return nil, err
	}
	if tail := query.Get("tail"); tail != "" {
		opts.TailLines = nil
		if tail != "all" {
			n, err := strconv.ParseInt(tail, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("query parameter tail=%q: want a number of lines or \"all\"", tail)
			}
			opts.TailLines = &n
		}
	}
	if v := query.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, fmt.Errorf("query parameter sinceTime=%q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", v)
		}
		opts.SinceTime = &metav1.Time{Time: t}
	}
	if v := query.Get("stream"); v != "" {
		opts.Stream = &v
	}
	return opts, nil
}

// validatePodLogOptions is upstream's ValidatePodLogOptions (pkg/apis/core/validation) for a
// kubelet without stream selection.
func validatePodLogOptions(opts *corev1.PodLogOptions) error {
	var errs []error
	if opts.TailLines != nil && *opts.TailLines < 0 {
		errs = append(errs, fmt.Errorf("tailLines: must be greater than or equal to 0"))
	}
	if opts.LimitBytes != nil && *opts.LimitBytes < 1 {
		errs = append(errs, fmt.Errorf("limitBytes: must be greater than 0"))
	}
	switch {
	case opts.SinceSeconds != nil && opts.SinceTime != nil:
		errs = append(errs, errors.New("at most one of sinceTime or sinceSeconds may be specified"))
	case opts.SinceSeconds != nil && *opts.SinceSeconds < 1:
		errs = append(errs, fmt.Errorf("sinceSeconds: must be greater than 0"))
	}
	if opts.Stream != nil && *opts.Stream != corev1.LogStreamAll {
		errs = append(errs, fmt.Errorf("stream %q: this kubelet returns stdout and stderr together (stream=All) only", *opts.Stream))
	}
	return errors.Join(errs...)
}

func queryBool(query url.Values, name string) bool {
	values, ok := query[name]
	if !ok || len(values) == 0 {
		return false
	}
	return values[0] != "0" && !strings.EqualFold(values[0], "false")
}

func queryInt64(query url.Values, name string) (*int64, error) {
	v := query.Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("query parameter %s=%q: want an integer", name, v)
	}
	return &n, nil
}

// flushWriter flushes the response after every write, so `kubectl logs -f` sees each line as it
// is logged (upstream: k8s.io/apiserver/pkg/util/flushwriter). It is safe for concurrent use,
// because a Host may write stdout and stderr from two goroutines.
type flushWriter struct {
	mu    sync.Mutex
	w     io.Writer
	rc    *http.ResponseController
	wrote bool
}

func (f *flushWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.w.Write(p)
	if n > 0 {
		f.wrote = true
	}
	if err != nil {
		return n, err
	}
	if err := f.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return n, err
	}
	return n, nil
}

// started reports whether any byte reached the response (so its status is already sent).
func (f *flushWriter) started() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wrote
}
