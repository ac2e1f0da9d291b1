package volume

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// EnvVar is one variable of a container's environment, ready for the CRI.
type EnvVar struct {
	Name  string
	Value string
}

// EnvConfig is what MakeEnvironment reads besides the pod and the container.
type EnvConfig struct {
	// PodIPs are the pod's IPs, primary first: status.podIP is the first, status.podIPs all of
	// them. A host-network pod's are the node's (the caller sees to it, as upstream SyncPod).
	PodIPs []string
	// HostIPs are the node's IPs, primary first: status.hostIP and status.hostIPs.
	HostIPs []string
	// NodeAllocatable stands in for a limit a container does not set (cpu, memory,
	// ephemeral-storage) when a resourceFieldRef reads it.
	NodeAllocatable corev1.ResourceList
	// ServiceEnv are the service-link variables (ServiceEnv): added after the container's own
	// variables, and $(NAME) in a value may refer to them. Nil: none.
	ServiceEnv map[string]string
	// GetSecret and GetConfigMap fetch the objects env and envFrom name. Required.
	GetSecret    func(ns, name string) (*corev1.Secret, error)
	GetConfigMap func(ns, name string) (*corev1.ConfigMap, error)
}

// MakeEnvironment computes a container's environment, as upstream makeEnvironmentVariables.
// First envFrom, in order: every key of the ConfigMap's data or the Secret's data, with the
// prefix prepended; keys that are not valid variable names (the relaxed rule of v1.36:
// printable ASCII without '=') are skipped; a missing object is skipped when optional. Then
// env, in order, each entry overriding an earlier variable of the same name:
//
//	value             $(NAME) replaced by the value of a variable defined before it (by envFrom
//	                  or an earlier env entry), else of a service-link variable; see
//	                  container.Expand
//	secretKeyRef      one key of a Secret; missing object or key skipped when optional
//	configMapKeyRef   one key of a ConfigMap's data; likewise
//	fieldRef          metadata.name, .namespace, .uid, .labels, .annotations (and ['key']),
//	                  status.podIP, .podIPs, .hostIP, .hostIPs (comma-separated lists),
//	                  spec.nodeName, spec.serviceAccountName
//	resourceFieldRef  limits.* / requests.* of cpu, memory, ephemeral-storage, hugepages-*,
//	                  divided by the divisor and rounded up; a missing limit is the node's
//	                  allocatable (resourceFieldValue)
//
// Last, the service-link variables (cfg.ServiceEnv) whose names the container does not define.
//
// Each object found is fetched once per call, as upstream; (nil, nil) and a NotFound
// error both mean the object does not exist. Errors read as upstream's, because the kubelet
// shows them as the container's waiting message (reason CreateContainerConfigError):
//
//	secret "db-pass" not found
//	couldn't find key password in Secret default/db-pass
//
// The result lists the container's variables in first-definition order, then the service-link
// ones sorted by name (upstream's order is a map's). Simplified: no fileKeyRef (an error).
func MakeEnvironment(pod *corev1.Pod, c *corev1.Container, cfg EnvConfig) ([]EnvVar, error) {
	m := &envMaker{pod: pod, c: c, cfg: cfg,
		objs: envObjects{namespace: pod.Namespace, getSecret: cfg.GetSecret, getConfigMap: cfg.GetConfigMap}}

	// (1) envFrom.
	for _, from := range c.EnvFrom {
		if err := m.addEnvFrom(from); err != nil {
			return nil, err
		}
	}

	// (2) env.
	for _, ev := range c.Env {
		value, ok, err := m.value(ev)
		if err != nil {
			return nil, err
		}
		if ok {
			m.env.set(ev.Name, value)
		}
	}

	// (3) The service links the container does not define itself.
	return m.withServiceLinks(), nil
}

// envMaker is one MakeEnvironment call: its inputs, the objects fetched so far and the variables
// defined so far.
type envMaker struct {
	pod  *corev1.Pod
	c    *corev1.Container
	cfg  EnvConfig
	objs envObjects
	env  envList
}

// addEnvFrom adds every key of one envFrom source — a ConfigMap's data or a Secret's data — to
// the environment, in key order, with the prefix prepended; it skips keys that are not valid
// variable names, and a missing object when optional.
func (m *envMaker) addEnvFrom(from corev1.EnvFromSource) error {
	var data map[string]string
	switch {
	case from.ConfigMapRef != nil:
		cm, err := m.objs.configMap(from.ConfigMapRef.Name)
		if err != nil {
			return skipIfOptional(err, from.ConfigMapRef.Optional)
		}
		data = cm.Data
	case from.SecretRef != nil:
		s, err := m.objs.secret(from.SecretRef.Name)
		if err != nil {
			return skipIfOptional(err, from.SecretRef.Optional)
		}
		data = make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			data[k] = string(v)
		}
	}
	for _, k := range sortedKeys(data) {
		name := from.Prefix + k
		if len(validation.IsRelaxedEnvVarName(name)) > 0 {
			continue
		}
		m.env.set(name, data[k])
	}
	return nil
}

// skipIfOptional is nil, "skip this source", when err says the object does not exist and the
// reference is optional; else err.
func skipIfOptional(err error, optional *bool) error {
	if apierrors.IsNotFound(err) && isTrue(optional) {
		return nil
	}
	return err
}

// value computes the value of one env entry, given the variables defined before it. ok is false
// when the entry is skipped: an optional key whose object or key is missing.
func (m *envMaker) value(ev corev1.EnvVar) (value string, ok bool, err error) {
	switch {
	case ev.Value != "":
		return kubecontainer.Expand(ev.Value, func(name string) (string, bool) {
			if v, ok := m.env.lookup(name); ok {
				return v, true
			}
			v, ok := m.cfg.ServiceEnv[name]
			return v, ok
		}), true, nil
	case ev.ValueFrom == nil:
		return "", true, nil // an empty value is still a variable
	case ev.ValueFrom.FieldRef != nil:
		v, err := envFieldValue(m.pod, ev.ValueFrom.FieldRef.FieldPath, m.cfg.PodIPs, m.cfg.HostIPs)
		if err != nil {
			return "", false, fmt.Errorf("env %s: %w", ev.Name, err)
		}
		return v, true, nil
	case ev.ValueFrom.ConfigMapKeyRef != nil:
		return m.objs.configMapKey(ev.ValueFrom.ConfigMapKeyRef)
	case ev.ValueFrom.SecretKeyRef != nil:
		return m.objs.secretKey(ev.ValueFrom.SecretKeyRef)
	case ev.ValueFrom.ResourceFieldRef != nil:
		v, err := resourceFieldValue(ev.ValueFrom.ResourceFieldRef, m.pod, m.c, m.cfg.NodeAllocatable)
		return v, err == nil, err
	case ev.ValueFrom.FileKeyRef != nil:
		return "", false, fmt.Errorf("env %s: fileKeyRef is not supported by minikubelet", ev.Name)
	}
	return "", true, nil
}

// configMapKey is one key of a ConfigMap's data (configMapKeyRef); ok is false when the
// ConfigMap or the key is missing and the reference is optional.
func (o *envObjects) configMapKey(ref *corev1.ConfigMapKeySelector) (value string, ok bool, err error) {
	cm, err := o.configMap(ref.Name)
	if err != nil {
		return "", false, skipIfOptional(err, ref.Optional)
	}
	v, ok := cm.Data[ref.Key]
	if !ok && !isTrue(ref.Optional) {
		return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, o.namespace, ref.Name)
	}
	return v, ok, nil
}

// secretKey is one key of a Secret's data (secretKeyRef); ok is false when the Secret or the key
// is missing and the reference is optional.
func (o *envObjects) secretKey(ref *corev1.SecretKeySelector) (value string, ok bool, err error) {
	s, err := o.secret(ref.Name)
	if err != nil {
		return "", false, skipIfOptional(err, ref.Optional)
	}
	v, ok := s.Data[ref.Key]
	if !ok && !isTrue(ref.Optional) {
		return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, o.namespace, ref.Name)
	}
	return string(v), ok, nil
}

// withServiceLinks is the container's variables in first-definition order, then the service-link
// variables whose names the container does not define, sorted by name.
func (m *envMaker) withServiceLinks() []EnvVar {
	out := m.env.vars()
	for _, name := range sortedKeys(m.cfg.ServiceEnv) {
		if _, defined := m.env.lookup(name); !defined {
			out = append(out, EnvVar{Name: name, Value: m.cfg.ServiceEnv[name]})
		}
	}
	return out
}

// envFieldValue adds the status fields to podFieldValue (upstream podFieldSelectorRuntimeValue):
// the primary IP, or all of them joined with ",".
func envFieldValue(pod *corev1.Pod, fieldPath string, podIPs, hostIPs []string) (string, error) {
	switch fieldPath {
	case "status.podIP":
		return first(podIPs), nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	case "status.hostIP":
		return first(hostIPs), nil
	case "status.hostIPs":
		return strings.Join(hostIPs, ","), nil
	}
	return podFieldValue(pod, fieldPath)
}

// first is ips[0], or "" when there is none.
func first(ips []string) string {
	if len(ips) == 0 {
		return ""
	}
	return ips[0]
}

// envObjects fetches each Secret and ConfigMap once per MakeEnvironment call, as upstream's
// local maps do, and turns "missing" into the NotFound error upstream's managers return.
type envObjects struct {
	namespace    string
	getSecret    func(ns, name string) (*corev1.Secret, error)
	getConfigMap func(ns, name string) (*corev1.ConfigMap, error)
	secrets      map[string]*corev1.Secret
	configMaps   map[string]*corev1.ConfigMap
}

func (o *envObjects) secret(name string) (*corev1.Secret, error) {
	if s, ok := o.secrets[name]; ok {
		return s, nil
	}
	s, err := o.getSecret(o.namespace, name)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && s == nil):
		// The wording of the kubelet's secret manager, whatever the getter said.
		return nil, apierrors.NewNotFound(corev1.Resource("secret"), name)
	case err != nil:
		return nil, fmt.Errorf("couldn't get secret %s/%s: %w", o.namespace, name, err)
	}
	if o.secrets == nil {
		o.secrets = make(map[string]*corev1.Secret)
	}
	o.secrets[name] = s
	return s, nil
}

func (o *envObjects) configMap(name string) (*corev1.ConfigMap, error) {
	if cm, ok := o.configMaps[name]; ok {
		return cm, nil
	}
	cm, err := o.getConfigMap(o.namespace, name)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && cm == nil):
		return nil, apierrors.NewNotFound(corev1.Resource("configmap"), name)
	case err != nil:
		return nil, fmt.Errorf("couldn't get configMap %s/%s: %w", o.namespace, name, err)
	}
	if o.configMaps == nil {
		o.configMaps = make(map[string]*corev1.ConfigMap)
	}
	o.configMaps[name] = cm
	return cm, nil
}

// envList is an ordered map: a name keeps the position of its first definition.
type envList struct {
	names  []string
	values map[string]string
}

func (e *envList) set(name, value string) {
	if e.values == nil {
		e.values = make(map[string]string)
	}
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *envList) lookup(name string) (string, bool) {
	v, ok := e.values[name]
	return v, ok
}

func (e *envList) vars() []EnvVar {
	out := make([]EnvVar, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, EnvVar{Name: n, Value: e.values[n]})
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }
