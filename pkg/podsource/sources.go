package podsource

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// updatesBuffer is the capacity of the Updates channel, as upstream's PodConfig.
const updatesBuffer = 50

// Config configures the pod sources.
type Config struct {
	// Client watches the pods bound to this node. nil disables the apiserver source (a standalone
	// kubelet that runs static pods only).
	Client kubernetes.Interface
	// NodeName selects our pods (spec.nodeName) and suffixes static pod names. Required.
	NodeName string
	// ManifestDir holds static pod manifests (--pod-manifest-path). "" disables the file source.
	ManifestDir string
	// FileCheckFrequency is how often ManifestDir is re-read even without a change notification
	// (config fileCheckFrequency). Default 20 s.
	FileCheckFrequency time.Duration
	// Recorder reports bad manifests (on the Node) and duplicate pod names. Required.
	Recorder record.EventRecorder
	// Clock drives the file source's ticker and the first-seen annotation. Default: the real clock.
	Clock clock.WithTicker
}

// Sources runs the enabled sources and merges them into one channel. Create it with New.
type Sources struct {
	updates chan PodUpdate
	merger  *merger
	// enabled names the sources AllSourcesReady waits for.
	enabled   []string
	apiserver *apiserverSource // nil when disabled
	file      *fileSource      // nil when disabled
}

// New validates cfg, fills its defaults and prepares the sources; Run starts them.
func New(cfg Config) (*Sources, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("podsource: NodeName is required")
	}
	if cfg.Recorder == nil {
		return nil, errors.New("podsource: Recorder is required")
	}
	if cfg.Client == nil && cfg.ManifestDir == "" {
		return nil, errors.New("podsource: no pod source: set Client (pods from the API server) or ManifestDir (static pods), or both")
	}
	if cfg.FileCheckFrequency == 0 {
		cfg.FileCheckFrequency = 20 * time.Second
	}
	if cfg.FileCheckFrequency < 0 {
		return nil, fmt.Errorf("podsource: FileCheckFrequency %s must be positive", cfg.FileCheckFrequency)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}

	updates := make(chan PodUpdate, updatesBuffer)
	s := &Sources{updates: updates, merger: newMerger(cfg.Clock, cfg.Recorder, updates)}
	if cfg.Client != nil {
		s.enabled = append(s.enabled, ApiserverSource)
		s.apiserver = &apiserverSource{
			client:   cfg.Client,
			nodeName: cfg.NodeName,
			clock:    cfg.Clock,
			merge:    func(ctx context.Context, pods []*corev1.Pod) { s.merger.Merge(ctx, ApiserverSource, pods) },
		}
	}
	if cfg.ManifestDir != "" {
		s.enabled = append(s.enabled, FileSource)
		s.file = &fileSource{
			dir:      filepath.Clean(cfg.ManifestDir),
			nodeName: cfg.NodeName,
			period:   cfg.FileCheckFrequency,
			clock:    cfg.Clock,
			recorder: cfg.Recorder,
			// Events about manifests go on the Node, as upstream's nodeRef (the UID is the name).
			nodeRef:  &corev1.ObjectReference{Kind: "Node", Name: cfg.NodeName, UID: types.UID(cfg.NodeName)},
			notify:   true,
			reported: map[string]string{},
			merge:    func(ctx context.Context, pods []*corev1.Pod) { s.merger.Merge(ctx, FileSource, pods) },
		}
	}
	return s, nil
}

// Updates is the channel of merged, incremental pod updates (the kubelet's configCh). It is
// never closed.
func (s *Sources) Updates() <-chan PodUpdate {
	return s.updates
}

// Run starts every enabled source and returns when ctx is done and they have stopped.
func (s *Sources) Run(ctx context.Context) {
	klog.FromContext(ctx).Info("Starting pod sources", "sources", s.enabled)
	var wg sync.WaitGroup
	if s.apiserver != nil {
		wg.Go(func() { s.apiserver.run(ctx) })
	}
	if s.file != nil {
		wg.Go(func() { s.file.run(ctx) })
	}
	wg.Wait()
}

// AllSourcesReady tells whether every enabled source has delivered its first full set of pods.
// Until then the kubelet must not treat a pod missing from the sources as deleted.
func (s *Sources) AllSourcesReady() bool {
	return s.merger.seenAll(s.enabled)
}
