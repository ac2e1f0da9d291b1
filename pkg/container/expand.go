package container

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Expand replaces variable references in s, with the rules of upstream
// third_party/forked/golang/expansion, which the kubelet uses for env values, command and args,
// and exec probe and hook commands:
//
//	$(NAME)  → the value of NAME if lookup knows it, else "$(NAME)" unchanged
//	$$       → "$" (so "$$(NAME)" is the literal "$(NAME)")
//	$( without a closing ")" , or "$" before anything else → unchanged
//
// One pass: a value that itself holds "$(X)" is not expanded again.
func Expand(s string, lookup func(name string) (string, bool)) string {
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

// ExpandAll expands every word of words with vars (nil for nil).
func ExpandAll(words []string, vars map[string]string) []string {
	if words == nil {
		return nil
	}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Expand(w, lookup)
	}
	return out
}

// StaticEnv is a container's env as an exec probe or hook sees it: each entry's literal value
// ("" for a valueFrom entry), as upstream ExpandContainerCommandOnlyStatic.
func StaticEnv(env []corev1.EnvVar) map[string]string {
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	return vars
}
