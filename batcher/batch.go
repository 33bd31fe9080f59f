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

	"github.com/statusapply/statusapply/internal/batching"
	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
)

// ErrHeldBack is wrapped by the error of a status entry that was not sent
// because a main-resource entry of the same object failed first.
var ErrHeldBack = errors.New("held back: the object's main-resource apply failed")

// ErrReplaced is wrapped by the error of a guarded entry that was not sent
// because the object it was decided from was deleted and created again under
// the same name, as an earlier entry of the same Flush found. The entry stays
// queued; re-observe the object and decide again.
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
	shadow      *Shadow // shadow mode: Flush compares instead of writing

	// scratch holds buffers (*[]byte) that Flush goroutines compress
	// kept responses into (see pack).
	scratch sync.Pool
	// dict is the dictionary kept responses are compressed against in a
	// Flush of packDictObjects objects or more: the first response such a
	// Flush keeps. Set once, under mu.
	dict *s2.Dict

	flushMu sync.Mutex // one Flush at a time
	mu      sync.Mutex // guards objects and index
	// objects are the objects queued, in the order first queued.
	objects []*object
	index   map[ownership.ObjectRef]*object
	// last is where the previous contribution went: status functions queue
	// many contributions on one object in a row, and the same object needs
	// checking, and its entries finding, only once.
	last struct {
		obj    client.Object
		target ssa.Target // the target obj was checked for
		object *object
		entry  *entry // nil once a Flush may have dropped it
		// call is the caller of the contribution queued last, whose
		// types passed their check (see caller.check).
		call caller
	}
}

// objectOf returns the object queued as id, or nil; a reconcile's batch
// holds one or two, found along the list. b.mu is held.
func (b *Batch) objectOf(id ownership.ObjectRef) *object {
	if b.index != nil {
		return b.index[id]
	}
	for _, o := range b.objects {
		if o.id == id {
			return o
		}
	}
	return nil
}

// addObject adds o, the object queued as o.id, indexing a batch of many.
// b.mu is held.
func (b *Batch) addObject(o *object) {
	b.objects = append(b.objects, o)
	if b.index == nil && len(b.objects) >= 8 {
		b.index = make(map[ownership.ObjectRef]*object, 2*len(b.objects))
		for _, x := range b.objects[:len(b.objects)-1] {
			b.index[x.id] = x
		}
	}
	if b.index != nil {
		b.index[o.id] = o
	}
}

// object is one observed object and its queued entries, in queue order.
type object struct {
	id ownership.ObjectRef
	// observed is a copy of the object first queued, in its own Go type,
	// then the API server's response to each apply (of the same type).
	observed observation
	entries  []*entry
}

// observation is an object as the batch last saw it: a copy of the object
// queued, or the API server's response to the last apply, kept as JSON and
// decoded only when something needs the object (a later entry is built on
// it, a result hook reads it). Most responses are never read: decoding them
// would cost more client time than the rest of a Flush, and holding them
// decoded more memory. Once a Flush of many objects is done with an object,
// its response is kept compressed (see pack).
type observation struct {
	obj      client.Object // the object; with response set, an empty object of its type
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
	obj, err := objects.DecodeLike(raw, o.obj)
	if err != nil {
		return nil, err
	}
	*o = observation{obj: obj}
	return obj, nil
}

// answered moves the observation to what an apply left: its response,
// decoded or not.
func (o *observation) answered(res ssa.Result) {
	if res.Object != nil {
		*o = observation{obj: res.Object}
	} else if res.Sent && res.Response != nil {
		like := o.obj
		if o.response == nil {
			// The object queued is not kept for its type.
			like = objects.EmptyLike(o.obj)
		}
		*o = observation{obj: like, response: res.Response}
	}
}

// unpacked returns the response as the API server sent it, decompressing a
// packed one.
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

// pack returns the observation with its response compressed, for keeping
// it until the next Flush: a response is mostly managedFields entries that
// repeat one another, and compresses to about a third on its own, or to a
// tenth or less against dict, another response of the same Flush (nil for
// none). scratch is a buffer to compress into, returned for reuse. An
// observation that holds no response, or holds it compressed already, is
// returned as it is.
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
	return observation{obj: o.obj, response: bytes.Clone(enc), packed: true, dict: dict}, scratch
}

// entry is what one field manager will apply to one subresource of an object.
type entry struct {
	target   ssa.Target
	contribs []contribution
	// opts are the options a Flush applies the entry with, derived from
	// the contributions it sends (see applyOptions). Only a Flush writes
	// and reads them, one Flush at a time; they are kept here rather than
	// made per apply, which would cost an allocation each.
	opts ssa.ApplyOptions
	// mixed is set when the queued contributions are not all Mutators of
	// the first one's apply configuration type. Unset, it holds for any
	// part of contribs too, such as what a Flush sends. (A flag rather than
	// the type: a Flush of many objects holds thousands of entries.)
	mixed bool
}

// push queues c, which has passed its check (see caller.check), on e.
func (e *entry) push(c *contribution) {
	if n := len(e.contribs); n == 0 {
		e.mixed = false
	} else if !e.mixed && c.call != e.contribs[n-1].call {
		first := e.contribs[0].acType()
		e.mixed = first == nil || c.acType() != first
	}
	e.contribs = append(e.contribs, *c)
}

// acType is the one apply configuration type of contribs, contributions of
// an entry as they were when queued, whose Mutators all edit it; nil when
// they edit several or one is an Edit.
func acType(contribs []contribution, mixed bool) reflect.Type {
	if mixed || len(contribs) == 0 {
		return nil
	}
	return contribs[0].acType()
}

// sent clears the first n contributions, which were sent. With none left
// the entry lets go of their array: a cleared entry stays in its object
// until the Flush ends, and the contributions' functions often hold the
// objects they were queued with.
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
// shadow mode (WithShadow) nothing is applied and fn is not called.
func WithResultHook(fn func(ssa.Target, ssa.Result, error)) Option {
	return func(b *Batch) { b.onResult = fn }
}

// New returns an empty Batch that applies through a.
func New(a *ssa.Applier, opts ...Option) *Batch {
	b := &Batch{applier: a, concurrency: DefaultConcurrency}
	for _, o := range opts {
		o(b)
	}
	return b
}

// add queues c for t, observing obj if the object is new to the batch: later
// contributions for the same object only identify it, and are not converted.
// c's types are checked first (see checkCaller); an error names t and queues
// nothing.
func (b *Batch) add(t ssa.Target, obj client.Object, c contribution) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkCaller(&c); err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	id := t.Object()
	o := b.objectOf(id)
	if o == nil {
		cp, err := observe(obj)
		if err != nil {
			return err
		}
		if u, isUnstructured := cp.(*unstructured.Unstructured); isUnstructured {
			u.SetGroupVersionKind(t.GVK)
		}
		o = &object{id: id, observed: observation{obj: cp}}
		b.addObject(o)
	}
	e := o.entryFor(t)
	e.push(&c)
	b.last.obj, b.last.target, b.last.object, b.last.entry = obj, t, o, e
	return nil
}

// observe returns the copy of obj a batch keeps as its observation: a deep
// copy, except that a typed object's managedFields entries share their
// fieldsV1 bytes and timestamps with obj's. Those are never modified in
// place (a change to managedFields replaces them, as decoding and every
// managedfields helper do), and they are most of what copying an object with
// several field managers costs: a reconcile copies every object it queues,
// and a Flush of many objects holds every copy until the object's turn.
// obj itself is only read: the entries are left out of a shallow copy of it
// before that copy is deep-copied.
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

// entryFor returns o's entry for t, adding it if there is none.
func (o *object) entryFor(t ssa.Target) *entry {
	if e := o.entryOf(t.Subresource, t.Manager); e != nil {
		return e
	}
	// No room yet: a batch of many objects often queues one contribution
	// per entry, and room for more would be most of what it holds until the
	// Flush. An entry that gets a second one gets room for several
	// (addToLast): status functions queue them by the dozen.
	e := &entry{target: t}
	if o.entries == nil {
		// Room for an object's usual few entries (a manager or three, a
		// main resource and a status) in one allocation.
		o.entries = make([]*entry, 0, 4)
	}
	o.entries = append(o.entries, e)
	return e
}

// addToLast queues c without checking obj again when the previous
// contribution was for exactly obj (the same object, unrenamed), and reports
// whether it did. An entry for sub and manager that obj does not have yet
// is added with the previous contribution's target, checked again for its
// own manager and subresource. c's types are checked unless they are those of
// the contribution queued last (see checkCaller); an error of that check
// names the target, and nothing is queued. An entry whose target does not
// pass is left to the full check, which says why.
func (b *Batch) addToLast(obj client.Object, sub ssa.Subresource, manager string, c *contribution) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.object == nil || !b.isLast(obj) {
		return false, nil
	}
	e := b.last.entry
	if e == nil || e.target.Manager != manager || e.target.Subresource != sub {
		e = b.last.object.entryOf(sub, manager)
	}
	t := &b.last.target
	if e != nil {
		t = &e.target
	} else {
		added := *t
		if added.Subresource, added.Manager = sub, manager; added.Validate() != nil {
			return false, nil
		}
		t = &added
	}
	if err := b.checkCaller(c); err != nil {
		return false, fmt.Errorf("%s: %w", *t, err)
	}
	if e == nil {
		e = b.last.object.entryFor(*t)
	}
	b.last.entry = e
	if n := len(e.contribs); n > 0 && n == cap(e.contribs) {
		// A second contribution gets room for 8: status functions queue
		// them by the dozen. A ninth gets room for 32 at once rather than
		// doubling twice: copying contributions, which hold pointers, is
		// what queueing a reconcile's status functions costs most.
		grown := make([]contribution, n, max(8, 4*n))
		copy(grown, e.contribs)
		e.contribs = grown
	}
	e.push(c)
	return true, nil
}

// entryOf returns o's entry for sub and manager, or nil. An object's entries
// all name it: their targets differ only there.
func (o *object) entryOf(sub ssa.Subresource, manager string) *entry {
	for _, e := range o.entries {
		if e.target.Manager == manager && e.target.Subresource == sub {
			return e
		}
	}
	return nil
}

// checkCaller checks c's types (see caller.check) unless they are those of
// the contribution queued last, which passed: status functions queue many
// contributions of one type in a row. b.mu is held.
func (b *Batch) checkCaller(c *contribution) error {
	if b.last.call != nil && c.call == b.last.call {
		return nil
	}
	if err := c.call.check(); err != nil {
		return err
	}
	b.last.call = c.call
	return nil
}

// isLast reports whether obj is exactly the object the previous
// contribution was queued for: the same object, unrenamed. b.mu is held.
func (b *Batch) isLast(obj client.Object) bool {
	t := &b.last.target
	if b.last.obj != obj || t.Name != obj.GetName() || t.Namespace != obj.GetNamespace() {
		return false
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && u.GroupVersionKind() != t.GVK {
		return false
	}
	return true
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

// FlushInto flushes the batch and joins the error into *errp. It is meant to be
// deferred by a reconciler with a named error result, so that every exit
// flushes:
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
// (see WithConcurrency) and each object's entries in order. Entries that were
// applied, or needed no apply, are cleared; failed ones stay queued. The error
// joins every entry's error, each naming its target; errors.Is and errors.As
// (apierrors.IsNotFound, conflicts classification) work through it. In
// shadow mode (WithShadow) Flush writes nothing and reports divergence
// instead.
func (b *Batch) Flush(ctx context.Context) error {
	return b.flush(ctx, nil)
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

// DryRun asks the API server what Flush would do, without writing: every
// entry that would send an apply sends it as a server-side dry run
// (DryRunAll), so the server merges, checks ownership and conflicts, and
// answers with the object it would store. Nothing is written, every entry
// stays queued, the batch keeps its observations and the Applier remembers
// nothing from the answers. Results come in Pending order; the error joins
// the entries' errors as Flush's would.
func (b *Batch) DryRun(ctx context.Context) ([]DryRunResult, error) {
	var (
		mu      sync.Mutex
		results []DryRunResult
	)
	err := b.flush(ctx, func(t ssa.Target, res ssa.Result, err error) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, DryRunResult{Target: t, Result: res, Err: err})
	})
	order := map[ssa.Target]int{}
	for i, t := range b.Pending() {
		order[t] = i
	}
	sort.SliceStable(results, func(i, j int) bool { return order[results[i].Target] < order[results[j].Target] })
	return results, err
}

// flush is Flush, or with dryRun set a dry run that reports each entry to it.
func (b *Batch) flush(ctx context.Context, dryRun func(ssa.Target, ssa.Result, error)) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()

	b.mu.Lock()
	work := make([]flushWork, 0, len(b.objects))
	for _, o := range b.objects {
		if len(o.entries) == 0 {
			continue
		}
		work = append(work, b.workOf(o, make([]entryWork, 0, len(o.entries))))
	}
	b.mu.Unlock()

	errs := make([]error, len(work))
	var tally batching.PendingTally // settle adds to it under b.mu
	if len(work) == 1 {
		// A reconcile's usual Flush: no goroutine to wait for.
		errs[0] = b.flushShare(ctx, &work[0], 1, &tally, dryRun)
	} else {
		sem := make(chan struct{}, b.concurrency)
		var wg sync.WaitGroup
		for i := range work {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				errs[i] = b.flushShare(ctx, &work[i], len(work), &tally, dryRun)
			}()
		}
		wg.Wait()
	}
	if dryRun == nil && b.shadow == nil {
		b.applier.ForBatches().RecordPending(&tally)
	}
	return errors.Join(errs...)
}

// flushShare flushes one object's share of a Flush of n objects and lets go
// of it: a Flush of many objects holds the entries only for those in flight.
func (b *Batch) flushShare(ctx context.Context, w *flushWork, n int, tally *batching.PendingTally, dryRun func(ssa.Target, ssa.Result, error)) error {
	err := b.flushObject(ctx, *w, dryRun)
	if dryRun == nil {
		if n > 1 { // a reconcile's one object keeps its response as it came
			b.pack(w.object, n >= packDictObjects)
		}
		b.settle(w, tally)
	}
	w.release()
	return err
}

// workOf returns o's share of a Flush, its entries appended to entries,
// each with the contributions it sends: those queued now. Contributions are
// only ever appended, and only a Flush removes them once sent, so the
// share is a capped view of them, not a copy, taken under the one lock
// the Flush holds to start. b.mu is held.
func (b *Batch) workOf(o *object, entries []entryWork) flushWork {
	for _, e := range sendOrder(o.entries) {
		n := len(e.contribs)
		contribs := e.contribs[:n:n]
		entries = append(entries, entryWork{entry: e, contribs: contribs, acType: acType(contribs, e.mixed)})
	}
	return flushWork{object: o, entries: entries}
}

// settle records what the Flush did with w's entries and drops those with
// nothing left queued from its object (objects stay: their observation is
// what the next Flush of this batch builds on). It runs as soon as the Flush
// is done with the object: a Flush of many objects then lets each object's
// entries go while the others are in flight.
func (b *Batch) settle(w *flushWork, tally *batching.PendingTally) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ew := range w.entries {
		t := &ew.entry.target
		tally.Add(batching.Series{Manager: t.Manager, Group: t.GVK.Group, Kind: t.GVK.Kind}, len(ew.entry.contribs) > 0)
	}
	b.dropSent(w.object)
}

// packDictObjects is how many objects a Flush writes at least for the
// responses it keeps to be compressed against a dictionary (see pack). The
// dictionary's table costs about as much as the plain compression of some
// sixty responses loses to it.
const packDictObjects = 64

// pack compresses the response o was last seen in, which a Flush of many
// objects otherwise keeps whole for every object until the batch goes. It
// is called once the Flush is done with o: nothing else changes o's
// observation until the next Flush. With withDict the response is
// compressed against the batch's dictionary, which the first response
// packed so becomes.
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

// flushWork is one object's share of a Flush: its entries, in send order,
// and the contributions of each the Flush sends (those queued when it
// started, see workOf). A Flush of many objects holds one for every object
// from the start, so it holds no more than views of what the entries hold
// anyway, until the object is done (see release); the object's observation
// is read when its turn comes (only a Flush changes it, one at a time).
type flushWork struct {
	object  *object
	entries []entryWork
}

type entryWork struct {
	entry    *entry
	contribs []contribution // what this Flush sends of the entry's contributions
	acType   reflect.Type   // the one apply configuration type they edit (see acType)
}

// observed returns o's observation as it is now.
func (b *Batch) observed(o *object) observation {
	b.mu.Lock()
	defer b.mu.Unlock()
	return o.observed
}

// release drops what w holds besides its object: its entries.
func (w *flushWork) release() {
	w.entries = nil
}

// flushObject sends one object's entries in order and records each result.
func (b *Batch) flushObject(ctx context.Context, w flushWork, dryRun func(ssa.Target, ssa.Result, error)) error {
	if dryRun == nil && b.shadow != nil {
		return b.shadowObject(ctx, w)
	}
	var errs []error
	observed := b.observed(w.object)
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
		if opts.Guarded && incarnation != "" && obs.GetUID() != incarnation {
			// An earlier entry's status apply landed on an object created
			// again under the same name (the API server ignores a status
			// apply's uid): a guarded entry was decided from the object that
			// is gone, and its guard must not pass on the successor's
			// resourceVersion.
			errs = append(errs, &ssa.Error{Target: *t, Err: fmt.Errorf("%w (uid %s, now %s)", ErrReplaced, incarnation, obs.GetUID())})
			continue
		}
		bu, typed := build(t, b.applier.TypeConverter(), contribs, ew.acType)
		// The response is decoded now when the next entry is built on it
		// (which spares reading its metadata apart), else when the next
		// Flush needs it; a result hook reads it decoded.
		x := batching.Extras{Typed: typed, DryRun: dryRun != nil,
			DeferDecode: dryRun == nil && b.onResult == nil && i == len(w.entries)-1}
		res, err := b.applier.ForBatches().Apply(ctx, *t, obs, bu, x, opts)
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

// undecodable fails every entry of w: the response its object was last seen
// in cannot be decoded into the object's type, so nothing can be built on it.
func (b *Batch) undecodable(w flushWork, err error) error {
	errs := make([]error, 0, len(w.entries))
	for _, ew := range w.entries {
		errs = append(errs, &ssa.Error{Target: ew.entry.target, Err: err})
	}
	return errors.Join(errs...)
}

// shadowObject compares one object's entries with the live object (see
// WithShadow): each a dry run built on the batch's observation, none
// affecting another.
func (b *Batch) shadowObject(ctx context.Context, w flushWork) error {
	observed := b.observed(w.object)
	obs, err := observed.get()
	if err != nil {
		return b.undecodable(w, err)
	}
	var errs []error
	for _, ew := range w.entries {
		t := &ew.entry.target
		opts := applyOptions(ew.contribs)
		opts.Guarded = true
		bu, typed := build(t, b.applier.TypeConverter(), ew.contribs, ew.acType)
		res, err := b.applier.ForBatches().Apply(ctx, *t, obs, bu, batching.Extras{Typed: typed, DryRun: true, AsOwner: true}, &opts)
		if err := b.shadowEntry(ctx, *t, res, err); err != nil {
			errs = append(errs, err)
			continue
		}
		b.mu.Lock()
		ew.entry.sent(len(ew.contribs))
		b.mu.Unlock()
	}
	return errors.Join(errs...)
}

// dropSent drops o's entries with nothing queued. A dropped entry is no
// longer where the next contribution goes (see addToLast): one queued for
// the same target gets a new entry. b.mu is held.
func (b *Batch) dropSent(o *object) {
	entries := o.entries[:0]
	for _, e := range o.entries {
		if len(e.contribs) > 0 {
			entries = append(entries, e)
		} else if b.last.entry == e {
			b.last.entry = nil
		}
	}
	// The dropped entries must not stay reachable past the end.
	clear(o.entries[len(entries):])
	o.entries = entries
}

// sendOrder returns an object's entries main resource first, each group in
// queue order: entries itself when they already are in that order.
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
