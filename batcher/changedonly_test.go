package batcher

import (
	"errors"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ssa"
)

func TestChangedOnly(t *testing.T) {
	cond := func(typ, status string) map[string]any { return map[string]any{"type": typ, "status": status} }
	gear := []any{map[string]any{"name": "b", "size": int64(12)}}
	for name, c := range map[string]struct {
		before, after, was, now map[string]any
	}{
		"nothing changed": {
			before: map[string]any{"status": map[string]any{"phase": "On", "gears": gear}},
			after:  map[string]any{"status": map[string]any{"phase": "On", "gears": gear}},
			was:    map[string]any{}, now: map[string]any{},
		},
		"a field beside one left alone": {
			before: map[string]any{"status": map[string]any{"phase": "On", "gears": gear}},
			after:  map[string]any{"status": map[string]any{"phase": "Off", "gears": gear}},
			was:    map[string]any{"status": map[string]any{"phase": "On"}},
			now:    map[string]any{"status": map[string]any{"phase": "Off"}},
		},
		"a list is kept whole": {
			before: map[string]any{"status": map[string]any{"conditions": []any{cond("A", "True"), cond("B", "True")}, "gears": gear}},
			after:  map[string]any{"status": map[string]any{"conditions": []any{cond("A", "True"), cond("B", "False")}, "gears": gear}},
			was:    map[string]any{"status": map[string]any{"conditions": []any{cond("A", "True"), cond("B", "True")}}},
			now:    map[string]any{"status": map[string]any{"conditions": []any{cond("A", "True"), cond("B", "False")}}},
		},
		"a removed field stays in before": {
			before: map[string]any{"status": map[string]any{"phase": "On", "gears": gear}},
			after:  map[string]any{"status": map[string]any{"phase": "On"}},
			was:    map[string]any{"status": map[string]any{"gears": gear}},
			now:    map[string]any{"status": map[string]any{}},
		},
		"a new field stays in after": {
			before: map[string]any{"status": map[string]any{"phase": "On"}},
			after:  map[string]any{"status": map[string]any{"phase": "On", "gears": gear}},
			was:    map[string]any{"status": map[string]any{}},
			now:    map[string]any{"status": map[string]any{"gears": gear}},
		},
		"deep objects keep only the changed branch": {
			before: map[string]any{"status": map[string]any{"plan": map[string]any{"id": "p", "owner": map[string]any{"name": "a", "zone": "z"}}}},
			after:  map[string]any{"status": map[string]any{"plan": map[string]any{"id": "p", "owner": map[string]any{"name": "b", "zone": "z"}}}},
			was:    map[string]any{"status": map[string]any{"plan": map[string]any{"owner": map[string]any{"name": "a"}}}},
			now:    map[string]any{"status": map[string]any{"plan": map[string]any{"owner": map[string]any{"name": "b"}}}},
		},
		"an object that became a scalar is kept whole": {
			before: map[string]any{"status": map[string]any{"plan": map[string]any{"id": "p"}}},
			after:  map[string]any{"status": map[string]any{"plan": nil}},
			was:    map[string]any{"status": map[string]any{"plan": map[string]any{"id": "p"}}},
			now:    map[string]any{"status": map[string]any{"plan": nil}},
		},
		"numbers compare by value": {
			before: map[string]any{"status": map[string]any{"observedGeneration": int64(2), "phase": "On"}},
			after:  map[string]any{"status": map[string]any{"observedGeneration": float64(2), "phase": "Off"}},
			was:    map[string]any{"status": map[string]any{"phase": "On"}},
			now:    map[string]any{"status": map[string]any{"phase": "Off"}},
		},
		"an empty object equals an empty object": {
			before: map[string]any{"status": map[string]any{"attributes": map[string]any{}}},
			after:  map[string]any{"status": map[string]any{"attributes": map[string]any{}}},
			was:    map[string]any{}, now: map[string]any{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			was, now := changedOnly(c.before, c.after)
			if !reflect.DeepEqual(was, c.was) || !reflect.DeepEqual(now, c.now) {
				t.Fatalf("changedOnly\n got %v, %v\nwant %v, %v", was, now, c.was, c.now)
			}
		})
	}
}

// What changedOnly leaves out changed in neither: the editor's diff of the
// remains is its diff of the whole objects.
func TestDiffOfChangedOnlyIsTheDiff(t *testing.T) {
	tc, gvk := widgetTypeConverter(t)
	for name, c := range diffCases() {
		t.Run(name, func(t *testing.T) {
			before, after := contentOf(t, c[0], gvk), contentOf(t, c[1], gvk)
			tv, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: before}, typed.AllowDuplicates)
			if err != nil {
				t.Fatal(err)
			}
			wantChanged, wantGone := fieldpath.NewSet(), fieldpath.NewSet()
			diffClaims(tv.Schema(), tv.TypeRef(), before, after, wantChanged, wantGone)
			was, now := changedOnly(before, after)
			changed, gone := fieldpath.NewSet(), fieldpath.NewSet()
			diffClaims(tv.Schema(), tv.TypeRef(), was, now, changed, gone)
			if !changed.Equals(wantChanged) || !gone.Equals(wantGone) {
				t.Fatalf("diff of the remains: changed %v, gone %v\nwant changed %v, gone %v", changed, gone, wantChanged, wantGone)
			}
			if name != "nothing" && name != "conditions reordered" && wantChanged.Empty() && wantGone.Empty() {
				t.Fatalf("the case finds no change: it proves nothing")
			}
		})
	}
}

// An Edit types what it changed alone: a field another manager set, which
// its schema lacks, does not stop it; setting or removing such a field is
// refused. The control types the whole edited status, as the editor did.
func TestEditTypesWhatItChangedAlone(t *testing.T) {
	_, tc := fakeWidgetClient(t)
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	observed := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"phase": "On",
		"gears": []any{map[string]any{"name": "b", "size": int64(12)}}, // not in the Widget's schema
	}}}
	observed.SetGroupVersionKind(gvk)
	observed.SetNamespace("ns")
	observed.SetName("w0")
	run := func(edit Edit[*unstructured.Unstructured]) (map[string]any, error) {
		e := &editor{target: ssa.Target{GVK: gvk, Subresource: ssa.StatusSubresource, Manager: "m"}, tc: tc,
			observed: observed, working: map[reflect.Type]client.Object{}}
		intent := &unstructured.Unstructured{Object: map[string]any{}}
		_, err := e.apply([]contribution{{fn: edit, call: editCaller[*unstructured.Unstructured]{}}}, 0, 1, intent)
		return intent.Object, err
	}

	got, err := run(func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedField(u.Object, "Off", "status", "phase")
	})
	if want := map[string]any{"status": map[string]any{"phase": "Off"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("changing the phase: intent %v, error %v; want %v", got, err, want)
	}
	_, err = run(func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "b", "size": int64(13)}}, "status", "gears")
	})
	if !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("changing a gear: error %v, want ssa.ErrInvalidInput", err)
	}
	_, err = run(func(u *unstructured.Unstructured) error {
		unstructured.RemoveNestedField(u.Object, "status", "gears")
		return nil
	})
	if !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("removing the gears: error %v, want ssa.ErrInvalidInput", err)
	}

	// The control: typing the whole edited status refuses the phase change.
	after, err := subresourceContent(observed, ssa.StatusSubresource)
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(after, "Off", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	if _, err := typedContent(tc, gvk, "the edited object", after); !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("typing the whole status: error %v, want ssa.ErrInvalidInput", err)
	}
}
