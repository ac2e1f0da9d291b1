package volume

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podFieldValue resolves a downward API fieldPath against the pod, as upstream
// fieldpath.ExtractFieldPathAsString plus the spec fields of podFieldSelectorRuntimeValue.
// The status fields (podIP, hostIP) are not in the pod object the kubelet holds while it
// starts containers, so env.go resolves them from its arguments before calling this.
//
//	metadata.name, metadata.namespace, metadata.uid
//	metadata.labels, metadata.annotations          all pairs, one key="value" per line, sorted
//	metadata.labels['k'], metadata.annotations['k'] one value ("" when absent)
//	spec.nodeName, spec.serviceAccountName
//
// The API server accepts spec.* only in env, not in volumes; we do not repeat that check.
func podFieldValue(pod *corev1.Pod, fieldPath string) (string, error) {
	if p, key, ok := splitSubscript(fieldPath); ok {
		switch p {
		case "metadata.labels":
			return pod.Labels[key], nil
		case "metadata.annotations":
			return pod.Annotations[key], nil
		}
		return "", fmt.Errorf("fieldPath %q does not support subscript", fieldPath)
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %s", fieldPath)
}

// splitSubscript splits "metadata.labels['app']" into ("metadata.labels", "app", true).
func splitSubscript(fieldPath string) (p, key string, ok bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	p, key, ok = strings.Cut(strings.TrimSuffix(fieldPath, "']"), "['")
	if !ok {
		return fieldPath, "", false
	}
	return p, key, true
}

// formatMap renders labels or annotations as upstream fieldpath.FormatMap: key="value" lines,
// sorted by key, the value quoted Go-style, no trailing newline.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(m[k]))
	}
	return b.String()
}
