package volume

// What a payload may name (upstream: pkg/volume/util/atomic_writer.go validatePayload,
// validatePath).

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

const (
	maxFileNameLength = 255
	maxPathLength     = 4096
)

// validatePayload checks every path and returns the payload keyed by cleaned paths.
func validatePayload(payload map[string]FileProjection) (map[string]FileProjection, error) {
	clean := make(map[string]FileProjection, len(payload))
	origin := make(map[string]string, len(payload))
	for _, p := range sortedKeys(payload) {
		if err := validatePath(p); err != nil {
			return nil, err
		}
		c := filepath.Clean(p)
		if prev, ok := origin[c]; ok {
			return nil, fmt.Errorf("invalid path: %q and %q name the same file", prev, p)
		}
		origin[c] = p
		clean[c] = payload[p]
	}
	return clean, nil
}

// validatePath is upstream's validatePath: a path may not be empty or absolute, contain a ".."
// element, start with ".." (those names are the writer's own), have an element longer than 255
// bytes or be longer than 4096 bytes. We also refuse paths that clean to "." ("./", "a/..").
func validatePath(p string) error {
	if p == "" {
		return errors.New("invalid path: must not be empty")
	}
	if path.IsAbs(p) {
		return fmt.Errorf("invalid path: must be relative path: %s", p)
	}
	if len(p) > maxPathLength {
		return fmt.Errorf("invalid path: must be less than or equal to %d characters", maxPathLength)
	}
	items := strings.Split(p, "/")
	for _, item := range items {
		if item == ".." {
			return fmt.Errorf("invalid path: must not contain '..': %s", p)
		}
		if len(item) > maxFileNameLength {
			return fmt.Errorf("invalid path: filenames must be less than or equal to %d characters", maxFileNameLength)
		}
	}
	if strings.HasPrefix(items[0], "..") {
		return fmt.Errorf("invalid path: must not start with '..': %s", p)
	}
	if filepath.Clean(p) == "." {
		return fmt.Errorf("invalid path: must name a file: %s", p)
	}
	return nil
}
