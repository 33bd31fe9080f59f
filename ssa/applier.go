package ssa

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoac "k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
)

// Mode says what an apply intent starts from.
type Mode int

const (
	// Incremental starts from the fields the manager already owns on the
	// observed object, so a reconcile that only touches condition A keeps the
	// condition B the same manager applied last time. It is the default.
	Incremental Mode = iota
	// Declarative starts from nothing: whatever the BuildFunc does not state is
	// released, as with a hand-written apply configuration.
	Declarative
)

// BuildFunc edits intent, the apply configuration of one Target as
// unstructured content that already names the object. observed is the object
// the decision is taken from; it must not be modified.
type BuildFunc func(intent, observed *unstructured.Unstructured) error

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
}

// Result is what Apply did.
type Result struct {
	// Object is the object after Apply: the API server's response, or the
	// observed object (possibly read again) when nothing was sent.
	Object *unstructured.Unstructured
	// Sent is false when the intent changed nothing and no request was made.
	Sent bool
	// Attempts counts the applies sent, retries included.
	Attempts int
	// Yielded are the contested fields a Yield policy left out of the apply.
	Yielded []conflicts.Conflict
	// Taken are the contested fields a TakeDeclared policy forced.
	Taken []conflicts.Conflict
}

// Applier applies field managers' intents with server-side apply. It is safe
// for concurrent use and meant to live as long as the controller: it holds the
// per-object lanes that serialise this process's applies to one object.
type Applier struct {
	client  client.Client
	cfg     config
	tc      managedfields.TypeConverter
	lanes   lanes
	metrics *metrics
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
	return &Applier{client: c, cfg: cfg, tc: TypeConverters(converters...), metrics: m}, nil
}

// Scheme is the scheme the Applier maps typed objects with.
func (a *Applier) Scheme() *runtime.Scheme { return a.cfg.scheme }

// TypeConverter is the combined schema source of the Applier.
func (a *Applier) TypeConverter() managedfields.TypeConverter { return a.tc }

// Identify checks obj and returns its kind. Nil and typed-nil objects,
// objects without a name and unknown kinds are refused with an error wrapping
// ErrInvalidInput. A kind is known when the scheme recognises it, a type
// converter has its schema, or the client's REST mapper maps it; typed objects
// need the scheme anyway, so the other two only matter for unstructured ones.
func (a *Applier) Identify(obj client.Object) (schema.GroupVersionKind, error) {
	if obj == nil {
		return schema.GroupVersionKind{}, invalidf("nil object")
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return schema.GroupVersionKind{}, invalidf("nil %T", obj)
	}
	gvk, err := apiutil.GVKForObject(obj, a.cfg.scheme)
	if err != nil {
		return gvk, fmt.Errorf("%w: %T: %w", ErrInvalidInput, obj, err)
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return gvk, invalidf("%T has no apiVersion or kind", obj)
	}
	if obj.GetName() == "" {
		return gvk, invalidf("%s %s: the object has no name", gvk.Kind, obj.GetNamespace())
	}
	if err := a.knownKind(obj, gvk); err != nil {
		return gvk, err
	}
	return gvk, nil
}

// knownKind refuses a kind nothing knows when it is queued, rather than at
// Flush with "no schema" or a failed read, far from the code that queued it.
// The cheap answers come first; the REST mapper may ask the API server's
// discovery (not for an object), and only for kinds the others do not know.
func (a *Applier) knownKind(obj client.Object, gvk schema.GroupVersionKind) error {
	if a.cfg.scheme.Recognizes(gvk) || hasSchema(a.tc, gvk) {
		return nil
	}
	if mapper := a.client.RESTMapper(); mapper != nil {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			return nil
		}
		if !meta.IsNoMatchError(err) {
			return fmt.Errorf("checking whether the API server serves %s: %w", gvk, err)
		}
	}
	id := ObjectID{GVK: gvk, NamespacedName: client.ObjectKeyFromObject(obj)}
	return invalidf("%s: unknown kind %s: the scheme does not recognise it, no type converter has its schema "+
		"and the API server serves no such resource; install its CRD and give the Applier its schema "+
		"with WithTypeConverter (a generated applyconfiguration package's NewTypeConverter)", id, gvk)
}

// Observe returns obj, of kind gvk (from Identify), as a copy in unstructured
// content with its apiVersion and kind set: the form Apply takes.
func (a *Applier) Observe(obj client.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = u.DeepCopy().Object
	} else {
		var err error
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, fmt.Errorf("converting %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// Apply writes t's intent, built by build on top of what the manager owns on
// observed (see Mode), with one server-side apply that does not force
// ownership, unless the intent changes nothing. Applies to the same object from
// this Applier are sent one at a time. A field-manager conflict is handled by
// the conflict policy (ApplyOptions.Policy, else the manager's, else Fail,
// which returns a *conflicts.Error); a guarded apply's stale resourceVersion
// leads to a read, a rebuild and a retry, bounded by the guard backoff. Errors
// are *Error and wrap the cause.
func (a *Applier) Apply(ctx context.Context, t Target, observed *unstructured.Unstructured, build BuildFunc, opts ApplyOptions) (Result, error) {
	res := Result{Object: observed}
	fail := func(err error) (Result, error) { return res, &Error{Target: t, Attempts: res.Attempts, Err: err} }
	if err := t.Validate(); err != nil {
		return fail(err)
	}
	if observed == nil {
		return fail(invalidf("nil observed object"))
	}
	release, err := a.lanes.acquire(ctx, t.Object())
	if err != nil {
		return fail(err)
	}
	defer release()

	logger := log.FromContext(ctx).WithValues("target", t.String())
	labels := a.metrics.labels(t)
	backoff := a.cfg.backoff
	for {
		if !ownership.HasManagedFields(res.Object) && res.Object.GetResourceVersion() != "" {
			// Read from a cache that strips managedFields: what the manager owns is
			// unknown, and guessing "nothing" would release all of it.
			if res.Object, err = a.read(ctx, t, labels); err != nil {
				return fail(err)
			}
		}
		intent, owned, err := a.intent(t, res.Object, build, opts.Mode)
		if err != nil {
			return fail(err)
		}
		if policy := a.policy(t.Manager, opts); policy.Yields() {
			if err := a.yieldPredicted(ctx, t, res.Object, intent, &res, policy); err != nil {
				return fail(err)
			}
		}
		if Unchanged(intent.Object, owned) {
			a.metrics.skipped.With(labels).Inc()
			logger.V(1).Info("apply skipped: no change")
			return res, nil
		}
		if uid := res.Object.GetUID(); uid != "" {
			// A deleted object is not recreated by a main-resource apply, and a
			// status apply to it fails. (The API server ignores the uid of a
			// status apply to a re-created object: guard when that matters.)
			intent.SetUID(uid)
		}
		if opts.Guarded {
			intent.SetResourceVersion(res.Object.GetResourceVersion())
		}
		res.Attempts++
		sent := intent.DeepCopy() // the client decodes the response into intent
		sendErr := a.send(ctx, t, intent, false)
		if sendErr == nil {
			a.metrics.applies.With(labels).Inc()
			logger.V(1).Info("applied", "resourceVersion", intent.GetResourceVersion())
			res.Object, res.Sent = intent, true
			return res, nil
		}
		switch conflicts.Classify(sendErr) {
		case conflicts.ClassFieldManagerConflict:
			a.metrics.conflicts.With(labels).Inc()
			if err := a.resolve(ctx, t, sent, &res, a.policy(t.Manager, opts), sendErr); err != nil {
				return fail(err)
			}
			a.metrics.applies.With(labels).Inc()
			return res, nil
		case conflicts.ClassStale:
			a.metrics.conflicts.With(labels).Inc()
		default:
			return fail(sendErr)
		}
		// A 409 without causes: the resourceVersion or uid precondition failed.
		fresh, err := a.read(ctx, t, labels)
		if err != nil {
			return fail(err)
		}
		if fresh.GetUID() != res.Object.GetUID() {
			return fail(fmt.Errorf("the observed object (uid %s) was deleted: %w", res.Object.GetUID(),
				apierrors.NewNotFound(schema.GroupResource{Group: t.GVK.Group, Resource: t.GVK.Kind}, t.Name)))
		}
		res.Object = fresh
		if !opts.Guarded {
			return fail(sendErr)
		}
		if backoff.Steps <= 1 {
			return fail(fmt.Errorf("%w after %d attempts: %w", ErrRetriesExhausted, res.Attempts, sendErr))
		}
		a.metrics.retries.With(labels).Inc()
		logger.V(1).Info("guarded apply found the object changed; retrying", "attempt", res.Attempts)
		if err := sleep(ctx, backoff.Step()); err != nil {
			return fail(errors.Join(err, sendErr))
		}
	}
}

// intent builds t's apply configuration and returns it with what the manager
// owns on observed.
func (a *Applier) intent(t Target, observed *unstructured.Unstructured, build BuildFunc, mode Mode) (*unstructured.Unstructured, map[string]any, error) {
	tv, err := typedContent(a.tc, observed)
	if err != nil {
		return nil, nil, err
	}
	owned, _, err := ownedIn(tv, observed, t.Manager, t.Subresource)
	if err != nil {
		return nil, nil, fmt.Errorf("extracting what %q owns: %w", t.Manager, err)
	}
	intent := &unstructured.Unstructured{Object: map[string]any{}}
	if mode == Incremental {
		intent.Object = runtime.DeepCopyJSON(owned)
	}
	intent.SetGroupVersionKind(t.GVK)
	intent.SetName(t.Name)
	intent.SetNamespace(t.Namespace)
	if err := build(intent, observed); err != nil {
		return nil, nil, err
	}
	if got := intent.GroupVersionKind(); got != t.GVK || intent.GetName() != t.Name || intent.GetNamespace() != t.Namespace {
		return nil, nil, invalidf("the apply configuration names %s %s/%s, not the object it was queued for",
			got.Kind, intent.GetNamespace(), intent.GetName())
	}
	pruneEmpty(intent.Object)
	if conditions, has, _ := unstructured.NestedFieldNoCopy(intent.Object, "status", "conditions"); has {
		shape := conditionsSchemaOf(tv)
		if shape.atomic {
			return nil, nil, invalidf("%s: status.conditions of %s is an atomic list, so every writer would own the whole list "+
				"and a second writer conflicts with the first; declare it a map list (+listType=map, +listMapKey=type)", t, t.GVK.Kind)
		}
		// Checked here, after build, because every way of writing a condition
		// (SetCondition, an Edit, a Mutator, unstructured content) ends here:
		// one bad condition would otherwise make the API server refuse the
		// whole apply with a 422. The error names t through Apply's *Error.
		if shape.metav1 {
			if err := validateConditionItems(conditions); err != nil {
				return nil, nil, err
			}
		}
	}
	return intent, owned, nil
}

// send makes the one request. The client decodes the response into intent.
func (a *Applier) send(ctx context.Context, t Target, intent *unstructured.Unstructured, force bool) error {
	ac := client.ApplyConfigurationFromUnstructured(intent)
	owner := client.FieldOwner(t.Manager)
	if t.Subresource == StatusSubresource {
		opts := []client.SubResourceApplyOption{owner}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		return a.client.Status().Apply(ctx, ac, opts...)
	}
	opts := []client.ApplyOption{owner}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	return a.client.Apply(ctx, ac, opts...)
}

// read gets t's object from the API server (not a cache).
func (a *Applier) read(ctx context.Context, t Target, labels map[string]string) (*unstructured.Unstructured, error) {
	a.metrics.reads.With(labels).Inc()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(t.GVK)
	if err := a.cfg.reader.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, u); err != nil {
		return nil, fmt.Errorf("reading the object again: %w", err)
	}
	return u, nil
}

// policy is the conflict policy of one apply: the apply's own, else the
// manager's, else Fail.
func (a *Applier) policy(manager string, opts ApplyOptions) conflicts.Policy {
	if opts.Policy != nil {
		return *opts.Policy
	}
	return a.cfg.policies[manager]
}

// yieldPredicted leaves out of intent the fields that, judging by observed's
// managedFields, another manager owns with a different value: the apply the
// API server would refuse is not sent. It only helps when observed is
// current; a conflict it cannot foresee is still handled by resolve.
func (a *Applier) yieldPredicted(ctx context.Context, t Target, observed, intent *unstructured.Unstructured, res *Result, policy conflicts.Policy) error {
	predicted, err := conflicts.Predict(observed, a.tc, t.Manager, string(t.Subresource), intent)
	if err != nil || len(predicted) == 0 {
		return nil //nolint:nilerr // prediction is an optimisation; the API server still decides
	}
	d := policy.Decide(predicted)
	if d.Action != conflicts.ActionRetryWithout {
		return nil
	}
	if _, err := conflicts.RemoveFields(intent.Object, d.Paths...); err != nil {
		return fmt.Errorf("yielding %v: %w", d.Paths, err)
	}
	conflicts.Record(a.cfg.recorder, observed, t.Manager, d)
	res.Yielded = d.Conflicts
	log.FromContext(ctx).Info("yielded fields predicted to be contested", "target", t.String(), "fields", d.Paths)
	return nil
}

// resolve acts on a field-manager conflict by policy: it fails with a
// *conflicts.Error, or re-sends sent without the contested fields (Yield), or
// forces it when every contested field is declared (TakeDeclared). Each
// decision is recorded as an event when a recorder is set.
func (a *Applier) resolve(ctx context.Context, t Target, sent *unstructured.Unstructured, res *Result, policy conflicts.Policy, conflictErr error) error {
	ref := conflicts.ObjectRef{GVK: t.GVK, Namespace: t.Namespace, Name: t.Name}
	cerr, ok := conflicts.FromError(conflictErr, t.Manager, ref)
	if !ok {
		return conflictErr
	}
	d := policy.Decide(cerr.Conflicts)
	conflicts.Record(a.cfg.recorder, res.Object, t.Manager, d)
	switch d.Action {
	case conflicts.ActionRetryWithout:
		if _, err := conflicts.RemoveFields(sent.Object, d.Paths...); err != nil {
			return fmt.Errorf("yielding %v: %w", d.Paths, err)
		}
		res.Attempts++
		if err := a.send(ctx, t, sent, false); err != nil {
			return err
		}
		res.Yielded = d.Conflicts
		log.FromContext(ctx).Info("yielded contested fields to their owners", "target", t.String(), "fields", d.Paths)
	case conflicts.ActionForce:
		res.Attempts++
		if err := a.send(ctx, t, sent, true); err != nil {
			return err
		}
		res.Taken = d.Conflicts
		log.FromContext(ctx).Info("took declared fields from their owners", "target", t.String(), "fields", d.Paths)
	default:
		cerr.Conflicts = d.Conflicts
		return cerr
	}
	res.Object, res.Sent = sent, true
	return nil
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
