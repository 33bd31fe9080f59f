package batcher

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/internal/fieldsets"
	"github.com/statusapply/statusapply/internal/jsonvalue"
	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
)

// Edit is a mutator written the merge-patch way: it edits in place a copy of
// the observed typed object (meta.SetStatusCondition(&obj.Status.Conditions,
// ...)), already edited by the entry's earlier Edits. Like a Mutator, it runs at
// Flush and again on a fresh read for each retry of a Guarded entry: it must
// be deterministic in obj, without side effects (no requests, no writes to
// shared state), and must not keep obj after it returns.
type Edit[O client.Object] func(obj O) error

// EditStatus queues an Edit for what manager applies to obj's status, so that
// status functions written for merge patches run unchanged. At Flush the edit
// runs on a copy of the observed object, and the manager's apply configuration
// is derived from what it changed, by the kind's schema:
//
//   - a field it set or changed is applied; a change inside a list element
//     keyed by its fields (a condition) claims the whole element;
//   - a field it removed is released if only this manager owns it; otherwise
//     Flush fails with ssa.ErrRemovesForeignField naming the owner, before
//     any apply (an observation without managedFields is read again first).
//     Fields whose managedFields were lost are held by before-first-apply,
//     which is no writer: when it is the only other owner, the Applier takes
//     them back for this manager first (not in a dry run) and the removal
//     goes ahead. An object read again without any managedFields, where the
//     manager owns nothing, has that attribution stored first by an apply
//     claiming nothing, guarded by uid and resourceVersion, then the same;
//     a dry run of it is refused, since who owns the removed fields is
//     unknown;
//   - a field set to the value it had is not claimed;
//   - only what it changed or removed is typed with the schema: a field it
//     sets or removes that the schema lacks is refused (ssa.ErrInvalidInput)
//     before any request, while one another manager set (a CRD newer than
//     the writer's schema) that it leaves alone does not stop it.
//
// Edits and Mutators may be mixed in one entry, in queue order. A Mutator sees
// earlier Edits' changes; an Edit sees earlier Edits' changes only.
func EditStatus[O client.Object](b *Batch, obj O, manager string, edit Edit[O], opts ...ssa.ApplyOption) error {
	return contributeEdit(b, obj, ssa.StatusSubresource, manager, edit, opts)
}

// EditObject is EditStatus for the object itself (metadata and spec).
func EditObject[O client.Object](b *Batch, obj O, manager string, edit Edit[O], opts ...ssa.ApplyOption) error {
	return contributeEdit(b, obj, ssa.MainResource, manager, edit, opts)
}

func contributeEdit[O client.Object](b *Batch, obj O, sub ssa.Subresource, manager string, edit Edit[O], opts []ssa.ApplyOption) error {
	c := contribution{fn: edit, call: editCaller[O]{}}
	var invalid error
	if edit == nil {
		invalid = fmt.Errorf("%w: nil edit", ssa.ErrInvalidInput)
	}
	return contributeWith(b, obj, sub, manager, opts, c, invalid)
}

// editor turns edits into changes of an intent, with a working copy per type.
type editor struct {
	target   ssa.Target
	tc       managedfields.TypeConverter
	observed client.Object
	working  map[reflect.Type]client.Object
}

// apply runs edits of one object type on the working copy and merges what they
// changed into intent; first and total number them for errors.
func (e *editor) apply(run []contribution, first, total int, intent *unstructured.Unstructured) (ssa.Built, error) {
	c := &run[0]
	typ := c.call.observedType()
	work, ok := e.working[typ]
	if !ok {
		obs, err := observedAs(e.observed, typ, e.target.GVK)
		if err != nil {
			return ssa.Built{}, err
		}
		// Edits change the working copy: observed itself must be copied.
		work, _ = obs.(client.Object)
		if obs == any(e.observed) {
			work, _ = e.observed.DeepCopyObject().(client.Object)
		}
		if work == nil {
			return ssa.Built{}, fmt.Errorf("%v is not a client.Object", typ)
		}
		e.working[typ] = work
	}
	pristine, _ := work.DeepCopyObject().(client.Object)
	for i := range run {
		if err := run[i].call.edit(run[i].fn, work); err != nil {
			return ssa.Built{}, fmt.Errorf("edit %d of %d: %w", first+i+1, total, err)
		}
	}
	if reflect.DeepEqual(work, pristine) {
		// Nothing to claim or release: skip the schema comparison.
		return ssa.Built{}, nil
	}
	before, err := e.content(pristine)
	if err != nil {
		return ssa.Built{}, err
	}
	after, err := e.content(work)
	if err != nil {
		return ssa.Built{}, err
	}
	// Only what the edits changed is typed: a field another manager set,
	// which this writer's schema lacks (an older CRD), is none of its
	// business. Typing it makes a converter of the cluster's schemas see a
	// field it does not know yet, which the diff would take for atomic.
	was, now := changedOnly(before, after)
	tv, err := typedContent(e.tc, e.target.GVK, "the edited object", now)
	if err != nil {
		return ssa.Built{}, err
	}
	changed, gone := fieldpath.NewSet(), fieldpath.NewSet()
	diffClaims(tv.Schema(), tv.TypeRef(), was, now, changed, gone)
	claimed := e.relevant(claimElements(changed).Leaves())
	removed := topmost(e.relevant(gone))
	if claimed.Empty() && removed.Empty() {
		return ssa.Built{}, nil
	}
	if !removed.Empty() {
		// A removed field is in was alone: one the schema lacks is refused
		// as a set one is, before any read of its owners.
		if _, err := typedContent(e.tc, e.target.GVK, "what the edit removes", was); err != nil {
			return ssa.Built{}, err
		}
	}
	if built, err := e.checkRemovals(removed); err != nil {
		return built, fmt.Errorf("edits %d to %d of %d: %w", first+1, first+len(run), total, err)
	}
	var merged any = intent.Object
	claimed.Iterate(func(p fieldpath.Path) { merged, _ = copyPath(merged, after, p) })
	removed.Iterate(func(p fieldpath.Path) { merged = removePath(merged, p) })
	content, ok := merged.(map[string]any)
	if !ok {
		return ssa.Built{}, errors.New("the apply configuration is not an object")
	}
	intent.Object = content
	return ssa.Built{}, nil
}

// typedContent types content, without its kind, with gvk's schema; what
// names content in the error.
func typedContent(tc managedfields.TypeConverter, gvk schema.GroupVersionKind, what string, content map[string]any) (*typed.TypedValue, error) {
	u := &unstructured.Unstructured{Object: maps.Clone(content)}
	u.SetGroupVersionKind(gvk)
	tv, err := tc.ObjectToTyped(u, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not match the schema of %s: %w", ssa.ErrInvalidInput, what, gvk, err)
	}
	return tv, nil
}

// changedOnly returns before and after without the members whose values are
// equal in both, recursively through objects; lists are kept whole, since a
// keyed item is claimed whole and an atomic list is one value. The diff of
// the two is the diff of before and after: what is left out changed in
// neither. The results share values with before and after (callers must not
// modify them); copy claimed fields from after itself, since an atomic
// object that changed is claimed whole.
func changedOnly(before, after map[string]any) (was, now map[string]any) {
	was, now = map[string]any{}, map[string]any{}
	for k, bv := range before {
		av, both := after[k]
		switch {
		case !both:
			was[k] = bv
		case jsonvalue.Equal(bv, av):
		default:
			bm, bok := bv.(map[string]any)
			am, aok := av.(map[string]any)
			if bok && aok {
				was[k], now[k] = changedOnly(bm, am)
			} else {
				was[k], now[k] = bv, av
			}
		}
	}
	for k, av := range after {
		if _, had := before[k]; !had {
			now[k] = av
		}
	}
	return was, now
}

func (e *editor) content(obj client.Object) (map[string]any, error) {
	return subresourceContent(obj, e.target.Subresource)
}

// subresourceContent returns a copy of what an apply to sub can write on obj,
// without managedFields, which no manager owns: the status alone for the
// status subresource, sparing the conversion of the rest, else the whole object.
func subresourceContent(obj client.Object, sub ssa.Subresource) (map[string]any, error) {
	if sub == ssa.StatusSubresource {
		if status, ok := statusContent(obj); ok {
			return status, nil
		}
	}
	content, err := objects.Content(obj, nil)
	if err != nil {
		return nil, err
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return runtime.DeepCopyJSON(content), nil // shared with obj
	}
	return content, nil
}

// statusContent returns a copy of obj's status as {"status": ...}, or false
// when obj has no struct field tagged json:"status".
func statusContent(obj client.Object) (map[string]any, bool) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		status, found := u.Object["status"]
		if !found {
			return map[string]any{}, true
		}
		return map[string]any{"status": runtime.DeepCopyJSONValue(status)}, true
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	v = v.Elem()
	if i, found := objects.StatusField(v.Type()); found {
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			f = f.Addr()
		} else if f.Kind() != reflect.Pointer || f.Type().Elem().Kind() != reflect.Struct {
			return nil, false
		} else if f.IsNil() {
			return map[string]any{}, true
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(f.Interface())
		if err != nil {
			return nil, false
		}
		if len(content) == 0 {
			return map[string]any{}, true
		}
		return map[string]any{"status": content}, true
	}
	return nil, false
}

func (e *editor) relevant(set *fieldpath.Set) *fieldpath.Set {
	return subresourcePaths(e.target.Subresource, set)
}

// subresourcePaths keeps set's paths an apply to sub writes: status for the
// status subresource, all else but system metadata for the object.
func subresourcePaths(sub ssa.Subresource, set *fieldpath.Set) *fieldpath.Set {
	out := fieldpath.NewSet()
	set.Iterate(func(p fieldpath.Path) {
		if len(p) == 0 || p[0].FieldName == nil {
			return
		}
		top := *p[0].FieldName
		if sub == ssa.StatusSubresource {
			if top == "status" {
				out.Insert(p)
			}
			return
		}
		switch top {
		case "status", "apiVersion", "kind":
		case "metadata":
			if len(p) > 1 && p[1].FieldName != nil && userMetadata(*p[1].FieldName) {
				out.Insert(p)
			}
		default:
			out.Insert(p)
		}
	})
	return out
}

// userMetadata names the metadata fields a manager can own.
func userMetadata(field string) bool {
	switch field {
	case "labels", "annotations", "finalizers", "ownerReferences":
		return true
	}
	return false
}

// claimElements widens paths inside a keyed list element (a condition) to the
// whole element, so that the manager applies it whole, not a fragment.
func claimElements(set *fieldpath.Set) *fieldpath.Set {
	out := fieldpath.NewSet()
	set.Iterate(func(p fieldpath.Path) {
		last := -1
		for i, pe := range p {
			if pe.Key != nil {
				last = i
			}
		}
		if last >= 0 {
			p = p[:last+1]
		}
		out.Insert(p.Copy())
	})
	return out
}

// topmost keeps set's paths without an ancestor in set: a removed condition
// takes its fields along and is reported once.
func topmost(set *fieldpath.Set) *fieldpath.Set {
	out := fieldpath.NewSet()
	set.Iterate(func(p fieldpath.Path) {
		for i := 1; i < len(p); i++ {
			if set.Has(p[:i]) {
				return
			}
		}
		out.Insert(p.Copy())
	})
	return out
}

// checkRemovals refuses removing fields that an entry other than the one the
// apply releases owns: another manager's, in any operation or subresource, or
// the manager's own Update or other subresource's entry. Built says, with the
// refusal, what the Applier may do about it: read the managedFields an
// observation without them lacks, or take back the fields only
// before-first-apply holds.
func (e *editor) checkRemovals(removed *fieldpath.Set) (ssa.Built, error) {
	if removed.Empty() {
		return ssa.Built{}, nil
	}
	if !ownership.HasManagedFields(e.observed) {
		return ssa.Built{NeedsManagedFields: true},
			fmt.Errorf("%w: who owns the fields the edit removes is unknown", objects.ErrNeedsManagedFields)
	}
	owners, err := ownership.Inspect(e.observed)
	if err != nil {
		return ssa.Built{}, err
	}
	var foreign []string
	onlyBeforeFirstApply := true
	for _, entry := range owners.Entries {
		if entry.AppliedBy(e.target.Manager, string(e.target.Subresource)) {
			continue
		}
		removed.Iterate(func(p fieldpath.Path) {
			topmost(claimElements(fieldsets.Subtree(entry.Fields, p))).Iterate(func(owned fieldpath.Path) {
				foreign = append(foreign, fmt.Sprintf("%s is owned by %s", owned, entry))
				onlyBeforeFirstApply = onlyBeforeFirstApply && entry.BeforeFirstApply()
			})
		})
	}
	if len(foreign) == 0 {
		return ssa.Built{}, nil
	}
	sort.Strings(foreign)
	err = fmt.Errorf("%w: %s", ssa.ErrRemovesForeignField, strings.Join(foreign, "; "))
	if onlyBeforeFirstApply {
		// No real manager holds them: the Applier takes them back.
		return ssa.Built{HeldBeforeFirstApply: removed}, err
	}
	return ssa.Built{}, err
}
