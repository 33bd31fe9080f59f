package batcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/klauspost/compress/s2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
)

// ErrHeldBack is wrapped by the error of a status entry that was not sent
// because a main-resource entry of the same object failed first.
var ErrHeldBack = errors.New("held back: the object's main-resource apply failed")

// ErrReplaced is wrapped by the error of a guarded entry that was not sent
// because an earlier entry of the same Flush found its object deleted and
// created again under the same name. The entry stays queued; re-observe the
// object and decide again.
var ErrReplaced = errors.New("the observed object was deleted and created again under the same name")

// DefaultConcurrency is how many objects a Flush writes at once unless
// WithConcurrency says otherwise. One object's entries are always sent in order.
const DefaultConcurrency = 8

// Batch accumulates the contributions of one reconcile. Its methods are safe
// for concurrent use.
type Batch struct {
	applier     *ssa.Applier
	concurrency int
	onResult    func(ssa.Target, ssa.Result, error)
	guardAll    bool // every entry is applied Guarded (WithGuardedEntries)
	// flushFunc, when set, is what Flush does instead of applying (WithFlushFunc).
	flushFunc func(context.Context, *Batch) error

	// scratch holds *[]byte buffers that pack compresses into.
	scratch sync.Pool
	// dict is what a large Flush compresses against; set once, under mu.
	dict *s2.Dict

	flushMu sync.Mutex // one Flush at a time
	mu      sync.Mutex // guards objects and index
	// objects are the objects queued, in the order first queued.
	objects []*object
	index   map[ownership.ObjectRef]*object
	// last is where the previous contribution went: status functions queue
	// many in a row on one object, which then needs checking only once.
	last struct {
		obj    client.Object
		target ssa.Target // the target obj was checked for
		object *object
		entry  *entry // nil once a Flush may have dropped it
		// call is the caller queued last, whose types passed their check.
		call caller
	}
}

// object is one observed object and its queued entries, in queue order.
type object struct {
	id ownership.ObjectRef
	// observed is the object first queued, then each apply's response.
	observed observation
	entries  []*entry
}

// observation is an object as the batch last saw it: the object queued, or the
// last apply's response kept as JSON until needed (most are never read).
type observation struct {
	obj      client.Object // the object; nil while response is set
	typ      reflect.Type  // with response set, the Go type to decode it into
	response []byte
	packed   bool     // response is compressed
	dict     *s2.Dict // what a packed response was compressed against; nil for none
}

// get returns the object, decoding a response once.
func (o *observation) get() (client.Object, error) {
	if o.response == nil {
		return o.obj, nil
	}
	raw, err := o.unpacked()
	if err != nil {
		return nil, err
	}
	obj, err := objects.DecodeAs(raw, o.typ)
	if err != nil {
		return nil, err
	}
	*o = observation{obj: obj}
	return obj, nil
}

// answered moves the observation to an apply's response, decoded or not.
func (o *observation) answered(res ssa.Result) {
	if res.Object != nil {
		*o = observation{obj: res.Object}
	} else if res.Sent && res.Response != nil {
		typ := o.typ
		if o.response == nil {
			typ = reflect.TypeOf(o.obj)
		}
		*o = observation{typ: typ, response: res.Response}
	}
}

// unpacked returns the response as sent, decompressing a packed one.
func (o *observation) unpacked() ([]byte, error) {
	if !o.packed {
		return o.response, nil
	}
	var raw []byte
	var err error
	if o.dict != nil {
		raw, err = o.dict.Decode(nil, o.response)
	} else {
		raw, err = s2.Decode(nil, o.response)
	}
	if err != nil {
		return nil, fmt.Errorf("decompressing the API server's response: %w", err)
	}
	return raw, nil
}

// pack returns the observation with its response compressed (against dict
// when not nil), and scratch, the buffer it compressed into, for reuse.
func (o observation) pack(scratch []byte, dict *s2.Dict) (observation, []byte) {
	if o.response == nil || o.packed {
		return o, scratch
	}
	if n := s2.MaxEncodedLen(len(o.response)); n > cap(scratch) {
		if n < 0 {
			return o, scratch // too large to compress
		}
		scratch = make([]byte, n)
	}
	var enc []byte
	if dict != nil {
		enc = dict.Encode(scratch[:cap(scratch)], o.response)
	} else {
		enc = s2.Encode(scratch[:cap(scratch)], o.response)
	}
	return observation{typ: o.typ, response: bytes.Clone(enc), packed: true, dict: dict}, scratch
}

// entry is what one field manager will apply to one subresource of an object.
type entry struct {
	target   ssa.Target
	contribs []contribution
	// opts are the options a Flush applies the entry with (see applyOptions),
	// kept here to spare an allocation per apply; only a Flush touches them.
	opts ssa.ApplyOptions
	// mixed is set when the contributions are not all Mutators of the first
	// one's apply configuration type; unset, it holds for any part of contribs.
	mixed bool
}

// sent clears the first n contributions, which were sent. An emptied entry
// drops its array: its functions often hold the objects they were queued with.
func (e *entry) sent(n int) {
	e.contribs = e.contribs[n:]
	if len(e.contribs) == 0 {
		e.contribs = nil
	}
}

// Option configures a Batch.
type Option func(*Batch)

// WithConcurrency sets how many objects a Flush writes at once (at least 1).
func WithConcurrency(n int) Option {
	return func(b *Batch) { b.concurrency = max(1, n) }
}

// WithResultHook calls fn after every entry a Flush processes, with what the
// apply did (sent or skipped, fields yielded or taken) or its error. fn is
// called from Flush's goroutines and must be safe for concurrent use. In
// shadow mode (package shadow) nothing is applied and fn is not called.
func WithResultHook(fn func(ssa.Target, ssa.Result, error)) Option {
	return func(b *Batch) { b.onResult = fn }
}

// WithFlushFunc makes Flush, and so FlushInto, call fn instead of applying the
// entries; fn usually hands them to Consume. Package shadow's mode is made so.
// DryRun and Consume are unchanged, and the result hook is not called.
func WithFlushFunc(fn func(ctx context.Context, b *Batch) error) Option {
	return func(b *Batch) { b.flushFunc = fn }
}

// Applier returns the Applier the batch applies through.
func (b *Batch) Applier() *ssa.Applier { return b.applier }

// WithGuardedEntries applies every entry of the batch as if each of its
// contributions had passed ssa.Guarded: the apply carries the resourceVersion
// of the observation it was built from, so it can never change an object that
// changed since; on a stale one the object is read again and the entry rebuilt
// and retried (see ssa.Guarded). Mutators and Edits must then be deterministic
// in the observed object, which they must be anyway. It costs a read and a
// second apply whenever another writer changed the object between the
// observation and the apply. ctrlbatch.WithFence sets it.
func WithGuardedEntries() Option {
	return func(b *Batch) { b.guardAll = true }
}

// New returns an empty Batch that applies through a.
func New(a *ssa.Applier, opts ...Option) *Batch {
	b := &Batch{applier: a, concurrency: DefaultConcurrency}
	for _, o := range opts {
		o(b)
	}
	return b
}

// observe returns a deep copy of obj, leaving obj untouched, except that a
// typed object's managedFields entries share fieldsV1 bytes and timestamps with
// obj's: those are never modified in place and are most of what copying costs.
func observe(obj client.Object) (client.Object, error) {
	src, entries := obj, obj.GetManagedFields()
	_, isUnstructured := obj.(*unstructured.Unstructured)
	v := reflect.ValueOf(obj)
	share := !isUnstructured && len(entries) > 0 && v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct
	if share {
		shallow := reflect.New(v.Elem().Type())
		shallow.Elem().Set(v.Elem())
		without, isObject := shallow.Interface().(client.Object)
		if !isObject {
			return nil, fmt.Errorf("%w: %T is not a client.Object", ssa.ErrInvalidInput, obj)
		}
		without.SetManagedFields(nil)
		src = without
	}
	cp, ok := src.DeepCopyObject().(client.Object)
	if !ok {
		return nil, fmt.Errorf("%w: %T does not copy into a client.Object", ssa.ErrInvalidInput, obj)
	}
	if share {
		cp.SetManagedFields(slices.Clone(entries))
	}
	return cp, nil
}

// add queues c on obj's entry for sub and manager and reports whether it did.
// With t nil it queues only on the object queued last, unrenamed, taking that
// object's checked target (status functions queue many in a row on one object,
// which then needs checking only once); a new entry's target that fails
// Validate is left to the caller's full check, which says why. Otherwise t is
// obj's checked target, and obj is observed if the object is new to the batch.
// c's types are checked unless they are those of the contribution queued last,
// which passed; an error names the target and queues nothing.
func (b *Batch) add(obj client.Object, sub ssa.Subresource, manager string, t *ssa.Target, c *contribution) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	onLast := t == nil
	var id ownership.ObjectRef
	var o *object
	if onLast {
		last := &b.last.target
		if b.last.object == nil || b.last.obj != obj || last.Name != obj.GetName() || last.Namespace != obj.GetNamespace() {
			return false, nil
		}
		if u, ok := obj.(*unstructured.Unstructured); ok && u.GroupVersionKind() != last.GVK {
			return false, nil
		}
		o = b.last.object
	} else {
		sub, manager, id = t.Subresource, t.Manager, t.Object()
		if b.index != nil {
			o = b.index[id]
		} else {
			for _, x := range b.objects {
				if x.id == id {
					o = x
					break
				}
			}
		}
	}

	// The object's entry for sub and manager, most often the one queued last.
	// An object's entries all name it: their targets differ only there.
	var e *entry
	if o != nil {
		if e = b.last.entry; o != b.last.object || e == nil || e.target.Manager != manager || e.target.Subresource != sub {
			e = nil
			for _, x := range o.entries {
				if x.target.Manager == manager && x.target.Subresource == sub {
					e = x
					break
				}
			}
		}
	}
	if onLast {
		if e != nil {
			t = &e.target
		} else {
			added := b.last.target
			if added.Subresource, added.Manager = sub, manager; added.Validate() != nil {
				return false, nil
			}
			t = &added
		}
	}

	// The check depends on c's types alone: a repeat of the last caller passed.
	if b.last.call == nil || c.call != b.last.call {
		if typ := c.call.acType(); typ != nil && (typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct) {
			return false, fmt.Errorf("%s: %w: the apply configuration type %v is not a pointer to a struct", *t, ssa.ErrInvalidInput, typ)
		}
		b.last.call = c.call
	}

	if o == nil {
		cp, err := observe(obj)
		if err != nil {
			return false, err
		}
		if u, isUnstructured := cp.(*unstructured.Unstructured); isUnstructured {
			u.SetGroupVersionKind(t.GVK)
		}
		o = &object{id: id, observed: observation{obj: cp}}
		b.objects = append(b.objects, o)
		// Only a batch of many is indexed.
		if b.index == nil && len(b.objects) >= 8 {
			b.index = make(map[ownership.ObjectRef]*object, 2*len(b.objects))
			for _, x := range b.objects[:len(b.objects)-1] {
				b.index[x.id] = x
			}
		}
		if b.index != nil {
			b.index[id] = o
		}
	}
	if e == nil {
		// No room for contributions yet: a large batch often queues one per entry.
		e = &entry{target: *t}
		if o.entries == nil {
			o.entries = make([]*entry, 0, 4)
		}
		o.entries = append(o.entries, e)
	}

	n := len(e.contribs)
	if onLast && n > 0 && n == cap(e.contribs) {
		// Grow steeply: status functions queue dozens, and copies are costly.
		grown := make([]contribution, n, max(8, 4*n))
		copy(grown, e.contribs)
		e.contribs = grown
	}
	if n == 0 {
		e.mixed = false
	} else if !e.mixed && c.call != e.contribs[n-1].call {
		first := e.contribs[0].call.acType()
		e.mixed = first == nil || c.call.acType() != first
	}
	e.contribs = append(e.contribs, *c)
	if !onLast {
		b.last.obj, b.last.target, b.last.object = obj, *t, o
	}
	b.last.entry = e
	return true, nil
}

// Pending lists the entries still queued, objects in the order they were first
// queued and, within an object, main-resource entries first.
func (b *Batch) Pending() []ssa.Target {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []ssa.Target
	for _, o := range b.objects {
		for _, e := range sendOrder(o.entries) {
			out = append(out, e.target)
		}
	}
	return out
}

// FlushInto flushes the batch and joins the error into *errp. Defer it in a
// reconciler with a named error result, so that every exit flushes:
//
//	func (r *R) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
//		b := batcher.New(r.Applier)
//		defer b.FlushInto(ctx, &err)
//		...
func (b *Batch) FlushInto(ctx context.Context, errp *error) {
	if err := b.Flush(ctx); err != nil {
		*errp = errors.Join(*errp, err)
	}
}

// Flush sends every queued entry, at most one apply each, objects in parallel
// (see WithConcurrency) and each object's entries in order. Entries applied,
// or needing no apply, are cleared; failed ones stay queued. The error joins
// every entry's error, each naming its target; errors.Is and errors.As
// (apierrors.IsNotFound, conflicts classification) work through it. An entry
// whose request may have reached the API server before it failed (the context
// ended, the connection broke) fails with ssa.ErrOutcomeUnknown: it may have
// been applied, and stays queued like any failed entry. In shadow mode
// (package shadow, or any WithFlushFunc) Flush does what that says.
func (b *Batch) Flush(ctx context.Context) error {
	if b.flushFunc != nil {
		return b.flushFunc(ctx, b)
	}
	return b.flush(ctx, flushMode{})
}

// DryRunResult is what one entry would do, as the API server answered a
// dry-run apply of it.
type DryRunResult struct {
	// Target is the entry.
	Target ssa.Target
	// Result.Sent is false when the entry would change nothing (no request
	// was made); otherwise Result.Intent is the apply configuration that
	// would be sent and Result.Object the object the API server would store.
	Result ssa.Result
	// Err is what applying the entry would fail with, such as a conflict.
	Err error
}

// DryRun asks the API server what Flush would do: every entry that would
// send an apply sends it as a server-side dry run (DryRunAll), which merges,
// checks ownership and conflicts, and answers with the object it would
// store. Nothing is written, every entry stays queued, the batch keeps its
// observations and the Applier remembers nothing from the answers. Results
// come in Pending order; the error joins the entries' errors as Flush's would.
func (b *Batch) DryRun(ctx context.Context) ([]DryRunResult, error) {
	var (
		mu      sync.Mutex
		results []DryRunResult
	)
	report := func(t ssa.Target, res ssa.Result, err error) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, DryRunResult{Target: t, Result: res, Err: err})
	}
	err := b.flush(ctx, flushMode{dryRun: report})
	order := map[ssa.Target]int{}
	for i, t := range b.Pending() {
		order[t] = i
	}
	sort.SliceStable(results, func(i, j int) bool { return order[results[i].Target] < order[results[j].Target] })
	return results, err
}

// Entry is one queued entry as Consume hands it over.
type Entry struct {
	// Target is the entry's.
	Target ssa.Target
	// Observed is the batch's observation of the object: the object first
	// queued, or the last apply's response. It must not be modified.
	Observed client.Object
	// Build builds the entry's intent from its contributions, in queue order.
	Build ssa.Build
	// Options are the contributions' options combined (guarded or declarative
	// if any is, the last conflict policy set), guarded too in a batch made
	// with WithGuardedEntries: what Flush would apply the entry with.
	Options ssa.ApplyOptions
}

// Consume hands every queued entry to fn instead of applying it: objects in
// parallel (see WithConcurrency), one object's entries one after the other in
// Pending order, each on the batch's observation of its object, which Consume
// does not change. An entry fn returns nil for is cleared; one it fails stays
// queued, and the error joins fn's errors. An object whose observation cannot
// be decoded fails its entries without calling fn. Consume is what a Flush
// made with WithFlushFunc (package shadow) does with the entries; the result
// hook is not called and statusapply_pending_entries is not set.
func (b *Batch) Consume(ctx context.Context, fn func(ctx context.Context, e Entry) error) error {
	return b.flush(ctx, flushMode{consume: fn})
}

// flushMode is what a flush does with the entries: apply them (the zero
// value), dry-run them (Batch.DryRun) or hand them over (Consume).
type flushMode struct {
	dryRun  func(ssa.Target, ssa.Result, error)
	consume func(context.Context, Entry) error
}

// flush runs each object's share of the queued entries as m says, objects in
// parallel, then drops the entries it cleared; a flush that applies records
// the statusapply_pending_entries it left queued. A share is an object's
// entries in send order, each with a capped view of the contributions queued
// now: they are only ever appended, and only a Flush removes them, so no copy
// is needed.
func (b *Batch) flush(ctx context.Context, m flushMode) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()

	b.mu.Lock()
	work := make([]flushWork, 0, len(b.objects))
	for _, o := range b.objects {
		if len(o.entries) == 0 {
			continue
		}
		w := flushWork{object: o, entries: make([]entryWork, 0, len(o.entries))}
		for _, e := range sendOrder(o.entries) {
			n := len(e.contribs)
			ew := entryWork{entry: e, contribs: e.contribs[:n:n]}
			if !e.mixed && n > 0 {
				ew.acType = e.contribs[0].call.acType()
			}
			w.entries = append(w.entries, ew)
		}
		work = append(work, w)
	}
	b.mu.Unlock()

	errs := make([]error, len(work))
	var tally ssa.Pending // flushShare adds to it under b.mu
	if len(work) == 1 {
		// A reconcile's usual Flush: no goroutine to wait for.
		errs[0] = b.flushShare(ctx, &work[0], 1, &tally, m)
	} else {
		sem := make(chan struct{}, b.concurrency)
		var wg sync.WaitGroup
		for i := range work {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				errs[i] = b.flushShare(ctx, &work[i], len(work), &tally, m)
			}()
		}
		wg.Wait()
	}
	if m.dryRun == nil && m.consume == nil {
		b.applier.RecordPending(&tally)
	}
	return errors.Join(errs...)
}

// flushShare flushes w as m says; unless it dry-ran, it then records in tally
// what the Flush did with w's entries and drops the sent ones, keeping the
// object: the next Flush builds on its observation. It lets go of w's entries:
// a large Flush holds only entries in flight.
func (b *Batch) flushShare(ctx context.Context, w *flushWork, n int, tally *ssa.Pending, m flushMode) error {
	var err error
	if m.consume != nil {
		err = b.consumeObject(ctx, *w, m.consume)
	} else {
		err = b.flushObject(ctx, *w, m.dryRun)
	}
	if m.dryRun == nil {
		if n > 1 { // a reconcile's one object keeps its response as it came
			b.pack(w.object, n >= packDictObjects)
		}
		b.mu.Lock()
		for _, ew := range w.entries {
			tally.Add(&ew.entry.target, len(ew.entry.contribs) > 0)
		}
		o := w.object
		kept := o.entries[:0]
		for _, e := range o.entries {
			if len(e.contribs) > 0 {
				kept = append(kept, e)
			} else if b.last.entry == e {
				b.last.entry = nil
			}
		}
		// The dropped entries must not stay reachable past the end.
		clear(o.entries[len(kept):])
		o.entries = kept
		b.mu.Unlock()
	}
	w.entries = nil
	return err
}

// packDictObjects is the fewest objects of a Flush that compresses against a
// dictionary (see pack): in smaller ones it costs more than it saves.
const packDictObjects = 64

// pack compresses o's response once the Flush is done with o (nothing else
// changes it until the next Flush), withDict against the batch's dictionary.
func (b *Batch) pack(o *object, withDict bool) {
	b.mu.Lock()
	obs := o.observed
	if withDict && b.dict == nil && obs.response != nil && !obs.packed {
		b.dict = s2.MakeDict(obs.response, nil) // nil when too short to serve
	}
	var dict *s2.Dict
	if withDict {
		dict = b.dict
	}
	b.mu.Unlock()
	scratch, _ := b.scratch.Get().(*[]byte)
	if scratch == nil {
		scratch = new([]byte)
	}
	obs, *scratch = obs.pack(*scratch, dict)
	b.scratch.Put(scratch)
	b.mu.Lock()
	o.observed = obs
	b.mu.Unlock()
}

// flushWork is one object's share of a Flush: its entries in send order,
// each with a view of the contributions it sends (see flush).
type flushWork struct {
	object  *object
	entries []entryWork
}

type entryWork struct {
	entry    *entry
	contribs []contribution // what this Flush sends of the entry's contributions
	acType   reflect.Type   // the one apply configuration type they edit; nil if mixed (see build)
}

// flushObject sends one object's entries in order and records each result.
func (b *Batch) flushObject(ctx context.Context, w flushWork, dryRun func(ssa.Target, ssa.Result, error)) error {
	var errs []error
	b.mu.Lock()
	observed := w.object.observed
	b.mu.Unlock()
	first, err := observed.get()
	if err != nil {
		return b.undecodable(w, err)
	}
	incarnation := first.GetUID()
	mainFailed := false
	for i, ew := range w.entries {
		t := &ew.entry.target
		if mainFailed && t.Subresource == ssa.StatusSubresource {
			errs = append(errs, &ssa.Error{Target: *t, Err: ErrHeldBack})
			continue
		}
		obs, err := observed.get()
		if err != nil {
			errs = append(errs, &ssa.Error{Target: *t, Err: err})
			continue
		}
		contribs := ew.contribs
		opts := &ew.entry.opts
		*opts = applyOptions(contribs)
		opts.Guarded = opts.Guarded || b.guardAll
		if opts.Guarded && incarnation != "" && obs.GetUID() != incarnation {
			// An earlier status apply (whose uid the API server ignores) landed
			// on a recreated object: a guard decided on the old one must not pass.
			errs = append(errs, &ssa.Error{Target: *t, Err: fmt.Errorf("%w (uid %s, now %s)", ErrReplaced, incarnation, obs.GetUID())})
			continue
		}
		opts.DryRun = dryRun != nil
		// Defer decoding when nothing in this Flush reads the response.
		opts.RawResponse = dryRun == nil && b.onResult == nil && i == len(w.entries)-1
		res, err := b.applier.Apply(ctx, *t, obs, build(t, b.applier, contribs, ew.acType), opts)
		observed.answered(res)
		if dryRun != nil {
			dryRun(*t, res, err)
			if err != nil {
				errs = append(errs, err)
				mainFailed = mainFailed || t.Subresource == ssa.MainResource
			}
			continue
		}
		if b.onResult != nil {
			b.onResult(*t, res, err)
		}
		b.mu.Lock()
		w.object.observed = observed
		if err == nil {
			ew.entry.sent(len(contribs))
		}
		b.mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			mainFailed = mainFailed || t.Subresource == ssa.MainResource
		}
	}
	return errors.Join(errs...)
}

// undecodable fails every entry of w, whose observation cannot be decoded.
func (b *Batch) undecodable(w flushWork, err error) error {
	errs := make([]error, 0, len(w.entries))
	for _, ew := range w.entries {
		errs = append(errs, &ssa.Error{Target: ew.entry.target, Err: err})
	}
	return errors.Join(errs...)
}

// consumeObject hands w's entries to fn, each on the batch's observation.
func (b *Batch) consumeObject(ctx context.Context, w flushWork, fn func(context.Context, Entry) error) error {
	b.mu.Lock()
	observed := w.object.observed
	b.mu.Unlock()
	obs, err := observed.get()
	if err != nil {
		return b.undecodable(w, err)
	}
	var errs []error
	for _, ew := range w.entries {
		t := &ew.entry.target
		e := Entry{Target: *t, Observed: obs, Build: build(t, b.applier, ew.contribs, ew.acType), Options: applyOptions(ew.contribs)}
		e.Options.Guarded = e.Options.Guarded || b.guardAll
		if err := fn(ctx, e); err != nil {
			errs = append(errs, err)
			continue
		}
		b.mu.Lock()
		ew.entry.sent(len(ew.contribs))
		b.mu.Unlock()
	}
	return errors.Join(errs...)
}

// sendOrder returns entries main resource first, each group in queue order.
func sendOrder(entries []*entry) []*entry {
	sawStatus := false
	ordered := true
	for _, e := range entries {
		if e.target.Subresource != ssa.MainResource {
			sawStatus = true
		} else if sawStatus {
			ordered = false
			break
		}
	}
	if ordered {
		return entries
	}
	out := append([]*entry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].target.Subresource == ssa.MainResource && out[j].target.Subresource != ssa.MainResource
	})
	return out
}
