package ssa

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoac "k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/kindschema"
)

// BuildFunc edits intent, one Target's apply configuration as unstructured
// content that already names the object. observed, typed or unstructured as
// given to Apply (or as re-read), is what the decision is taken from and must
// not be modified. A retried guarded apply runs it again on a fresh
// observation, so it must be a deterministic function of observed. Most
// builds return the zero Built; see Built for what else a build may report.
type BuildFunc func(intent *unstructured.Unstructured, observed client.Object) (Built, error)

// Build says how to build one Target's intent.
type Build struct {
	// Func builds the intent as unstructured content. It is required.
	Func BuildFunc
	// Typed, when set, builds the same intent in its own apply configuration
	// type. Apply takes it instead of Func unless the apply is Guarded, its
	// conflict policy yields, it removes conditions (RemovingConditions) or
	// Typed.Type embeds no object metadata: those are built by Func, as is an
	// intent Typed.Mutate declines (Built.Declined) or whose owned content
	// Typed.FromContent says Type cannot hold.
	Typed *TypedBuild
}

// TypedBuild builds an intent in one apply configuration type, so that it is
// copied, compared with what the manager owns and encoded without a detour
// through unstructured content (a batch's entry of typed Mutators, or of
// condition Edits).
type TypedBuild struct {
	// Type is the apply configuration type, a pointer to a struct, such as
	// *acv1alpha1.WidgetApplyConfiguration.
	Type reflect.Type
	// FromContent, when set, converts content, what the manager owns as
	// unstructured content naming the object, into a new value of Type, the
	// form Mutate edits a copy of in Incremental mode and the intent is
	// compared with. fits is false when Type cannot hold content as it is:
	// Func then builds the intent. Nil converts with
	// runtime.DefaultUnstructuredConverter, for generated types.
	FromContent func(content map[string]any) (ac any, fits bool, err error)
	// Mutate edits ac, of Type, a value of its own that already names the
	// object and, in Incremental mode, holds what the manager owns; observed
	// is as for BuildFunc. It states the intent Func would, reporting as Func
	// does, or declines it (Built.Declined).
	Mutate func(ac any, observed client.Object) (Built, error)
}

// Built is what a build reports besides the intent and its error; the zero
// value reports nothing. Apply acts on it instead of on the error, which is
// the one returned when what Built asks for cannot be done.
type Built struct {
	// Declined, from TypedBuild.Mutate only, says Type cannot hold the
	// intent and nothing was decided: Func builds it instead.
	Declined bool
	// NeedsManagedFields, with an error, says the build cannot decide what
	// to apply without observed's managedFields (who owns a field the intent
	// removes), which observed lacks, as an object read from a cache that
	// strips them does: Apply reads the object again and builds once more;
	// when the read has none either, it has the API server attribute the
	// fields first where it may (see Apply), else returns the error.
	NeedsManagedFields bool
	// HeldBeforeFirstApply, with an error, are the fields the intent removes
	// that, besides the manager, only before-first-apply holds: Apply takes
	// back everything before-first-apply holds at or below them and builds
	// once more; the error stands when it does not (a dry run, a manager
	// without the right to patch the object).
	HeldBeforeFirstApply *fieldpath.Set
}

// Result is what Apply did.
type Result struct {
	// Object is the object after Apply: the API server's response, in the
	// Go type of the object given to Apply, or, when nothing was sent, the
	// observed object (unstructured when it was read again).
	Object client.Object
	// Response is the API server's response to the apply sent last, as JSON;
	// nil when nothing was sent (and for kinds the scheme does not know, whose
	// response the unstructured client decodes into Object).
	Response []byte
	// Observed is what the last attempt's intent was built on: the observation
	// given to Apply, or an unstructured re-read (for a missing managedFields
	// or a guarded retry). A sent guarded apply was applied to exactly this
	// object: its resourceVersion was the precondition.
	Observed client.Object
	// Sent is false when the intent changed nothing and no request was made.
	Sent bool
	// Intent is the apply configuration sent last, as JSON; nil if none was.
	Intent []byte
	// Attempts counts the applies sent, retries included.
	Attempts int
	// Yielded are the contested fields a Yield policy left out of the apply.
	Yielded []conflicts.Conflict
	// Taken are the contested fields a TakeDeclared policy or a DryRunAsOwner dry run forced.
	Taken []conflicts.Conflict
}

// Applier applies field managers' intents with server-side apply. It is safe
// for concurrent use and meant to live as long as the controller: it
// serialises this process's applies to each object and remembers what each
// manager owns (see DefaultOwnedCacheSize).
type Applier struct {
	client  client.Client
	cfg     config
	tc      *kindschema.Converter
	lanes   lanes
	metrics *metrics
	owned   *ownedCache
	entries entryCache
	layouts layouts
	shapes  intentShapes
	// unchanged is the intent of every build that changes nothing.
	unchanged *prepared
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
		client: c, cfg: cfg, tc: kindschema.NewConverter(TypeConverters(converters...)), metrics: m, owned: newOwnedCache(cfg.ownedCacheSize),
		unchanged: &prepared{unchanged: true},
	}, nil
}

// TypeConverter is the Applier's combined schema source, for every kind it can
// apply, so that code beside it (conflicts.Predict, package shadow) uses the same schemas.
func (a *Applier) TypeConverter() managedfields.TypeConverter { return a.tc }

// Apply writes t's intent, built by b on top of what the manager owns on
// observed (see Mode), with one server-side apply that does not force
// ownership, unless the intent changes nothing. observed, typed or
// unstructured, is not modified. Applies to one object from this Applier are
// sent one at a time. A field-manager conflict goes to the conflict policy
// (OnConflict, else the manager's, else Fail: a *conflicts.Error); a Guarded
// apply's stale resourceVersion leads to a read, rebuild and retry within the
// guard backoff. Once ctx is done, the Apply stops at its next step: before a
// request, and after a response it would act on (a refusal, a read), with the
// context's cause. Errors are *Error and wrap the cause. Most callers queue
// contributions in a batcher.Batch instead, whose Flush does this per entry.
//
// A manager whose managedFields were lost finds its fields held by
// before-first-apply, which would keep them alive when it omits them: before
// sending (and after an apply that made the API server attribute the fields),
// Apply takes back exactly the fields its intent claims or it owns that
// before-first-apply holds, never another manager's, with one managedFields
// patch of the object guarded by resourceVersion, counted in
// statusapply_ownership_recoveries_total, logged and recorded as a
// ReasonFieldsRecovered Event. The first apply to an object without
// managedFields that changes a value conflicts with the attribution it makes:
// a conflict naming only before-first-apply is recovered so (after an apply
// claiming nothing, guarded by resourceVersion, that has the attribution
// stored) and the apply sent again, once; a conflict naming any other manager
// goes to the conflict policy, and a Yield policy never yields to
// before-first-apply. Dry runs take nothing back; a manager that may not patch
// the object goes on without.
func (a *Applier) Apply(ctx context.Context, t Target, observed client.Object, b Build, opts ...ApplyOption) (Result, error) {
	r := &applyRun{Applier: a, t: t, build: b, res: Result{Object: observed}, like: observed, backoff: a.cfg.backoff}
	r.opts.ApplyOptions(opts)
	// The apply's conflict policy: its own, else the manager's, else Fail.
	switch {
	case r.opts.AsOwner:
		// Conflicts are forced in resolve; a yielding policy would leave
		// contested fields out before the request.
		r.policy = conflicts.Fail()
	case r.opts.Policy != nil:
		r.policy = *r.opts.Policy
		r.yields = r.policy.Yields()
	case len(a.cfg.policies) > 0:
		r.policy = a.cfg.policies[t.Manager]
		r.yields = r.policy.Yields()
	}
	r.series, r.logger = a.metrics.of([3]string{t.Manager, t.GVK.Group, t.GVK.Kind}), a.logger(ctx)
	// Refused before any request: what cannot be applied.
	if err := t.Validate(); err != nil {
		return r.fail(err)
	}
	if v := reflect.ValueOf(observed); observed == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		return r.fail(invalidf("nil observed object"))
	}
	if b.Func == nil {
		return r.fail(invalidf("no build function"))
	}
	if r.opts.AsOwner && !r.opts.DryRun {
		return r.fail(invalidf("AsOwner is for dry runs only: statusapply never forces a write outside a TakeDeclared policy"))
	}
	if slices.Contains(r.opts.RemovedConditions, "") {
		return r.fail(invalidf("a removed condition has an empty type"))
	}
	// No path may send without the kind's schema: without it neither what the
	// manager owns nor what the intent releases can be told.
	if _, err := a.tc.Kind(t.GVK); err != nil {
		return r.fail(err)
	}
	for {
		again, err := r.attempt(ctx)
		switch {
		case err != nil:
			return r.fail(err)
		case again:
			continue
		case len(r.removing) > 0 && r.res.Sent:
			// A sent apply whose response still holds a condition it removes
			// is refused (see RemovingConditions and releasedConditions).
			resp, err := responseObject(&r.res)
			if err == nil {
				err = refuseKept(r.t, r.removing, resp)
			}
			if err != nil {
				return r.fail(err)
			}
		}
		return r.res, nil
	}
}

// applyRun is one Apply in progress: what it writes, how, and its result so far.
type applyRun struct {
	*Applier
	t       Target
	build   Build
	opts    ApplyOptions
	policy  conflicts.Policy
	series  *targetMetrics
	logger  logr.Logger
	backoff wait.Backoff
	res     Result
	// like is the object given to Apply: responses are decoded into its Go
	// type, even when an attempt was built on an unstructured re-read.
	like client.Object
	// yields is policy.Yields(), asked once.
	yields bool
	// reread is set once the object was read again for its managedFields.
	reread bool
	// noTakeBack is set once the manager was refused the managedFields
	// rewrite that takes fields back from before-first-apply.
	noTakeBack bool
	// conflictRecovered is set once a conflict naming before-first-apply
	// alone was met with a recovery: the apply is sent again only once.
	conflictRecovered bool
	// removalSeeded is set once a removal refused on an object without any
	// managedFields had the attribution stored (see seedRemoval).
	removalSeeded bool
	// removing are the condition types the attempt's apply removes: those
	// RemovingConditions declares and those the intent releases (see
	// releasedConditions). Its response must not hold them.
	removing []string
}

// sendOptions is how the run's requests are sent.
func (r *applyRun) sendOptions() sendOptions {
	return sendOptions{dryRun: r.opts.DryRun, asOwner: r.opts.AsOwner, raw: r.opts.RawResponse}
}

// logger is Logger. It never falls back to controller-runtime's global
// logger, which outside a manager prints a warning with a stack trace.
func (a *Applier) logger(ctx context.Context) logr.Logger {
	if a.cfg.logger != nil {
		return *a.cfg.logger
	}
	if l, err := logr.FromContext(ctx); err == nil {
		return l
	}
	return logr.Discard()
}

// Logger returns the logger for an apply made with ctx: WithLogger's, else
// the context's, else one that discards. A batch's Flush logs there too.
func (a *Applier) Logger(ctx context.Context) logr.Logger { return a.logger(ctx) }

// debug logs at V(1), naming the target only when the line is written.
func (r *applyRun) debug(msg string, keysAndValues ...any) {
	if l := r.logger.V(1); l.Enabled() {
		l.Info(msg, append([]any{"target", r.t.String()}, keysAndValues...)...)
	}
}

func (r *applyRun) fail(err error) (Result, error) {
	return r.res, &Error{Target: r.t, Attempts: r.res.Attempts, Err: err}
}

// attempt builds the intent on the current observation and sends it unless it
// changes nothing. again asks for a rebuild on the read left in r.res.Object.
// An entry of one apply configuration type (Build.Typed) is built in that type
// unless the apply is guarded, yields or removes conditions; what its type
// cannot hold, and everything else, is built as unstructured content.
func (r *applyRun) attempt(ctx context.Context) (again bool, err error) {
	st, obs, err := r.ownedStateOf(ctx, r.t, r.res.Object, r.series, !r.opts.DryRun, false)
	if err != nil {
		return false, err
	}
	if obs != r.res.Object {
		// ownedStateOf read the object for its missing managedFields.
		r.reread = true
	}
	r.res.Object, r.res.Observed = obs, obs
	r.removing = r.opts.RemovedConditions
	if len(r.removing) > 0 {
		if held, err := refuseRemovals(r.t, r.removing, obs); err != nil {
			return r.recoverRemoved(ctx, obs, held, err)
		}
	}
	var in *prepared
	var built Built
	if tb := r.build.Typed; tb != nil && !r.opts.Guarded && !r.yields && len(r.removing) == 0 {
		in, err = r.prepareTyped(r.t, st, obs, tb, r.opts.Mode, &built)
	}
	if in == nil && (err == nil || built.Declined) {
		built = Built{}
		in, err = r.prepareUnstructured(ctx, r.t, st, obs, r.build.Func, r.opts, r.policy, r.takesBack(), &r.res, &built)
	}
	if err != nil && built.NeedsManagedFields {
		if !r.reread {
			// The build needs managedFields the observation lacks: read them, once.
			fresh, err := r.read(ctx, r.t, r.series)
			if err != nil {
				return false, err
			}
			r.res.Object, r.reread = fresh, true
			return true, nil
		}
		return r.seedRemoval(ctx, st, obs, err)
	}
	if err != nil {
		return r.recoverRemoved(ctx, obs, built.HeldBeforeFirstApply, err)
	}
	if st.beforeFirstApply && !r.opts.DryRun && !r.noTakeBack {
		if again, took, err := r.recoverBefore(ctx, st, obs, in); err != nil || took {
			return again, err
		}
	}
	if in.unchanged {
		// Not sent: counted (unless in a dry run) and logged.
		if !r.opts.DryRun {
			r.series.skipped.get().Inc()
		}
		if l := r.logger.V(1); l.Enabled() {
			l.Info("apply skipped: no change", "target", r.t.String())
		}
		return false, nil
	}
	released, err := r.releasedConditions(st, in)
	if err != nil {
		return false, err
	}
	if held, err := refuseRemovals(r.t, released, obs); err != nil {
		return r.recoverRemoved(ctx, obs, held, err)
	}
	r.removing = append(slices.Clip(r.removing), released...)
	if again, err := r.tryRemovals(ctx, st, in, obs); err != nil || again {
		return again, err
	}
	r.res.Attempts++
	r.res.Intent = in.body
	resp, sendErr := r.send(ctx, r.t, in, r.like, false, r.sendOptions())
	if sendErr != nil {
		return r.refused(ctx, in, obs, sendErr)
	}
	r.applied(resp, in)
	r.recoverAfter(ctx, resp)
	return false, nil
}

// tryRemovals meets an apply that removes conditions an observation without
// managedFields holds, before sending it: who owns them is unknown. When the
// manager owns nothing and may take back, the attribution is stored first
// (seedRemoval) and again asks for a rebuild on it, where the removal is
// checked as on any object. Otherwise an apply is dry-run: only a response
// tells whether they would stay, and one that would stay refuses the apply
// with nothing written. Any other failure is left to the apply, which meets it
// again.
func (r *applyRun) tryRemovals(ctx context.Context, st *ownedState, in *prepared, obs client.Object) (again bool, err error) {
	if r.opts.DryRun {
		// The apply is a dry run itself: Apply reads its response.
		return false, nil
	}
	confirm, err := confirmsRemovals(r.removing, obs)
	if err != nil || !confirm {
		return false, err
	}
	if r.seedsRemoval(st, obs) {
		return r.seedRemoval(ctx, st, obs, nil)
	}
	r.res.Attempts++
	resp, err := r.send(ctx, r.t, in, r.like, false, sendOptions{dryRun: true, raw: true})
	if err != nil {
		return false, nil //nolint:nilerr // the apply meets the same failure and handles it
	}
	obj, err := resp.object()
	if err != nil {
		return false, err
	}
	return false, refuseKept(r.t, r.removing, obj)
}

// applied records a successful apply and remembers what the manager now owns
// from the response (not from a dry run's, which stored nothing).
func (r *applyRun) applied(resp *answer, in *prepared) {
	if !r.opts.DryRun {
		r.remember(r.t, resp, in)
		r.series.applies.get().Inc()
	}
	r.debug("applied", "resourceVersion", resp.resourceVersion(), "dryRun", r.opts.DryRun)
	r.res.answered(resp)
}

func (res *Result) answered(resp *answer) {
	res.Object, res.Response, res.Sent = resp.obj, resp.raw, true
}

// refused handles an apply the API server did not accept: a conflict naming
// before-first-apply alone to recoverConflict, any other conflict to the
// conflict policy, a stale resourceVersion to staleRetry.
func (r *applyRun) refused(ctx context.Context, in *prepared, obs client.Object, sendErr error) (again bool, err error) {
	if !r.opts.DryRun {
		// Whatever happened on the server, what the manager owns is no
		// longer known: a timeout may have applied the intent.
		r.forget(r.t, obs)
	}
	if apierrors.IsConflict(sendErr) && !r.opts.DryRun {
		r.metrics.conflict(r.t, sendErr)
	}
	if ended(ctx) != nil {
		// Answered after ctx ended (send's error says why): no retry, no
		// yield, no force.
		return false, sendErr
	}
	switch conflicts.Classify(sendErr) {
	case conflicts.ClassFieldManagerConflict:
		if again, took, err := r.recoverConflict(ctx, obs, sendErr); err != nil || took {
			return again, err
		}
		if err := r.resolve(ctx, r.t, in, r.like, &r.res, r.policy, sendErr, r.sendOptions()); err != nil {
			if conflicts.Classify(err) == conflicts.ClassStale {
				// The API server checks ownership before the guard: a re-sent
				// guarded apply can still find the object changed.
				return r.staleRetry(ctx, obs, err, r.opts.Guarded)
			}
			return false, err
		}
		if !r.opts.DryRun && r.res.Sent {
			r.series.applies.get().Inc()
		}
		return false, nil
	case conflicts.ClassStale:
		return r.staleRetry(ctx, obs, sendErr, r.opts.Guarded)
	default:
		return false, sendErr
	}
}

// staleRetry handles a failed resourceVersion or uid precondition (a 409
// without causes): it reads the object again and retries a guarded apply
// within its backoff (any write when retry is set). An object deleted since
// observed is NotFound.
func (r *applyRun) staleRetry(ctx context.Context, obs client.Object, sendErr error, retry bool) (again bool, err error) {
	fresh, err := r.read(ctx, r.t, r.series)
	if err != nil {
		return false, err
	}
	if fresh.GetUID() != obs.GetUID() {
		return false, fmt.Errorf("the observed object (uid %s) was deleted: %w", obs.GetUID(),
			apierrors.NewNotFound(r.groupResource(r.t.GVK), r.t.Name))
	}
	r.res.Object = fresh
	if !retry {
		return false, sendErr
	}
	if r.backoff.Steps <= 1 {
		return false, fmt.Errorf("%w after %d attempts: %w", ErrRetriesExhausted, r.res.Attempts, sendErr)
	}
	if !r.opts.DryRun {
		r.series.retries.get().Inc()
	}
	r.debug("guarded apply found the object changed; retrying", "attempt", r.res.Attempts)
	if err := sleep(ctx, r.backoff.Step()); err != nil {
		return false, errors.Join(err, sendErr)
	}
	return true, nil
}

// groupResource names t's resource for a NotFound error, guessed if unmapped.
func (a *Applier) groupResource(gvk schema.GroupVersionKind) schema.GroupResource {
	if mapper := a.client.RESTMapper(); mapper != nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Resource.GroupResource()
		}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx) // ctx.Err() unless cancelled with a cause (a fence's)
	}
}
