package podsource

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Event reasons for manifests the file source skips.
const (
	// ReasonFailedToParseManifest: the file is not YAML/JSON of a v1 Pod.
	ReasonFailedToParseManifest = "FailedToParseManifest"
	// ReasonInvalidManifest: it is a v1 Pod, but not one the kubelet can run.
	ReasonInvalidManifest = "InvalidManifest"
)

// maxManifestSize bounds what we read from one file, as upstream's maxConfigLength (10 MiB).
const maxManifestSize = 10 << 20

// manifestToPod turns the content of one manifest file into the static pod the kubelet runs
// (upstream common.go tryDecodeSinglePod + applyDefaults). On error, reason is the event reason.
func manifestToPod(data []byte, path, nodeName string) (pod *corev1.Pod, reason string, err error) {
	if len(data) > maxManifestSize {
		return nil, ReasonFailedToParseManifest, fmt.Errorf("the file has %d bytes, more than the %d a manifest may have", len(data), maxManifestSize)
	}
	pod, err = parseManifest(data)
	if err != nil {
		return nil, ReasonFailedToParseManifest, err
	}
	if err := validateManifestPod(pod, nodeName); err != nil {
		return nil, ReasonInvalidManifest, err
	}
	applyStaticPodDefaults(pod, staticPodUID(data, path, nodeName), nodeName)
	return pod, "", nil
}

// parseManifest decodes YAML or JSON (JSON is YAML) into a v1 Pod. Unknown fields are ignored, as
// upstream's decoder does.
func parseManifest(data []byte) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	if err := yaml.Unmarshal(data, pod); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if pod.Kind != "Pod" || pod.APIVersion != "v1" {
		return nil, fmt.Errorf("want apiVersion v1 and kind Pod, got apiVersion %q and kind %q", pod.APIVersion, pod.Kind)
	}
	return pod, nil
}

// validateManifestPod is our small stand-in for the API server's pod validation, which upstream
// runs on static pods: what the kubelet needs to run the pod and name it.
func validateManifestPod(pod *corev1.Pod, nodeName string) error {
	var errs []error
	if pod.Name == "" {
		errs = append(errs, errors.New("metadata.name is required"))
	} else if msgs := validation.IsDNS1123Subdomain(staticPodName(pod.Name, nodeName)); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("metadata.name %q (with the node name appended) is not a valid pod name: %s", pod.Name, strings.Join(msgs, "; ")))
	}
	if pod.Namespace != "" {
		if msgs := validation.IsDNS1123Label(pod.Namespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("metadata.namespace %q: %s", pod.Namespace, strings.Join(msgs, "; ")))
		}
	}
	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, errors.New("spec.containers: at least one container is required"))
	}
	names := map[string]bool{}
	check := func(field string, i int, c corev1.Container) {
		switch {
		case c.Name == "":
			errs = append(errs, fmt.Errorf("%s[%d].name is required", field, i))
		case names[c.Name]:
			errs = append(errs, fmt.Errorf("%s[%d].name %q is used by another container", field, i, c.Name))
		}
		names[c.Name] = true
		if c.Image == "" {
			errs = append(errs, fmt.Errorf("%s[%d].image is required", field, i))
		}
	}
	for i, c := range pod.Spec.InitContainers {
		check("spec.initContainers", i, c)
	}
	for i, c := range pod.Spec.Containers {
		check("spec.containers", i, c)
	}
	return errors.Join(errs...)
}

// staticPodUID hashes the file's content with the node name and the path, so the UID is stable
// across re-reads, differs between nodes and files, and changes when the file changes. 128 bits
// of SHA-256 in hex, as long as upstream's FNV-128 (which hashes the decoded pod instead).
func staticPodUID(data []byte, path, nodeName string) types.UID {
	h := sha256.New()
	h.Write(data)
	fmt.Fprintf(h, "host:%s", nodeName)
	fmt.Fprintf(h, "file:%s", path)
	return types.UID(hex.EncodeToString(h.Sum(nil)[:16]))
}

// staticPodName makes the name unique among nodes, as upstream's generatePodName.
func staticPodName(name, nodeName string) string {
	return name + "-" + strings.ToLower(nodeName)
}

// applyStaticPodDefaults sets what upstream's applyDefaults sets on a file pod, plus the few
// scheme defaults (normally filled by the API server) the kubelet relies on.
func applyStaticPodDefaults(pod *corev1.Pod, uid types.UID, nodeName string) {
	pod.UID = uid
	pod.Name = staticPodName(pod.Name, nodeName)
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[ConfigSourceAnnotationKey] = FileSource
	pod.Annotations[ConfigHashAnnotationKey] = string(uid)

	// Static pods tolerate every taint, so node problems never evict them.
	tolerateAll := corev1.Toleration{Operator: corev1.TolerationOpExists}
	if !slices.Contains(pod.Spec.Tolerations, tolerateAll) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, tolerateAll)
	}
	if pod.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	for i := range pod.Spec.InitContainers {
		defaultContainer(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		defaultContainer(&pod.Spec.Containers[i])
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
}

// defaultContainer: upstream's scheme would pick Always for an image without a tag or with
// :latest; we keep the one rule IfNotPresent.
func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
}
