package journal

import (
	corev1 "k8s.io/api/core/v1"
)

// Recorder is how a component writes to the journal: the wiring hands each component the
// Recorder of its source (Journal.For), and the component calls Record. It is a small value,
// safe to copy and to use from many goroutines. The zero Recorder records nothing, so every
// component works without a journal.
type Recorder struct {
	journal *Journal
	source  string
}

// For returns the Recorder of source's events (one of the Source constants). On a nil journal it
// is the zero Recorder.
func (j *Journal) For(source string) Recorder {
	if j == nil {
		return Recorder{}
	}
	return Recorder{journal: j, source: source}
}

// Enabled reports whether Record keeps anything, so a caller can skip building fields that
// nobody reads.
func (r Recorder) Enabled() bool { return r.journal != nil }

// Record records that kind happened to pod (the zero PodRef: to no single pod), with fields,
// which the journal keeps as given (see Event.Fields).
func (r Recorder) Record(kind string, pod PodRef, fields map[string]string) {
	if r.journal == nil {
		return
	}
	r.journal.Record(Event{Source: r.source, Kind: kind, Pod: PodKey(pod.Namespace, pod.Name), UID: pod.UID, Fields: fields})
}

// PodRef names the pod an event is about.
type PodRef struct {
	Namespace, Name, UID string
}

// Pod is the PodRef of pod; nil gives the zero PodRef (an event about no single pod).
func Pod(pod *corev1.Pod) PodRef {
	if pod == nil {
		return PodRef{}
	}
	return PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)}
}

// WithError adds err (when not nil) to fields as "error" and returns fields, made if nil.
func WithError(fields map[string]string, err error) map[string]string {
	if err == nil {
		return fields
	}
	if fields == nil {
		fields = map[string]string{}
	}
	fields["error"] = err.Error()
	return fields
}
