package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/klog/v2"
)

// webhookRetryBackoff is how often a TokenReview or SubjectAccessReview is retried while the
// API server fails; the values of k8s.io/apiserver/pkg/server/options.DefaultAuthWebhookRetryBackoff
// (not imported: that package pulls in the whole etcd storage stack).
func webhookRetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// buildAuthn builds the request authenticator as upstream BuildAuthn
// (cmd/kubelet/app/auth.go): x509 client certificates, then bearer tokens by TokenReview, then
// (only if enabled) anonymous. It also returns the client CA file provider, which Run reloads.
func buildAuthn(cfg Config) (authenticator.Request, *dynamiccertificates.DynamicFileCAContent, error) {
	authnConfig := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous: &apiserver.AnonymousAuthConfig{Enabled: cfg.Anonymous},
		CacheTTL:  cfg.AuthnCacheTTL,
	}

	var caFile *dynamiccertificates.DynamicFileCAContent
	switch {
	case cfg.ClientCAFile != "":
		var err error
		caFile, err = dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", cfg.ClientCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("load client CA file %q (authentication.x509.clientCAFile): %w", cfg.ClientCAFile, err)
		}
		authnConfig.ClientCertificateCAContentProvider = caFile
	case len(cfg.ClientCAData) > 0:
		ca, err := dynamiccertificates.NewStaticCAContent("client-ca-bundle", cfg.ClientCAData)
		if err != nil {
			return nil, nil, fmt.Errorf("load client CA data: %w", err)
		}
		authnConfig.ClientCertificateCAContentProvider = ca
	}

	if cfg.WebhookAuthn {
		authnConfig.TokenAccessReviewClient = cfg.Client.AuthenticationV1()
		authnConfig.WebhookRetryBackoff = webhookRetryBackoff()
	}

	authn, _, err := authnConfig.New()
	if err != nil {
		return nil, nil, fmt.Errorf("build kubelet API authenticator: %w (configure a client CA, webhook authentication, or allow anonymous requests)", err)
	}
	return authn, caFile, nil
}

// buildAuthz builds the authorizer as upstream BuildAuthz: SubjectAccessReview in mode
// Webhook, allow-all otherwise.
func buildAuthz(cfg Config) (authorizer.Authorizer, error) {
	if !cfg.WebhookAuthz {
		return authorizerfactory.NewAlwaysAllowAuthorizer(), nil
	}
	authzConfig := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: cfg.Client.AuthorizationV1(),
		AllowCacheTTL:             cfg.AuthzAuthorizedTTL,
		DenyCacheTTL:              cfg.AuthzUnauthorizedTTL,
		WebhookRetryBackoff:       webhookRetryBackoff(),
	}
	authz, err := authzConfig.New()
	if err != nil {
		return nil, fmt.Errorf("build kubelet API authorizer: %w", err)
	}
	return authz, nil
}

// withAuth is upstream's InstallAuthFilter: authenticate (401), build the authorization
// attributes, and let the request through if any of them is allowed (403 otherwise).
func (s *Server) withAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logger := klog.FromContext(r.Context())

		resp, ok, err := s.authn.AuthenticateRequest(r)
		if err != nil {
			logger.Error(err, "Unable to authenticate the request", "path", r.URL.Path)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}

		attrs := requestAttributes(resp.User, r, s.cfg.NodeName)
		subresources := make([]string, 0, len(attrs))
		for _, attr := range attrs {
			subresources = append(subresources, attr.GetSubresource())
			decision, _, err := s.authz.Authorize(r.Context(), attr)
			if err != nil {
				logger.Error(err, "Authorization error", "user", attr.GetUser().GetName(), "verb", attr.GetVerb(),
					"resource", attr.GetResource(), "subresource", attr.GetSubresource())
				http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
					attr.GetUser().GetName(), attr.GetVerb(), attr.GetResource(), attr.GetSubresource()), http.StatusInternalServerError)
				return
			}
			if decision == authorizer.DecisionAllow {
				next.ServeHTTP(w, r)
				return
			}
		}

		// The attributes differ only in their subresource, so the first one speaks for all.
		first := attrs[0]
		logger.V(2).Info("Forbidden", "user", first.GetUser().GetName(), "verb", first.GetVerb(),
			"resource", first.GetResource(), "subresources", subresources)
		http.Error(w, forbiddenMessage(first, subresources), http.StatusForbidden)
	})
}

// forbiddenMessage is upstream's 403 body, e.g.
// "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[pods proxy])".
func forbiddenMessage(attr authorizer.Attributes, subresources []string) string {
	return fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)",
		attr.GetUser().GetName(), attr.GetVerb(), attr.GetResource(), subresources)
}

// Request paths with their own subresource (upstream pkg/kubelet/server/server.go constants).
const (
	podsPath        = "/pods"
	runningPodsPath = "/runningpods/"
	healthzPath     = "/healthz"
	configzPath     = "/configz"
	statsPath       = "/stats/"
	metricsPath     = "/metrics"
	logsPath        = "/logs/"
	checkpointPath  = "/checkpoint/"
	statuszPath     = "/statusz"
	flagzPath       = "/flagz"
)

// requestAttributes maps a kubelet API request to what the authorizer is asked, as upstream
// GetRequestAttributes (pkg/kubelet/server/auth.go) with KubeletFineGrainedAuthz, which is GA
// and locked on in v1.36. Every attribute is {verb from the HTTP method, resource=nodes,
// name=nodeName, subresource}; the request is allowed if any one is allowed:
//
//	/pods, /runningpods/*  → pods, then proxy
//	/healthz/*             → healthz, then proxy
//	/configz               → configz, then proxy
//	/stats/*               → stats
//	/metrics/*             → metrics
//	/logs/*                → log
//	/checkpoint/*          → checkpoint
//	/statusz               → statusz
//	/flagz                 → configz
//	/debug/journal, /debug/journal/ui → proxy, as upstream's /debug/pprof (minikubelet's journal)
//	anything else          → proxy (/exec, /attach, /portForward, /run, /containerLogs, /spec, /debug, …)
//
// So a user allowed nodes/proxy may do everything, and a monitoring agent allowed only
// nodes/metrics may scrape but not exec.
func requestAttributes(u user.Info, r *http.Request, nodeName string) []authorizer.Attributes {
	verb := ""
	switch r.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodGet:
		verb = "get"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	}

	path := r.URL.Path
	var subresources []string
	// Fine-grained subresources come first; proxy, which covers them, is the fallback.
	switch {
	case isSubpath(path, podsPath):
		subresources = append(subresources, "pods")
	case isSubpath(path, healthzPath):
		subresources = append(subresources, "healthz")
	case isSubpath(path, configzPath):
		subresources = append(subresources, "configz")
	case isSubpath(path, runningPodsPath):
		subresources = append(subresources, "pods")
	}
	switch {
	case isSubpath(path, statsPath):
		subresources = append(subresources, "stats")
	case isSubpath(path, metricsPath):
		subresources = append(subresources, "metrics")
	case isSubpath(path, logsPath):
		subresources = append(subresources, "log") // as pods/log
	case isSubpath(path, checkpointPath):
		subresources = append(subresources, "checkpoint")
	case isSubpath(path, statuszPath):
		subresources = append(subresources, "statusz")
	case isSubpath(path, flagzPath):
		subresources = append(subresources, "configz")
	default:
		subresources = append(subresources, "proxy")
	}

	attrs := make([]authorizer.Attributes, 0, len(subresources))
	for _, subresource := range subresources {
		attrs = append(attrs, authorizer.AttributesRecord{
			User:            u,
			Verb:            verb,
			APIVersion:      "v1",
			Resource:        "nodes",
			Subresource:     subresource,
			Name:            nodeName,
			ResourceRequest: true,
			Path:            path,
		})
	}
	return attrs
}

// isSubpath reports whether subpath is path or below it ("/stats" and "/stats/summary" are
// below "/stats/"; "/statsz" is not).
func isSubpath(subpath, path string) bool {
	path = strings.TrimSuffix(path, "/")
	return subpath == path || (strings.HasPrefix(subpath, path) && subpath[len(path)] == '/')
}
