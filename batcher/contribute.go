package batcher

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/ssa"
)

// Mutator edits ac, one entry's apply configuration, given the observed object.
// AC is a generated apply configuration type (such as
// *acv1alpha1.WidgetApplyConfiguration) or *unstructured.Unstructured. ac names
// the object and, in incremental mode, holds what the manager owns; what the
// mutator removes is released when the entry is applied.
//
// A Mutator runs at Flush, and again on a fresh read for each retry of a
// Guarded entry: it must be deterministic in observed, without side effects (no
// requests, no writes to shared state), and must not modify observed. ac is its
// own for one build: it may hold observed's maps and slices, and nothing of it
// reaches another build, the Applier's memory or the caller's objects.
type Mutator[O client.Object, AC any] func(ac AC, observed O) error

// Status queues mutate to edit what manager applies to obj's status
// subresource. Nothing is sent until Flush. obj, manager and AC are checked
// now, and an error (wrapping ssa.ErrInvalidInput) queues nothing.
func Status[O client.Object, AC any](b *Batch, obj O, manager string, mutate Mutator[O, AC], opts ...ssa.ApplyOption) error {
	return contribute(b, obj, ssa.StatusSubresource, manager, mutate, opts)
}

// Object queues mutate to edit what manager applies to obj itself (metadata
// and spec). At Flush an object's main-resource entries are sent before its
// status entries.
func Object[O client.Object, AC any](b *Batch, obj O, manager string, mutate Mutator[O, AC], opts ...ssa.ApplyOption) error {
	return contribute(b, obj, ssa.MainResource, manager, mutate, opts)
}

func contribute[O client.Object, AC any](b *Batch, obj O, sub ssa.Subresource, manager string, mutate Mutator[O, AC], opts []ssa.ApplyOption) error {
	var invalid error
	if mutate == nil {
		invalid = fmt.Errorf("%w: nil mutator", ssa.ErrInvalidInput)
	}
	return contributeWith(b, obj, sub, manager, opts, contribution{fn: mutate, call: mutatorCaller[O, AC]{}}, invalid)
}

// contributeWith checks obj and manager and queues c, or reports invalid,
// what was wrong with c, naming the target. Nothing is queued on an error.
func contributeWith(b *Batch, obj client.Object, sub ssa.Subresource, manager string, opts []ssa.ApplyOption, c contribution, invalid error) error {
	if len(opts) > 0 {
		c.opts = (&ssa.ApplyOptions{}).ApplyOptions(opts)
		if invalid == nil && (c.opts.DryRun || c.opts.AsOwner || c.opts.RawResponse) {
			// How a batch sends an entry is the batch's (Batch.DryRun, package shadow).
			invalid = fmt.Errorf("%w: ssa.DryRun, ssa.DryRunAsOwner and RawResponse are options of Applier.Apply, "+
				"not of a batch's contributions (Batch.DryRun dry-runs a batch)", ssa.ErrInvalidInput)
		}
	}
	if invalid == nil {
		if queued, err := b.add(obj, sub, manager, nil, &c); queued || err != nil {
			return err
		}
	}
	t, err := b.applier.TargetFor(obj, sub, manager)
	if err != nil {
		return err
	}
	if invalid != nil {
		return fmt.Errorf("%s: %w", t, invalid)
	}
	_, err = b.add(obj, sub, manager, &t, &c)
	return err
}

// contribution is one queued mutator or edit, kept with a generic caller for
// its types rather than in a closure: reconciles queue them by the dozen.
type contribution struct {
	fn   any               // the Mutator[O, AC] or Edit[O]
	call caller            // runs fn with its arguments' types
	opts *ssa.ApplyOptions // the contribution's own options; nil for none
}

// caller runs a contribution's function; its implementations are empty generic
// structs, which an interface holds without allocating.
type caller interface {
	mutate(fn, ac, observed any) error
	edit(fn, obj any) error
	isEdit() bool
	// acType is the apply configuration type a Mutator edits, nil for an
	// Edit; one that is not a pointer to a struct is refused (see Batch.add).
	acType() reflect.Type
	observedType() reflect.Type
}

type mutatorCaller[O client.Object, AC any] struct{}

func (mutatorCaller[O, AC]) mutate(fn, ac, observed any) error {
	return fn.(Mutator[O, AC])(ac.(AC), observed.(O))
}
func (mutatorCaller[O, AC]) edit(any, any) error        { return errors.New("a Mutator is not an Edit") }
func (mutatorCaller[O, AC]) isEdit() bool               { return false }
func (mutatorCaller[O, AC]) acType() reflect.Type       { return reflect.TypeFor[AC]() }
func (mutatorCaller[O, AC]) observedType() reflect.Type { return reflect.TypeFor[O]() }

type editCaller[O client.Object] struct{}

func (editCaller[O]) mutate(any, any, any) error { return errors.New("an Edit is not a Mutator") }
func (editCaller[O]) edit(fn, obj any) error     { return fn.(Edit[O])(obj.(O)) }
func (editCaller[O]) isEdit() bool               { return true }
func (editCaller[O]) acType() reflect.Type       { return nil }
func (editCaller[O]) observedType() reflect.Type { return reflect.TypeFor[O]() }

var unstructuredType = reflect.TypeFor[*unstructured.Unstructured]()

// newFromContent returns a new typ (a pointer type) with a copy of u's content.
func newFromContent(typ reflect.Type, u *unstructured.Unstructured) (any, error) {
	if typ == unstructuredType {
		return u.DeepCopy(), nil
	}
	v := reflect.New(typ.Elem()).Interface()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, v); err != nil {
		return nil, fmt.Errorf("converting to %v: %w", typ, err)
	}
	return v, nil
}

func toContent(v any) (map[string]any, error) {
	if u, ok := v.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(v)
}

// observedAs returns observed as typ, the type a mutator or edit takes: itself
// when it is one (so mutators must not modify it), else a conversion.
func observedAs(observed client.Object, typ reflect.Type, gvk schema.GroupVersionKind) (any, error) {
	if reflect.TypeOf(observed) == typ {
		return observed, nil
	}
	content, err := toContent(observed)
	if err != nil {
		return nil, fmt.Errorf("converting the observed object: %w", err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return newFromContent(typ, u)
}

// build returns how to build t's intent from contribs, in queue order. acType,
// the one apply configuration type of contribs' Mutators (nil if several or any
// Edit), or status Edits of a typed object (editTypedBuild) add a typed build.
// t is shared, not copied: an entry's target never changes. a's schemas are
// asked for only by the unstructured build and the typed build of Edits, not
// by a reconcile whose typed Mutators change nothing.
func build(t *ssa.Target, a *ssa.Applier, contribs []contribution, acType reflect.Type) ssa.Build {
	// The unstructured build runs contribs one step at a time; an editor turns
	// Edits into changes of the intent.
	b := ssa.Build{Func: func(intent *unstructured.Unstructured, observed client.Object) (ssa.Built, error) {
		plan := steps(contribs) // here: a typed build never needs it
		edits := &editor{target: *t, tc: a.TypeConverter(), observed: observed, working: map[reflect.Type]client.Object{}}
		obs := observations{observed: observed, gvk: t.GVK}
		for _, s := range plan {
			run := contribs[s.start:s.end]
			if run[0].call.isEdit() {
				if built, err := edits.apply(run, s.start, len(contribs), intent); err != nil {
					return built, err
				}
			} else if err := obs.mutateAll(intent, run, s.start, len(contribs)); err != nil {
				return ssa.Built{}, err
			}
		}
		return ssa.Built{}, nil
	}}
	if acType == nil || acType == unstructuredType {
		b.Typed = editTypedBuild(*t, a.TypeConverter(), contribs)
		return b
	}
	b.Typed = &ssa.TypedBuild{Type: acType, Mutate: func(ac any, observed client.Object) (ssa.Built, error) {
		obs := observations{observed: observed, gvk: t.GVK}
		for i := range contribs {
			if err := obs.mutate(&contribs[i], ac, i, len(contribs)); err != nil {
				return ssa.Built{}, err
			}
		}
		return ssa.Built{}, nil
	}}
	return b
}

// step is a run contribs[start:end] built together: Edits of one object type
// share a comparison, Mutators of one apply configuration type a conversion.
type step struct{ start, end int }

func steps(contribs []contribution) []step {
	var out []step
	for start := 0; start < len(contribs); {
		end := start + 1
		for end < len(contribs) && sameStep(&contribs[start], &contribs[end]) {
			end++
		}
		out = append(out, step{start, end})
		start = end
	}
	return out
}

func sameStep(a, b *contribution) bool {
	if a.call.isEdit() != b.call.isEdit() {
		return false
	}
	if a.call.isEdit() {
		return a.call.observedType() == b.call.observedType()
	}
	return a.call.acType() == b.call.acType()
}

// observations converts the observed object at most once per type mutators take.
type observations struct {
	observed  client.Object
	gvk       schema.GroupVersionKind
	converted map[reflect.Type]any
}

// mutateAll runs run, Mutators of one apply configuration type, on intent
// converted once; first and total number them for errors.
func (o *observations) mutateAll(intent *unstructured.Unstructured, run []contribution, first, total int) error {
	ac, err := newFromContent(run[0].call.acType(), intent)
	if err != nil {
		return err
	}
	for i := range run {
		if err := o.mutate(&run[i], ac, first+i, total); err != nil {
			return err
		}
	}
	content, err := toContent(ac)
	if err != nil {
		return err
	}
	intent.Object = content
	return nil
}

func (o *observations) mutate(c *contribution, ac any, i, total int) error {
	typ := c.call.observedType()
	var obs any = o.observed
	if reflect.TypeOf(o.observed) != typ {
		obs = o.converted[typ]
	}
	if obs == nil {
		var err error
		if obs, err = observedAs(o.observed, typ, o.gvk); err != nil {
			return err
		}
		if o.converted == nil {
			o.converted = map[reflect.Type]any{}
		}
		o.converted[typ] = obs
	}
	if err := c.call.mutate(c.fn, ac, obs); err != nil {
		return fmt.Errorf("mutator %d of %d: %w", i+1, total, err)
	}
	return nil
}

// applyOptions combines contribs' options in queue order: guarded or
// declarative if any is, the last conflict policy set.
func applyOptions(contribs []contribution) ssa.ApplyOptions {
	var opts ssa.ApplyOptions
	for i := range contribs {
		if contribs[i].opts != nil {
			contribs[i].opts.ApplyToApply(&opts)
		}
	}
	return opts
}
