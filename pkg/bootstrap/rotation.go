package bootstrap

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// RotatorConfig configures client certificate rotation.
type RotatorConfig struct {
	// Client talks to the API server as the node itself (the current certificate); a CSR it makes
	// is approved by kcm's selfnodeclient rule. Required.
	Client kubernetes.Interface
	// CertDir and NodeName as in Config. Required.
	CertDir  string
	NodeName string
	// CertDuration, if set, is requested as the CSR's expirationSeconds.
	CertDuration time.Duration
	// Timeout bounds the wait for one CSR to be issued. Default 5 min.
	Timeout time.Duration
	// OnRotate runs after a new certificate is in place: the client transport reloads it, then
	// closes its connections so they reconnect with it. Optional.
	OnRotate func()
	// Clock defaults to the real clock; Jitter to math/rand (a value in [0,1)).
	Clock  clock.Clock
	Jitter func() float64
}

// Rotator renews the client certificate before it expires, as upstream's certificate manager
// (k8s.io/client-go/util/certificate/certificate_manager.go) does for the kubelet.
type Rotator struct {
	cfg   RotatorConfig
	store store
	// what is "client" or "serving", for log lines.
	what string
	// request asks for a new certificate (a CSR) and waits until it is issued.
	request func(ctx context.Context) (certPEM, keyPEM []byte, err error)
	// missingIsDue: no certificate yet means "request one now" (serving), not an error (client:
	// TLS bootstrap always writes one first).
	missingIsDue bool
}

// NewRotator validates cfg and fills its defaults.
func NewRotator(cfg RotatorConfig) (*Rotator, error) {
	if cfg.Client == nil || cfg.CertDir == "" || cfg.NodeName == "" {
		return nil, errors.New("bootstrap: RotatorConfig needs Client, CertDir and NodeName")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	if cfg.OnRotate == nil {
		cfg.OnRotate = func() {}
	}
	r := &Rotator{cfg: cfg, store: clientStore(cfg.CertDir), what: "client"}
	r.request = func(ctx context.Context) ([]byte, []byte, error) {
		return requestClientCert(ctx, cfg.Client, cfg.NodeName, cfg.CertDuration, cfg.Timeout, "the node's current client certificate")
	}
	return r, nil
}

// nextRotationDeadline is when to rotate a certificate valid from notBefore to notAfter: after
// 70% to 90% of its lifetime (jitter in [0,1) picks where), so that a fleet of nodes issued
// certificates at the same moment does not renew at the same moment.
func nextRotationDeadline(notBefore, notAfter time.Time, jitter float64) time.Time {
	total := notAfter.Sub(notBefore)
	return notBefore.Add(time.Duration(float64(total) * (0.7 + 0.2*jitter)))
}

// minRotationPause is the least time between two certificate requests of the rotator.
const minRotationPause = 30 * time.Second

// retryBackoff is how long to wait before retrying a failed rotation: doubling from 1 s, capped
// at 5 min.
func retryBackoff(prev time.Duration) time.Duration {
	next := prev * 2
	if next < time.Second {
		next = time.Second
	}
	return min(next, 5*time.Minute)
}

// Run rotates the certificate whenever it is due, until ctx is cancelled.
func (r *Rotator) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	var backoff time.Duration
	for {
		wait, err := r.rotateIfDue(ctx)
		if err != nil {
			backoff = retryBackoff(backoff)
			logger.Error(err, "Certificate rotation failed; will retry", "certificate", r.what, "retryIn", backoff)
			wait = backoff
		} else {
			backoff = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-r.cfg.Clock.After(wait):
		}
	}
}

// rotateIfDue is one turn of the rotation loop: if the current certificate has passed its
// (jittered) deadline, request a new one and swap it in. It returns how long to wait until the
// next check.
func (r *Rotator) rotateIfDue(ctx context.Context) (time.Duration, error) {
	logger := klog.FromContext(ctx).WithValues("certificate", r.what)
	cert, err := r.store.current()
	switch {
	case err != nil && r.missingIsDue && errors.Is(err, fs.ErrNotExist):
		logger.Info("No certificate yet; requesting one")
	case err != nil:
		return 0, err
	default:
		now := r.cfg.Clock.Now()
		deadline := nextRotationDeadline(cert.NotBefore, cert.NotAfter, r.cfg.Jitter())
		if now.Before(deadline) {
			logger.V(2).Info("Certificate rotation scheduled", "expiration", cert.NotAfter, "rotationDeadline", deadline)
			return deadline.Sub(now), nil
		}
		logger.Info("Rotating the certificate", "expiration", cert.NotAfter)
	}
	certPEM, keyPEM, err := r.request(ctx)
	if err != nil {
		return 0, err
	}
	path, err := r.store.update(certPEM, keyPEM, r.cfg.Clock.Now())
	if err != nil {
		return 0, err
	}
	r.cfg.OnRotate()
	logger.Info("Rotated the certificate", "path", path)
	// Check the new certificate after a pause: if the signer issued one that is already due
	// (a short-lived CA, a clock ahead), do not ask for certificates back to back.
	return minRotationPause, nil
}
