package ssa

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoac "k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/statusapply/statusapply/conflicts"
)

// Mode says what an apply intent starts from.
type Mode int

const (
	// Incremental starts from the fields the manager already owns on the
	// observed object, so a reconcile that only touches condition A keeps the
	// condition B the same manager applied last time. It is the default.
	Incremental Mode = iota
	// Declarative starts from nothing: whatever the build does not state is
	// released, as with a hand-written apply configuration.
	Declarative
)

// BuildFunc edits intent, the apply configuration of one Target as
// unstructured content that already names the object. observed is the object
// the decision is taken from, typed or unstructured as it was given to Apply
// (or as the API server returned it after a re-read); it must not be
// modified. It runs again, against a fresh observation, when a guarded apply
// is retried, so it must be a deterministic function of observed.
type BuildFunc func(intent *unstructured.Unstructured, observed client.Object) error

// Build says how to build one Target's intent.
type Build struct {
	// Func builds the intent as unstructured content. It is required: Apply
	// uses it whenever Typed is nil or does not apply.
	Func BuildFunc
	// Typed builds the same intent in the apply configuration type its
	// mutators edit, which spares converting it to and from unstructured
	// content. Apply uses it for unguarded applies whose conflict policy does
	// not yield, on typed observed objects.
	Typed *TypedBuild
}

// TypedBuild builds an intent in its own apply configuration type.
type TypedBuild struct {
	// Type is the apply configuration type, a pointer to a generated struct
	// such as *WidgetApplyConfiguration.
	Type reflect.Type
	// Mutate edits ac, of Type, already holding the object's identity and, in
	// incremental mode, what the manager owns. observed must not be modified.
	Mutate func(ac any, observed client.Object) error
}

// ApplyOptions tune one Apply.
type ApplyOptions struct {
	// Mode is Incremental unless set.
	Mode Mode
	// Guarded sends the observed resourceVersion with the apply and, when it is
	// stale, reads the object again and rebuilds the intent.
	Guarded bool
	// Policy decides what to do about a field-manager conflict. Nil means the
	// policy WithConflictPolicy set for the manager, or conflicts.Fail.
	Policy *conflicts.Policy
	// DryRun sends the apply as a server-side dry run (DryRunAll): the API
	// server checks, merges and answers with the object it would store, and
	// stores nothing. The Applier remembers nothing from a dry run, neither
	// from its answer nor from the observation, and a dry run counts in no
	// metric but the request latency and the reads it makes.
	DryRun bool
	// AsOwner, with DryRun, asks what the intent would make of the object if
	// the manager owned every field it states: a dry run that meets a
	// field-manager conflict is sent again, still as a dry run, with
	// ForceOwnership, whatever the conflict policy (which is not consulted,
	// and yields nothing), and Result.Taken lists the contested fields and
	// their owners instead of an error. Shadow mode compares that answer with
	// the live object. Apply refuses AsOwner without DryRun: statusapply
	// forces a write only for a TakeDeclared policy's declared fields.
	AsOwner bool
}

// Result is what Apply did.
type Result struct {
	// Object is the object after Apply: the API server's response, or the
	// observed object (possibly read again) when nothing was sent. It has the
	// observed object's Go type.
	Object client.Object
	// Observed is the object the last attempt's intent was built on: the
	// observation given to Apply, or the object read again from the API
	// server (for a missing managedFields or a guarded retry, as
	// unstructured content). A guarded apply that was sent was applied by
	// the API server to exactly this object: its resourceVersion was the
	// precondition.
	Observed client.Object
	// Sent is false when the intent changed nothing and no request was made.
	Sent bool
	// Intent is the apply configuration sent last, as JSON; nil when nothing
	// was sent.
	Intent []byte
	// Attempts counts the applies sent, retries included.
	Attempts int
	// Yielded are the contested fields a Yield policy left out of the apply.
	Yielded []conflicts.Conflict
	// Taken are the contested fields a TakeDeclared policy forced, or that
	// an AsOwner dry run forced.
	Taken []conflicts.Conflict
}

// Applier applies field managers' intents with server-side apply. It is safe
// for concurrent use and meant to live as long as the controller: it holds the
// per-object lanes that serialise this process's applies to one object, and
// remembers what each manager owns (see DefaultOwnedCacheSize).
type Applier struct {
	client  client.Client
	cfg     config
	tc      managedfields.TypeConverter
	lanes   lanes
	metrics *metrics
	owned   *ownedCache
	schemas kindSchemas
	layouts layouts
	names   validNames
}

// NewApplier returns an Applier writing through c. Built-in kinds are known;
// add custom resources' schemas with WithTypeConverter.
func NewApplier(c client.Client, opts ...Option) (*Applier, error) {
	if c == nil {
		return nil, invalidf("nil client")
	}
	cfg := defaultConfig(c)
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.scheme == nil {
		return nil, invalidf("no scheme: the client has none and WithScheme was not given")
	}
	m, err := newMetrics(cfg.registerer)
	if err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	converters := append(append([]managedfields.TypeConverter{}, cfg.converters...), clientgoac.NewTypeConverter(cfg.scheme))
	return &Applier{
		client: c, cfg: cfg, tc: TypeConverters(converters...), metrics: m, owned: newOwnedCache(cfg.ownedCacheSize),
	}, nil
}

// Scheme is the scheme the Applier maps typed objects with.
func (a *Applier) Scheme() *runtime.Scheme { return a.cfg.scheme }

// EventRecorder is the recorder WithEventRecorder set, or nil: batches record
// their own Events (shadow-mode divergence) through it.
func (a *Applier) EventRecorder() conflicts.EventRecorder { return a.cfg.recorder }

// TypeConverter is the combined schema source of the Applier.
func (a *Applier) TypeConverter() managedfields.TypeConverter { return a.tc }

// Apply writes t's intent, built by b on top of what the manager owns on
// observed (see Mode), with one server-side apply that does not force
// ownership, unless the intent changes nothing. observed may be typed or
// unstructured; it is not modified. Applies to the same object from this
// Applier are sent one at a time. A field-manager conflict is handled by the
// conflict policy (ApplyOptions.Policy, else the manager's, else Fail, which
// returns a *conflicts.Error); a guarded apply's stale resourceVersion leads
// to a read, a rebuild and a retry, bounded by the guard backoff. Errors are
// *Error and wrap the cause.
func (a *Applier) Apply(ctx context.Context, t Target, observed client.Object, b Build, opts ApplyOptions) (Result, error) {
	res := Result{Object: observed}
	fail := func(err error) (Result, error) { return res, &Error{Target: t, Attempts: res.Attempts, Err: err} }
	if err := t.Validate(); err != nil {
		return fail(err)
	}
	if observed == nil || (reflect.ValueOf(observed).Kind() == reflect.Pointer && reflect.ValueOf(observed).IsNil()) {
		return fail(invalidf("nil observed object"))
	}
	if b.Func == nil {
		return fail(invalidf("no build function"))
	}
	if opts.AsOwner && !opts.DryRun {
		return fail(invalidf("AsOwner is for dry runs only: statusapply never forces a write outside a TakeDeclared policy"))
	}
	logger := log.FromContext(ctx).WithValues("target", t.String())
	labels := a.metrics.labels(t)
	policy := a.policy(t.Manager, opts)
	if opts.AsOwner {
		// Conflicts are forced in resolve; a yielding policy would leave
		// contested fields out before the request.
		policy = conflicts.Fail()
	}
	backoff := a.cfg.backoff
	for {
		st, obs, err := a.ownedState(ctx, t, res.Object, labels, !opts.DryRun)
		if err != nil {
			return fail(err)
		}
		res.Object, res.Observed = obs, obs
		in, err := a.prepare(ctx, t, st, obs, b, opts, policy, &res)
		if err != nil {
			return fail(err)
		}
		if in.unchanged {
			if !opts.DryRun {
				a.metrics.skipped.With(labels).Inc()
			}
			logger.V(1).Info("apply skipped: no change")
			return res, nil
		}
		res.Attempts++
		res.Intent = in.body
		resp, sendErr := a.send(ctx, t, in, obs, false, opts.DryRun)
		if sendErr == nil {
			if !opts.DryRun {
				a.remember(t, resp, in)
				a.metrics.applies.With(labels).Inc()
			}
			logger.V(1).Info("applied", "resourceVersion", resp.GetResourceVersion(), "dryRun", opts.DryRun)
			res.Object, res.Sent = resp, true
			return res, nil
		}
		if !opts.DryRun {
			// Whatever happened on the server, what the manager owns is no
			// longer known: a timeout may have applied the intent.
			a.forget(t, obs)
		}
		if apierrors.IsConflict(sendErr) && !opts.DryRun {
			a.metrics.conflict(t, sendErr)
		}
		switch conflicts.Classify(sendErr) {
		case conflicts.ClassFieldManagerConflict:
			if err := a.resolve(ctx, t, in, obs, &res, policy, sendErr, opts); err != nil {
				return fail(err)
			}
			if !opts.DryRun {
				a.metrics.applies.With(labels).Inc()
			}
			return res, nil
		case conflicts.ClassStale:
		default:
			return fail(sendErr)
		}
		// A 409 without causes: the resourceVersion or uid precondition failed.
		fresh, err := a.read(ctx, t, labels)
		if err != nil {
			return fail(err)
		}
		if fresh.GetUID() != obs.GetUID() {
			return fail(fmt.Errorf("the observed object (uid %s) was deleted: %w", obs.GetUID(),
				apierrors.NewNotFound(a.groupResource(t.GVK), t.Name)))
		}
		res.Object = fresh
		if !opts.Guarded {
			return fail(sendErr)
		}
		if backoff.Steps <= 1 {
			return fail(fmt.Errorf("%w after %d attempts: %w", ErrRetriesExhausted, res.Attempts, sendErr))
		}
		if !opts.DryRun {
			a.metrics.retries.With(labels).Inc()
		}
		logger.V(1).Info("guarded apply found the object changed; retrying", "attempt", res.Attempts)
		if err := sleep(ctx, backoff.Step()); err != nil {
			return fail(errors.Join(err, sendErr))
		}
	}
}

// groupResource names t's resource for a NotFound error: from the REST
// mapper when it knows the kind, else the lower-case kind.
func (a *Applier) groupResource(gvk schema.GroupVersionKind) schema.GroupResource {
	if mapper := a.client.RESTMapper(); mapper != nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Resource.GroupResource()
		}
	}
	return schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}
}

// policy is the conflict policy of one apply: the apply's own, else the
// manager's, else Fail.
func (a *Applier) policy(manager string, opts ApplyOptions) conflicts.Policy {
	if opts.Policy != nil {
		return *opts.Policy
	}
	return a.cfg.policies[manager]
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
