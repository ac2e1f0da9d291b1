package volume

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
)

// EnvVar is one variable of a container's environment, ready for the CRI.
type EnvVar struct {
	Name  string
	Value string
}

// MakeEnvironment computes a container's environment, as upstream makeEnvironmentVariables.
// First envFrom, in order: every key of the ConfigMap's data or the Secret's data, with the
// prefix prepended; keys that are not valid variable names (the relaxed rule of v1.36:
// printable ASCII without '=') are skipped; a missing object is skipped when optional. Then
// env, in order, each entry overriding an earlier variable of the same name:
//
//	value            $(NAME) replaced by the value of a variable defined before it
//	                 (by envFrom or an earlier env entry); see expand
//	secretKeyRef     one key of a Secret; missing object or key skipped when optional
//	configMapKeyRef  one key of a ConfigMap's data; likewise
//	fieldRef         metadata.name, .namespace, .uid, .labels, .annotations (and ['key']),
//	                 status.podIP, status.hostIP, spec.nodeName, spec.serviceAccountName
//
// Each object found is fetched once per call, as upstream; (nil, nil) and a NotFound
// error both mean the object does not exist. Errors read as upstream's, because the kubelet
// shows them as the container's waiting message (reason CreateContainerConfigError):
//
//	secret "db-pass" not found
//	couldn't find key password in Secret default/db-pass
//
// The result lists variables in first-definition order (upstream's order is a map's).
// Simplified: no service links (KUBERNETES_SERVICE_HOST & co.), no resourceFieldRef and no
// fileKeyRef (both are errors), podIPs/hostIPs are the single IPs given.
func MakeEnvironment(pod *corev1.Pod, c *corev1.Container, podIP, hostIP string,
	getSecret func(ns, name string) (*corev1.Secret, error),
	getConfigMap func(ns, name string) (*corev1.ConfigMap, error)) ([]EnvVar, error) {
	objs := envObjects{namespace: pod.Namespace, getSecret: getSecret, getConfigMap: getConfigMap}
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
			value = expand(value, env.lookup)
		case ev.ValueFrom == nil:
			// An empty value is still a variable.
		case ev.ValueFrom.FieldRef != nil:
			v, err := envFieldValue(pod, ev.ValueFrom.FieldRef.FieldPath, podIP, hostIP)
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
			return nil, fmt.Errorf("env %s: resourceFieldRef is not supported by minikubelet", ev.Name)
		case ev.ValueFrom.FileKeyRef != nil:
			return nil, fmt.Errorf("env %s: fileKeyRef is not supported by minikubelet", ev.Name)
		}
		env.set(ev.Name, value)
	}
	return env.vars(), nil
}

// envFieldValue adds the two status fields to podFieldValue.
func envFieldValue(pod *corev1.Pod, fieldPath, podIP, hostIP string) (string, error) {
	switch fieldPath {
	case "status.podIP", "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	}
	return podFieldValue(pod, fieldPath)
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

// expand replaces variable references in s, with the rules of upstream
// third_party/forked/golang/expansion (used for env values, command and args):
//
//	$(NAME)  → the value of NAME if lookup knows it, else "$(NAME)" unchanged
//	$$       → "$" (so "$$(NAME)" is the literal "$(NAME)")
//	$( without a closing ")" , or "$" before anything else → unchanged
func expand(s string, lookup func(name string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func isTrue(b *bool) bool { return b != nil && *b }
