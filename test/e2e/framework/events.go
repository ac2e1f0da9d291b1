package framework

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Events are "source Type Reason Message" of the Events about the object ns/name, as `kubectl
// describe` lists them, each with the component that reported it.
func (c *Cluster) Events(t *testing.T, ns, name string) []string {
	t.Helper()
	list, err := c.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Source.Component+" "+e.Type+" "+e.Reason+" "+e.Message)
	}
	return out
}

// HasEvent says whether one of events (as Events lists them) starts with prefix.
func HasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}
