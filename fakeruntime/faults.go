package fakeruntime

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Fault is one way to break the runtime on purpose, for teaching. Faults() is the whole fault API:
// the admin server serves each fault at POST Path with its FaultArgs as JSON (admin.go),
// AdminClient.Inject posts there, Runtime.Inject applies a fault in-process, and
// `minikubelet fake-runtime` has one subcommand per fault, built from the same entry.
type Fault struct {
	// Use is the CLI subcommand and its positional arguments; its first word is the fault's name.
	Use string
	// Short is the subcommand's one line of help.
	Short string
	// Path is where the admin API serves the fault.
	Path string
	// Args returns the fields of a that the positional arguments fill, in order; nil for none.
	Args func(a *FaultArgs) []*string
	// Flags declares the optional arguments as flags on fs, with their CLI defaults; nil for none.
	Flags func(fs *pflag.FlagSet, a *FaultArgs)
	// Done is what the CLI prints once the fault is in place.
	Done func(a FaultArgs) string
	// applyLocked puts the fault in place; r.mu is held. Its errors are gRPC statuses
	// (InvalidArgument, NotFound, FailedPrecondition): the admin API answers HTTP 400, 404, 409.
	applyLocked func(r *Runtime, a FaultArgs) error
}

// FaultArgs are the arguments of every fault; each reads the fields its entry names. As JSON, they
// are the body of the admin API's POST.
type FaultArgs struct {
	ID       string `json:"id,omitempty"`       // kill-container, sandbox-not-ready: an ID or unique prefix
	ExitCode int32  `json:"exitCode,omitempty"` // kill-container
	Image    string `json:"image,omitempty"`    // fail-pulls
	Count    int    `json:"count,omitempty"`    // fail-pulls: <= 0 clears the fault
	Method   string `json:"method,omitempty"`   // latency: a CRI method like "ListContainers", or "*"
	Duration string `json:"duration,omitempty"` // latency: a Go duration like "1.5s"; "0s" clears
	Reason   string `json:"reason,omitempty"`   // runtime-not-ready
	Message  string `json:"message,omitempty"`  // fail-pulls, runtime-not-ready
}

// Name is the fault's name: the first word of Use.
func (f Fault) Name() string {
	name, _, _ := strings.Cut(f.Use, " ")
	return name
}

// Faults lists the faults the runtime can inject: one entry per fault, each built by a function of
// its own below, whose applyLocked is a method of Runtime (a breakpoint on, say,
// fake.(*Runtime).killContainerLocked stops where the fault takes effect).
func Faults() []Fault {
	return []Fault{
		killContainerFault(),
		sandboxNotReadyFault(),
		failPullsFault(),
		latencyFault(),
		runtimeNotReadyFault(),
		runtimeReadyFault(),
		eventsOffFault(),
		eventsOnFault(),
	}
}

// idArg is the positional argument of the faults that name a container or sandbox.
func idArg(a *FaultArgs) []*string { return []*string{&a.ID} }

func killContainerFault() Fault {
	return Fault{
		Use:   "kill-container CONTAINER-ID",
		Short: "Make a running container exit with --exit-code (as if its process died)",
		Path:  "/kill-container",
		Args:  idArg,
		Flags: func(fs *pflag.FlagSet, a *FaultArgs) {
			fs.Int32Var(&a.ExitCode, "exit-code", 137, "the exit code the container reports")
		},
		Done:        func(a FaultArgs) string { return fmt.Sprintf("container %s exited with code %d", a.ID, a.ExitCode) },
		applyLocked: (*Runtime).killContainerLocked,
	}
}

// killContainerLocked makes a running container exit, as if its process crashed or the OOM killer
// struck.
func (r *Runtime) killContainerLocked(a FaultArgs) error {
	c, err := r.containerLocked(a.ID)
	if err != nil {
		return err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "container %q is %s: only a RUNNING container can be killed", c.id, c.state)
	}
	r.exitLocked(c, a.ExitCode, reasonFor(a.ExitCode), "killed by fault injection")
	return nil
}

func sandboxNotReadyFault() Fault {
	return Fault{
		Use:         "sandbox-not-ready SANDBOX-ID",
		Short:       "Mark a pod sandbox NOTREADY (as if its network namespace vanished)",
		Path:        "/sandbox-not-ready",
		Args:        idArg,
		Done:        func(a FaultArgs) string { return "sandbox " + a.ID + " is NOTREADY" },
		applyLocked: (*Runtime).sandboxNotReadyLocked,
	}
}

// sandboxNotReadyLocked marks a sandbox NOTREADY. Its containers keep running; the kubelet is
// expected to notice and recreate the pod.
func (r *Runtime) sandboxNotReadyLocked(a FaultArgs) error {
	s, err := r.sandboxLocked(a.ID)
	if err != nil {
		return err
	}
	if s.state != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		r.publishLocked(s.id, s, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	}
	return nil
}

func failPullsFault() Fault {
	return Fault{
		Use:   "fail-pulls IMAGE",
		Short: "Make the next --count pulls of IMAGE fail with --message",
		Path:  "/fail-next-pulls",
		Args:  func(a *FaultArgs) []*string { return []*string{&a.Image} },
		Flags: func(fs *pflag.FlagSet, a *FaultArgs) {
			fs.IntVar(&a.Count, "count", 1, "how many pulls fail")
			fs.StringVar(&a.Message, "message", "injected pull failure", "the error message")
		},
		Done:        func(a FaultArgs) string { return fmt.Sprintf("the next %d pulls of %s will fail", a.Count, a.Image) },
		applyLocked: (*Runtime).failPullsLocked,
	}
}

// failPullsLocked makes the next a.Count pulls of a.Image fail (takePullFailure); a count <= 0
// clears the fault.
func (r *Runtime) failPullsLocked(a FaultArgs) error {
	if a.Image == "" {
		return status.Error(codes.InvalidArgument, "image is required")
	}
	if a.Message == "" {
		a.Message = "injected pull failure"
	}
	key := normalizeImageRef(a.Image)
	if a.Count <= 0 {
		delete(r.faults.pullFailures, key)
		return nil
	}
	r.faults.pullFailures[key] = &pullFailure{remaining: a.Count, message: a.Message}
	return nil
}

func latencyFault() Fault {
	return Fault{
		Use:   "latency METHOD DURATION",
		Short: "Delay every call of a CRI method (e.g. ListContainers 2s; 0s removes it)",
		Path:  "/latency",
		Args:  func(a *FaultArgs) []*string { return []*string{&a.Method, &a.Duration} },
		Done: func(a FaultArgs) string {
			d, _ := time.ParseDuration(a.Duration) // valid: the fault is in place
			return fmt.Sprintf("%s now takes %s longer", a.Method, d)
		},
		applyLocked: (*Runtime).latencyLocked,
	}
}

// latencyLocked sets the delay of a CRI method; a duration <= 0 removes it. The delay runs on the
// runtime's clock, before the call (injectLatency).
func (r *Runtime) latencyLocked(a FaultArgs) error {
	d, err := time.ParseDuration(a.Duration)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "duration %q: %v (write it like \"1.5s\")", a.Duration, err)
	}
	if a.Method == "" {
		return status.Error(codes.InvalidArgument, `method is required: a CRI method name like "ListContainers", or "*"`)
	}
	if d <= 0 {
		delete(r.faults.latency, a.Method)
		return nil
	}
	r.faults.latency[a.Method] = d
	return nil
}

func runtimeNotReadyFault() Fault {
	return Fault{
		Use:   "runtime-not-ready",
		Short: "Make the runtime's Status report RuntimeReady=false (the node goes NotReady)",
		Path:  "/runtime-not-ready",
		Flags: func(fs *pflag.FlagSet, a *FaultArgs) {
			fs.StringVar(&a.Reason, "reason", "InjectedFault", "the condition's reason")
			fs.StringVar(&a.Message, "message", "made not ready with minikubelet fake-runtime", "the condition's message")
		},
		Done:        func(FaultArgs) string { return "the runtime reports not ready" },
		applyLocked: (*Runtime).runtimeNotReadyLocked,
	}
}

// runtimeNotReadyLocked makes Status report RuntimeReady=false. Other calls keep working.
func (r *Runtime) runtimeNotReadyLocked(a FaultArgs) error {
	if a.Reason == "" {
		a.Reason = "FaultInjected"
	}
	r.faults.runtimeDown = &runtimeapi.RuntimeCondition{Type: runtimeapi.RuntimeReady, Status: false, Reason: a.Reason, Message: a.Message}
	return nil
}

func runtimeReadyFault() Fault {
	return Fault{
		Use:   "runtime-ready",
		Short: "Undo runtime-not-ready",
		Path:  "/runtime-ready",
		Done:  func(FaultArgs) string { return "the runtime reports ready" },
		applyLocked: func(r *Runtime, _ FaultArgs) error {
			r.faults.runtimeDown = nil
			return nil
		},
	}
}

func eventsOffFault() Fault {
	return Fault{
		Use:         "events-off",
		Short:       "End the GetContainerEvents streams and answer new ones Unimplemented, as containerd 1.6 does",
		Path:        "/events-off",
		Done:        func(FaultArgs) string { return "GetContainerEvents is Unimplemented; open streams ended" },
		applyLocked: (*Runtime).eventsOffLocked,
	}
}

// eventsOffLocked ends the open GetContainerEvents streams and answers new ones Unimplemented.
// The kubelet's evented PLEG falls back to relisting every second, and retries.
func (r *Runtime) eventsOffLocked(FaultArgs) error {
	r.faults.eventsOff = true
	for ch := range r.events {
		r.events.unsubscribe(ch) // its stream ends with eventsEndedLocked's error
	}
	return nil
}

func eventsOnFault() Fault {
	return Fault{
		Use:   "events-on",
		Short: "Undo events-off",
		Path:  "/events-on",
		Done:  func(FaultArgs) string { return "GetContainerEvents streams events again" },
		applyLocked: func(r *Runtime, _ FaultArgs) error {
			r.faults.eventsOff = false
			return nil
		},
	}
}

// findFault returns the fault called name.
func findFault(name string) (Fault, error) {
	for _, f := range Faults() {
		if f.Name() == name {
			return f, nil
		}
	}
	return Fault{}, status.Errorf(codes.InvalidArgument, "unknown fault %q: Faults() lists them", name)
}

// Inject puts the fault called name in place with args, as the admin API does.
func (r *Runtime) Inject(name string, args FaultArgs) error {
	f, err := findFault(name)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return f.applyLocked(r, args)
}

// faults holds the faults in place that outlive their injection. Guarded by Runtime.mu.
type faults struct {
	pullFailures map[string]*pullFailure      // by normalized image reference
	latency      map[string]time.Duration     // by short method name, e.g. "ListContainers"
	runtimeDown  *runtimeapi.RuntimeCondition // non-nil: RuntimeReady is false
	eventsOff    bool                         // GetContainerEvents answers Unimplemented
}

type pullFailure struct {
	remaining int
	message   string
}

// takePullFailure consumes one injected failure for ref, if any.
func (f *faults) takePullFailure(ref string) error {
	key := normalizeImageRef(ref)
	pf := f.pullFailures[key]
	if pf == nil {
		return nil
	}
	if pf.remaining--; pf.remaining <= 0 {
		delete(f.pullFailures, key)
	}
	return status.Errorf(codes.Unknown, "failed to pull image %q: %s", ref, pf.message)
}

// injectLatency waits the delay configured for method, if any, or until ctx ends.
func (r *Runtime) injectLatency(ctx context.Context, method string) error {
	r.mu.Lock()
	d, ok := r.faults.latency[method]
	if !ok {
		d = r.faults.latency["*"]
	}
	r.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// describe lists active faults for Status's verbose info.
func (f *faults) describe() map[string]string {
	out := map[string]string{}
	for img, pf := range f.pullFailures {
		out["failPulls/"+img] = fmt.Sprintf("%d left: %s", pf.remaining, pf.message)
	}
	for m, d := range f.latency {
		out["latency/"+m] = d.String()
	}
	if f.eventsOff {
		out["eventsOff"] = "GetContainerEvents is Unimplemented"
	}
	return out
}
