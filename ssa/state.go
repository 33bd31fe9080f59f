package ssa

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/ownership"
)

// ownedStateOf returns what t's manager owns on observed, and the observation
// it is based on: observed, or a fresh read when observed lacks managedFields
// (reread says it was read so already). A dry run (remember false) stores
// nothing: its answer carries the stored resourceVersion with content that
// was never stored.
func (a *Applier) ownedStateOf(ctx context.Context, t Target, observed client.Object, series *targetMetrics, remember, reread bool) (*ownedState, client.Object, error) {
	key := ownedKey{uid: observed.GetUID(), manager: t.Manager, sub: t.Subresource}
	put := func(st *ownedState) {
		if remember {
			a.owned.put(key, st)
		}
	}
	rv := observed.GetResourceVersion()
	prev := a.owned.get(key)
	if prev != nil && rv != "" && prev.rv == rv {
		return prev, observed, nil
	}
	if rv == "" {
		// Not read from the API server: nothing is owned yet.
		return &ownedState{content: map[string]any{}, beforeFirstApply: holdsBeforeFirstApply(observed)}, observed, nil
	}
	if !reread && !ownership.HasManagedFields(observed) {
		// A cache stripped managedFields: guessing "owns nothing" would release it all.
		fresh, err := a.read(ctx, t, series)
		if err != nil {
			return nil, nil, err
		}
		return a.ownedStateOf(ctx, t, fresh, series, remember, true)
	}
	raw, found, err := appliedEntry(observed, t.Manager, t.Subresource)
	if err != nil {
		return nil, nil, fmt.Errorf("extracting what %q owns: %w", t.Manager, err)
	}
	if !found {
		st := &ownedState{rv: rv, content: map[string]any{}, beforeFirstApply: holdsBeforeFirstApply(observed)}
		put(st)
		return st, observed, nil
	}
	if prev != nil && prev.entry != nil && prev.complete && bytes.Equal(prev.entry, raw) {
		same, err := a.stillOwned(t, prev, observed, raw)
		if err != nil {
			return nil, nil, err
		}
		if same {
			st := prev.at(rv, holdsBeforeFirstApply(observed))
			put(st)
			return st, observed, nil
		}
	}
	fields, err := a.entries.fields(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("extracting what %q owns: %w", t.Manager, err)
	}
	content, complete, err := a.extract(t, fields, observed)
	if err != nil {
		return nil, nil, err
	}
	st := &ownedState{rv: rv, entry: fields.raw, content: content, complete: complete, beforeFirstApply: holdsBeforeFirstApply(observed)}
	put(st)
	return st, observed, nil
}

// stillOwned reports whether observed holds the values prev remembers; raw
// is the manager's entry on observed, byte for byte prev's.
func (a *Applier) stillOwned(t Target, prev *ownedState, observed client.Object, raw []byte) (bool, error) {
	content, err := prev.ownedContent()
	if err != nil {
		return false, err
	}
	fields, err := a.entries.fields(raw)
	if err != nil {
		return false, fmt.Errorf("extracting what %q owns: %w", t.Manager, err)
	}
	u, err := contentOf(observed, t.GVK, fields.top)
	if err != nil {
		return false, err
	}
	// Typed through the converter as an extraction is, so that an unknown
	// field makes a converter reading the cluster's schemas refresh them;
	// only the entry's fields, as an extraction types them.
	u = typedFieldsOnly(u, fields.leaves)
	tv, err := a.tc.ObjectToTyped(u, typed.AllowDuplicates)
	if err != nil {
		return false, fmt.Errorf("%w: the fields the manager owns do not match the schema of its kind: %w", ErrInvalidInput, err)
	}
	return valuesMatch(tv.Schema(), tv.TypeRef(), content, u.Object), nil
}

// extract reads the values of fields, t's manager's entry, off observed, and
// whether every field of the entry is there (see extractFrom).
func (a *Applier) extract(t Target, fields *entryFields, observed client.Object) (content map[string]any, complete bool, err error) {
	u, err := contentOf(observed, t.GVK, fields.top)
	if err != nil {
		return nil, false, err
	}
	if content, complete, err = fields.extract(a.tc, u); err != nil {
		return nil, false, fmt.Errorf("extracting what %q owns: %w", t.Manager, err)
	}
	return content, complete, nil
}

// remember records what t's manager applied, at the response's resourceVersion.
func (a *Applier) remember(t Target, resp *answer, in *prepared) {
	key := ownedKey{uid: resp.uid(), manager: t.Manager, sub: t.Subresource}
	raw, found, err := resp.entry(t.Manager, t.Subresource)
	if err != nil || resp.resourceVersion() == "" || !resp.hasManagedFields() {
		// Without managedFields (stripped by a client or proxy), "owns nothing"
		// would make the next apply release everything it applied now.
		a.owned.drop(key)
		return
	}
	// What was applied is complete: the entry lists the fields of the body.
	st := &ownedState{rv: resp.resourceVersion(), entry: a.entries.intern(raw), complete: true, beforeFirstApply: resp.holdsBeforeFirstApply()}
	switch {
	case !found:
		st.content = map[string]any{}
	case in.ac != nil:
		// Copied: the mutators may have shared its maps and slices with their
		// caller's objects, or kept it.
		ac := deepCopyAC(in.ac)
		lay := a.layouts.shared(in.acType)
		if lay != nil {
			// Never edited, so it may share metadata with other managers' forms.
			if meta := lay.objectMeta(ac, false); meta != nil {
				if shared := a.owned.shareMeta(key.uid, meta); shared != meta {
					lay.setObjectMeta(ac, shared)
				}
			}
		}
		st.last = &acForm{typ: in.acType, ac: ac, lay: lay}
		st.last.sum.Store(jsonSum(in.body)) // what was sent is ac's encoding
	default:
		// Decoded from what was sent: content of its own, as above.
		var content map[string]any
		if err := utiljson.Unmarshal(in.body, &content); err != nil {
			a.owned.drop(key)
			return
		}
		st.content = withoutIdentity(content)
	}
	a.owned.put(key, st)
}

func (a *Applier) forget(t Target, obj client.Object) {
	a.owned.drop(ownedKey{uid: obj.GetUID(), manager: t.Manager, sub: t.Subresource})
}

// read gets t's object from the API server (not a cache).
func (a *Applier) read(ctx context.Context, t Target, series *targetMetrics) (client.Object, error) {
	if err := ended(ctx); err != nil {
		return nil, err
	}
	series.reads.get().Inc()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(t.GVK)
	if err := a.cfg.reader.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, u); err != nil {
		return nil, fmt.Errorf("reading the object again: %w", err)
	}
	// Nothing is built on what arrived after ctx ended (a fence's proof, say).
	if err := ended(ctx); err != nil {
		return nil, err
	}
	return u, nil
}
