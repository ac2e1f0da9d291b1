package volume

import (
	"errors"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The payload functions are pure: objects in, files out. Fetching the objects is the caller's
// job (Projector, or a test), so every rule below is table-tested without a filesystem.

// SecretPayload is upstream secret.MakePayload plus the "secret is missing" decision of the
// secret plugin's SetUpAt. secret == nil means the Secret does not exist: an error
// (`secret "name" not found`) unless the volume is optional, then an empty volume.
// Without items every key becomes a file named after it; with items only the listed keys,
// at item.path, and a listed key the Secret lacks is an error unless optional.
func SecretPayload(vol *corev1.SecretVolumeSource, secret *corev1.Secret) (map[string]FileProjection, error) {
	optional := vol.Optional != nil && *vol.Optional
	if secret == nil {
		if !optional {
			return nil, apierrors.NewNotFound(corev1.Resource("secret"), vol.SecretName)
		}
		secret = &corev1.Secret{}
	}
	return makePayload(vol.Items, secret.Data, modeOr(vol.DefaultMode, corev1.SecretVolumeSourceDefaultMode), optional,
		func(key string) error {
			return fmt.Errorf("secret %q references non-existent secret key: %s", vol.SecretName, key)
		})
}

// ConfigMapPayload is upstream configmap.MakePayload: as SecretPayload, with the keys of both
// data and binaryData (the API server keeps the two key sets disjoint).
func ConfigMapPayload(vol *corev1.ConfigMapVolumeSource, cm *corev1.ConfigMap) (map[string]FileProjection, error) {
	optional := vol.Optional != nil && *vol.Optional
	if cm == nil {
		if !optional {
			return nil, apierrors.NewNotFound(corev1.Resource("configmap"), vol.Name)
		}
		cm = &corev1.ConfigMap{}
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return makePayload(vol.Items, data, modeOr(vol.DefaultMode, corev1.ConfigMapVolumeSourceDefaultMode), optional,
		func(key string) error {
			return fmt.Errorf("configmap %q references non-existent config key: %s", vol.Name, key)
		})
}

// makePayload is the part secret and configMap share.
func makePayload(items []corev1.KeyToPath, data map[string][]byte, defaultMode int32, optional bool,
	missingKey func(key string) error) (map[string]FileProjection, error) {
	payload := make(map[string]FileProjection, len(data))
	if len(items) == 0 {
		for k, v := range data {
			payload[k] = FileProjection{Data: v, Mode: defaultMode}
		}
		return payload, nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, missingKey(item.Key)
		}
		payload[item.Path] = FileProjection{Data: v, Mode: modeOr(item.Mode, defaultMode)}
	}
	return payload, nil
}

// DownwardAPIPayload is upstream downwardapi.CollectData for a downwardAPI volume: one file per
// item with the value of its fieldRef (see podFieldValue) or its resourceFieldRef (a container's
// request or limit, a limit it does not set read from the pod-level limit or allocatable, the
// node's allocatable: see resourceFieldValue).
func DownwardAPIPayload(vol *corev1.DownwardAPIVolumeSource, pod *corev1.Pod, allocatable corev1.ResourceList) (map[string]FileProjection, error) {
	return downwardAPIItems(vol.Items, pod, modeOr(vol.DefaultMode, corev1.DownwardAPIVolumeSourceDefaultMode), allocatable)
}

func downwardAPIItems(items []corev1.DownwardAPIVolumeFile, pod *corev1.Pod, defaultMode int32, allocatable corev1.ResourceList) (map[string]FileProjection, error) {
	payload := make(map[string]FileProjection, len(items))
	var errs []error
	for _, item := range items {
		var value string
		switch {
		case item.FieldRef != nil:
			v, err := podFieldValue(pod, item.FieldRef.FieldPath)
			if err != nil {
				errs = append(errs, fmt.Errorf("downward API item %q: %w", item.Path, err))
				continue
			}
			value = v
		case item.ResourceFieldRef != nil:
			// In a volume a resourceFieldRef must name its container (API validation).
			if item.ResourceFieldRef.ContainerName == "" {
				errs = append(errs, fmt.Errorf("downward API item %q: resourceFieldRef must name a containerName in a volume", item.Path))
				continue
			}
			v, err := resourceFieldValue(item.ResourceFieldRef, pod, nil, allocatable)
			if err != nil {
				errs = append(errs, fmt.Errorf("downward API item %q: %w", item.Path, err))
				continue
			}
			value = v
		}
		payload[filepath.Clean(item.Path)] = FileProjection{Data: []byte(value), Mode: modeOr(item.Mode, defaultMode)}
	}
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	return payload, nil
}

// ProjectedPayload is upstream projectedVolumeMounter.collectData: the sources' payloads merged
// into one volume, later sources winning on equal paths. getSecret and getConfigMap look up an
// object in the pod's namespace; (nil, nil) or a NotFound error both mean "missing", which an
// optional source turns into "no files". getToken returns a token of a service account of the
// pod's namespace (in the kubelet: the token manager); see tokenRequest for what is asked.
// Errors of all sources are reported together.
//
// Every file gets the volume's defaultMode (0644 by default); the token too, or 0600 when the
// pod sets fsGroup (tokenPayload).
// clusterTrustBundle and podCertificate sources are errors: a missing certificate must not look
// like a working volume.
func ProjectedPayload(vol *corev1.ProjectedVolumeSource,
	getSecret func(name string) (*corev1.Secret, error),
	getConfigMap func(name string) (*corev1.ConfigMap, error),
	getToken func(serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error),
	pod *corev1.Pod, allocatable corev1.ResourceList) (map[string]FileProjection, error) {
	defaultMode := modeOr(vol.DefaultMode, corev1.ProjectedVolumeSourceDefaultMode)
	payload := make(map[string]FileProjection)
	var errs []error
	for i, src := range vol.Sources {
		var part map[string]FileProjection
		var err error
		switch {
		case src.Secret != nil:
			var s *corev1.Secret
			if s, err = getSecret(src.Secret.Name); apierrors.IsNotFound(err) {
				s, err = nil, nil
			} else if err != nil {
				err = fmt.Errorf("couldn't get secret %s/%s: %w", pod.Namespace, src.Secret.Name, err)
			}
			if err == nil {
				part, err = SecretPayload(&corev1.SecretVolumeSource{
					SecretName: src.Secret.Name, Items: src.Secret.Items, DefaultMode: &defaultMode, Optional: src.Secret.Optional,
				}, s)
			}
		case src.ConfigMap != nil:
			var cm *corev1.ConfigMap
			if cm, err = getConfigMap(src.ConfigMap.Name); apierrors.IsNotFound(err) {
				cm, err = nil, nil
			} else if err != nil {
				err = fmt.Errorf("couldn't get configMap %s/%s: %w", pod.Namespace, src.ConfigMap.Name, err)
			}
			if err == nil {
				part, err = ConfigMapPayload(&corev1.ConfigMapVolumeSource{
					LocalObjectReference: src.ConfigMap.LocalObjectReference, Items: src.ConfigMap.Items, DefaultMode: &defaultMode, Optional: src.ConfigMap.Optional,
				}, cm)
			}
		case src.DownwardAPI != nil:
			part, err = downwardAPIItems(src.DownwardAPI.Items, pod, defaultMode, allocatable)
		case src.ServiceAccountToken != nil:
			part, err = tokenPayload(src.ServiceAccountToken, pod, defaultMode, getToken)
		case src.ClusterTrustBundle != nil:
			err = errors.New("clusterTrustBundle sources are not supported by minikubelet")
		case src.PodCertificate != nil:
			err = errors.New("podCertificate sources are not supported by minikubelet")
		default:
			err = errors.New("source sets no known field")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("projected source %d: %w", i, err))
			continue
		}
		for k, v := range part {
			payload[k] = v
		}
	}
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	return payload, nil
}

// tokenPayload is the serviceAccountToken source: one file at its path with a token of the
// pod's service account, bound to the pod. Its mode is the volume's defaultMode, or 0600 when the
// pod sets fsGroup: the volume's ownership (ownership.go) then makes it 0640, readable by the
// pod's containers and no one else (upstream collectData; upstream also gives it 0600 and the
// containers' common runAsUser as owner — FsUser — which we do not).
func tokenPayload(src *corev1.ServiceAccountTokenProjection, pod *corev1.Pod, mode int32,
	getToken func(serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)) (map[string]FileProjection, error) {
	if pod.Spec.ServiceAccountName == "" {
		return nil, errors.New("serviceAccountToken: the pod names no service account " +
			"(the API server sets spec.serviceAccountName; a static pod cannot use service account tokens)")
	}
	tr, err := getToken(pod.Spec.ServiceAccountName, tokenRequest(src, pod))
	if err != nil {
		return nil, err
	}
	if podFSGroup(pod) != nil {
		mode = 0o600
	}
	return map[string]FileProjection{src.Path: {Data: []byte(tr.Status.Token), Mode: mode}}, nil
}

// tokenRequest is what the kubelet asks the TokenRequest API for a serviceAccountToken source
// (upstream collectData): the source's audience (none: the API server's own audiences) and
// expirationSeconds (nil: the API default, 1 h; kube-api-access volumes ask for 3607 s), bound
// to the pod, so the token stops being valid when the pod is deleted.
func tokenRequest(src *corev1.ServiceAccountTokenProjection, pod *corev1.Pod) *authenticationv1.TokenRequest {
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		tr.Spec.Audiences = []string{src.Audience}
	}
	return tr
}

func modeOr(mode *int32, def int32) int32 {
	if mode != nil {
		return *mode
	}
	return def
}
