package container

import (
	"slices"
	"testing"
)

// Upstream expansion.Expand (third_party/forked/golang/expansion).
func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B": "$(A)", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "alpha"},
		{"x-$(A)-y", "x-alpha-y"},
		{"$(A)$(A)", "alphaalpha"},
		{"$(MISSING)", "$(MISSING)"},
		{"$(EMPTY)x", "x"},
		{"$(B)", "$(A)"}, // one pass: values are not expanded again
		{"$$(A)", "$(A)"},
		{"$$", "$"},
		{"$$$(A)", "$alpha"},
		{"$(A", "$(A"},
		{"$A", "$A"},
		{"a$", "a$"},
		{"$()", "$()"},
		{"100$ and $(A)", "100$ and alpha"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := Expand(tc.in, lookup); got != tc.want {
				t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestExpandAll(t *testing.T) {
	if got := ExpandAll(nil, nil); got != nil {
		t.Errorf("ExpandAll(nil) = %q, want nil", got)
	}
	got := ExpandAll([]string{"echo", "$(MSG)", "$(NONE)"}, map[string]string{"MSG": "hi"})
	if want := []string{"echo", "hi", "$(NONE)"}; !slices.Equal(got, want) {
		t.Errorf("ExpandAll = %q, want %q", got, want)
	}
}
