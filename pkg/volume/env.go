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
	objs := envObjects{namespace: pod.Namespace, getSecret: cfg.GetSecret, getConfigMap: cfg.GetConfigMap}
	var env envList

	// (1) envFrom.
	for _, from := range c.EnvFrom {
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			cm, err := objs.configMap(from.ConfigMapRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(from.ConfigMapRef.Optional) {
					continue
				}
				return nil, err
			}
			data = cm.Data
		case from.SecretRef != nil:
			s, err := objs.secret(from.SecretRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(from.SecretRef.Optional) {
					continue
				}
				return nil, err
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
			env.set(name, data[k])
		}
	}

	// (2) env.
	for _, ev := range c.Env {
		value := ev.Value
		switch {
		case value != "":
			value = kubecontainer.Expand(value, func(name string) (string, bool) {
				if v, ok := env.lookup(name); ok {
					return v, true
				}
				v, ok := cfg.ServiceEnv[name]
				return v, ok
			})
		case ev.ValueFrom == nil:
			// An empty value is still a variable.
		case ev.ValueFrom.FieldRef != nil:
			v, err := envFieldValue(pod, ev.ValueFrom.FieldRef.FieldPath, cfg.PodIPs, cfg.HostIPs)
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", ev.Name, err)
			}
			value = v
		case ev.ValueFrom.ConfigMapKeyRef != nil:
			ref := ev.ValueFrom.ConfigMapKeyRef
			cm, err := objs.configMap(ref.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
					continue
				}
				return nil, err
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if isTrue(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)
			}
			value = v
		case ev.ValueFrom.SecretKeyRef != nil:
			ref := ev.ValueFrom.SecretKeyRef
			s, err := objs.secret(ref.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
					continue
				}
				return nil, err
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if isTrue(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)
			}
			value = string(v)
		case ev.ValueFrom.ResourceFieldRef != nil:
			v, err := resourceFieldValue(ev.ValueFrom.ResourceFieldRef, pod, c, cfg.NodeAllocatable)
			if err != nil {
				return nil, err
			}
			value = v
		case ev.ValueFrom.FileKeyRef != nil:
			return nil, fmt.Errorf("env %s: fileKeyRef is not supported by minikubelet", ev.Name)
		}
		env.set(ev.Name, value)
	}

	// (3) The service links the container does not define itself.
	out := env.vars()
	for _, name := range sortedKeys(cfg.ServiceEnv) {
		if _, defined := env.lookup(name); !defined {
			out = append(out, EnvVar{Name: name, Value: cfg.ServiceEnv[name]})
		}
	}
	return out, nil
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
