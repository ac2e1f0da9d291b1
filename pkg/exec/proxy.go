package exec

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/klog/v2"
)

// proxyStream hands the request to the runtime's streaming server at rawURL, as upstream's
// getExec: an upgrade-aware reverse proxy that requires an upgrade (SPDY, or WebSocket), dials
// the runtime, replays the request there and then copies bytes both ways until one side closes.
// It uses no transport (a plain dial), since the URL is the runtime's local streaming server.
func proxyStream(w http.ResponseWriter, r *http.Request, rawURL string) {
	logger := klog.FromContext(r.Context())
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		logger.Error(err, "Runtime returned an unusable streaming URL", "url", rawURL)
		http.Error(w, fmt.Sprintf("runtime returned an unusable streaming URL %q", rawURL), http.StatusInternalServerError)
		return
	}
	logger.V(4).Info("Proxying stream to the runtime", "path", r.URL.Path, "streamingURL", u.Redacted())
	handler := proxy.NewUpgradeAwareHandler(u, nil /*transport*/, false /*wrapTransport*/, true /*upgradeRequired*/, proxyErrorResponder{logger: logger})
	handler.ServeHTTP(w, r)
}

// proxyErrorResponder answers a failed proxy attempt. Upstream's responder always answers 500;
// ours keeps the status of an API error, so a request without an upgrade gets the 400 "Upgrade
// request required" the proxy means, and a failure to reach the runtime is still a 500.
type proxyErrorResponder struct {
	logger klog.Logger
}

// The apimachinery proxy calls it on every error.
var _ proxy.ErrorResponder = proxyErrorResponder{}

func (p proxyErrorResponder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	status := http.StatusInternalServerError
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) && apiStatus.Status().Code != 0 {
		status = int(apiStatus.Status().Code)
	}
	if status >= http.StatusInternalServerError {
		p.logger.Error(err, "Error while proxying a stream to the runtime")
	}
	http.Error(w, err.Error(), status)
}

// WriteError answers a failed CRI call, as upstream's streaming.WriteError: NotFound → 404,
// ResourceExhausted (too many streams in flight) → 429, anything else → 500; and, where
// upstream answers 500, InvalidArgument and FailedPrecondition → 400, the caller's mistake.
func WriteError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch grpcstatus.Code(err) {
	case codes.NotFound:
		status = http.StatusNotFound
	case codes.InvalidArgument, codes.FailedPrecondition:
		status = http.StatusBadRequest
	case codes.ResourceExhausted:
		status = http.StatusTooManyRequests
	}
	http.Error(w, err.Error(), status)
}
