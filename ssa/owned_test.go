package ssa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/kindschema"
	"github.com/statusapply/statusapply/ownership"
)

func TestOwnedCacheIsBounded(t *testing.T) {
	c := newOwnedCache(2)
	k := func(uid string) ownedKey { return ownedKey{uid: types.UID(uid), manager: "m", sub: StatusSubresource} }
	c.put(k("a"), &ownedState{rv: "1"})
	c.put(k("b"), &ownedState{rv: "1"})
	if c.get(k("a")) == nil { // a is now the most recent
		t.Fatal("a was forgotten")
	}
	c.put(k("c"), &ownedState{rv: "1"})
	if c.len() != 2 || c.get(k("b")) != nil || c.get(k("a")) == nil || c.get(k("c")) == nil {
		t.Fatalf("want a and c kept, b (least recently used) evicted; %d states", c.len())
	}
	c.drop(k("a"))
	if c.get(k("a")) != nil {
		t.Fatal("a survived drop")
	}
	if off := newOwnedCache(0); func() bool { off.put(k("a"), &ownedState{}); return off.get(k("a")) != nil }() {
		t.Fatal("a cache of size 0 remembered")
	}
	if c.put(ownedKey{manager: "m"}, &ownedState{}); c.get(ownedKey{manager: "m"}) != nil {
		t.Fatal("an object without uid was remembered")
	}
}

// TestOwnedCacheOrder holds the cache to a plain least-recently-used list
// (a slice, most recent first) over a long sequence of gets, puts, re-puts
// and drops: the same states are found, and the same ones evicted.
func TestOwnedCacheOrder(t *testing.T) {
	const size = 4
	c := newOwnedCache(size)
	// Keys of three objects, each with states of up to three managers.
	k := func(i int) ownedKey {
		return ownedKey{uid: types.UID(fmt.Sprintf("u%d", i%3)), manager: fmt.Sprintf("m%d", i/3), sub: StatusSubresource}
	}
	type slot struct {
		key   ownedKey
		state *ownedState
	}
	var model []slot // most recent first
	find := func(key ownedKey) int {
		return slices.IndexFunc(model, func(s slot) bool { return s.key == key })
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 5000 {
		key := k(rng.IntN(9))
		switch op := rng.IntN(4); op {
		case 0: // get
			got := c.get(key)
			i := find(key)
			if i < 0 {
				if got != nil {
					t.Fatalf("step %d: get %v found a state the model evicted", step, key.uid)
				}
				continue
			}
			if got != model[i].state {
				t.Fatalf("step %d: get %v returned another state", step, key.uid)
			}
			hit := model[i]
			model = slices.Insert(slices.Delete(model, i, i+1), 0, hit)
		case 1, 2: // put a new state, or the one cached under key again
			st := &ownedState{rv: fmt.Sprint(step)}
			if i := find(key); op == 2 && i >= 0 {
				st = model[i].state
			}
			c.put(key, st)
			if i := find(key); i >= 0 {
				model = slices.Delete(model, i, i+1)
			}
			model = slices.Insert(model, 0, slot{key, st})
			model = model[:min(len(model), size)]
		case 3: // drop
			c.drop(key)
			if i := find(key); i >= 0 {
				model = slices.Delete(model, i, i+1)
			}
		}
		if c.len() != len(model) {
			t.Fatalf("step %d: %d states cached, the model has %d", step, c.len(), len(model))
		}
	}
	// Walking the list from the newest gives the model's order, and the
	// objects hold exactly the states cached.
	held := 0
	for _, o := range c.objects {
		held += len(o.states)
	}
	if held != len(model) {
		t.Fatalf("the objects hold %d states, want %d", held, len(model))
	}
	var order []ownedKey
	for s := c.newest; s != nil; s = s.older {
		order = append(order, s.key)
	}
	want := make([]ownedKey, len(model))
	for i, s := range model {
		want[i] = s.key
	}
	if !slices.Equal(order, want) {
		t.Fatalf("recency order %v, want %v", order, want)
	}
}

// TestOwnedCachePutElsewhere: a state cached under one key and put under
// another is remembered as a copy; the first key keeps its state.
func TestOwnedCachePutElsewhere(t *testing.T) {
	c := newOwnedCache(4)
	a := ownedKey{uid: "a", manager: "m", sub: StatusSubresource}
	b := ownedKey{uid: "b", manager: "m", sub: StatusSubresource}
	st := &ownedState{rv: "3", content: map[string]any{}}
	c.put(a, st)
	c.put(b, st)
	if c.get(a) != st || c.len() != 2 {
		t.Fatal("a lost its state")
	}
	if got := c.get(b); got == nil || got == st || got.rv != "3" {
		t.Fatalf("b holds %+v, want a copy of a's state", got)
	}
}

func TestValuesMatch(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	tc := applyconfiguration.NewTypeConverter(s)
	ks := widgetSchema(t, tc)
	cond := func(typ, status string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": "R", "message": "m", "lastTransitionTime": "2026-01-02T03:04:05Z"}
	}
	status := func(items ...any) map[string]any {
		return map[string]any{"status": map[string]any{"conditions": items, "phase": "Running"}}
	}
	owned := map[string]any{"status": map[string]any{"conditions": []any{cond("A", "True")}}}
	tests := []struct {
		name     string
		observed map[string]any
		want     bool
	}{
		{"same item among others, in another order", status(cond("B", "False"), cond("A", "True")), true},
		{"the owned item changed", status(cond("A", "False"), cond("B", "False")), false},
		{"the owned item is gone", status(cond("B", "False")), false},
		{"no status at all", map[string]any{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := valuesMatch(ks.Schema, ks.TypeRef, owned, tt.observed); got != tt.want {
				t.Errorf("valuesMatch = %v, want %v", got, tt.want)
			}
		})
	}
	ownedPhase := map[string]any{"status": map[string]any{"phase": "Running"}}
	if !valuesMatch(ks.Schema, ks.TypeRef, ownedPhase, status()) || valuesMatch(ks.Schema, ks.TypeRef, ownedPhase, map[string]any{"status": map[string]any{"phase": "Done"}}) {
		t.Error("a scalar field is compared by value")
	}
}

func widgetSchema(t testing.TB, tc managedfields.TypeConverter) *kindschema.Kind {
	t.Helper()
	ks, err := kindschema.Of(tc, v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// Every way Owned can fail wraps ErrInvalidInput, and an entry that cannot be
// read wraps ownership.ErrBadManagedFields too (found by FuzzOwned's
// properties: a field set that did not decode, or an object that did not
// match its schema, came back bare).
func TestOwnedErrors(t *testing.T) {
	tc := widgetConverter(t)
	obj := func(status, fieldsType string, fieldsV1 any) *unstructured.Unstructured {
		content := map[string]any{"status": map[string]any{"phase": status}}
		if status == "" {
			content["status"] = map[string]any{"phase": int64(7)}
		}
		u := widgetWithEntry(content, fieldsV1, "m")
		u.Object["metadata"].(map[string]any)["managedFields"].([]any)[1].(map[string]any)["fieldsType"] = fieldsType
		return u
	}
	phase := map[string]any{"f:status": map[string]any{"f:phase": map[string]any{}}}
	for _, c := range []struct {
		name         string
		obj          *unstructured.Unstructured
		badEntry     bool
		wantNoErrors bool
	}{
		{"a fieldsV1 that is not a field set", obj("Running", "FieldsV1", "not a field set"), true, false},
		{"an unknown fieldsType", obj("Running", "FieldsV2", phase), true, false},
		{"an object that does not match its schema", obj("", "FieldsV1", phase), false, false},
		{"readable", obj("Running", "FieldsV1", phase), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := extractOwned(tc, c.obj, "m", StatusSubresource)
			if c.wantNoErrors {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidInput) || errors.Is(err, ownership.ErrBadManagedFields) != c.badEntry {
				t.Fatalf("Owned: %v; want ErrInvalidInput, ErrBadManagedFields %v", err, c.badEntry)
			}
		})
	}
}

// A state is reused at another resourceVersion only when its content holds
// every field of the entry (found by FuzzOwned, testdata/fuzz/FuzzOwned/a2b38e03d03f0c49):
// the value check cannot see an owned field the content lacks.
func TestExtractionCompleteness(t *testing.T) {
	tc := widgetConverter(t)
	ks := widgetSchema(t, tc)
	entry := []byte(`{"f:status":{"f:phase":{},"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{}}}}}`)
	widget := func(status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
		u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
		u.SetName("w")
		return u
	}
	condA := func(reason string) map[string]any {
		c := map[string]any{"type": "A", "status": "True"}
		if reason != "" {
			c["reason"] = reason
		}
		return c
	}
	for _, c := range []struct {
		name   string
		status map[string]any
		// later is the object after the missing field came back, for the
		// control; nil when the extraction is complete.
		later map[string]any
	}{
		{"every owned field there", map[string]any{"phase": "On", "conditions": []any{condA("Up")}}, nil},
		{"the phase left out", map[string]any{"conditions": []any{condA("Up")}},
			map[string]any{"phase": "Off", "conditions": []any{condA("Up")}}},
		{"a condition's reason left out", map[string]any{"phase": "On", "conditions": []any{condA("")}},
			map[string]any{"phase": "On", "conditions": []any{condA("Down")}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			content, complete, err := extractFrom(tc, widget(c.status), entry)
			if err != nil || complete != (c.later == nil) {
				t.Fatalf("complete %v, err %v; want complete %v", complete, err, c.later == nil)
			}
			if complete {
				return
			}
			// The control: the value check alone lets this content serve
			// for the object whose owned field came back with a value.
			if !valuesMatch(ks.Schema, ks.TypeRef, content, map[string]any{"status": c.later}) {
				t.Fatalf("the control expects valuesMatch to miss the field that came back in %v", c.later)
			}
		})
	}
}

// TestFormsShareTheObjectsIdentity: the forms two managers of one object
// remember after their applies share one copy of the object's metadata, and
// a build that edits the metadata of its copy changes no other manager's
// form. The control is a build given a shallow copy of a form, which shares
// the metadata: its edit shows up in the form it was copied from.
func TestFormsShareTheObjectsIdentity(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	typ := reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]()
	lay, _ := h.a.layouts.of(typ)
	m, n := h.t, h.t
	n.Manager = "n"
	form := func(manager string) *acForm {
		t.Helper()
		st := h.a.owned.get(ownedKey{uid: "u1", manager: manager, sub: MainResource})
		if st == nil || st.last == nil {
			t.Fatalf("%s: no form remembered", manager)
		}
		return st.last
	}
	res, err := h.a.Apply(ctx, m, h.observe(t), widgetBuild("On", nil), &ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = h.a.Apply(ctx, n, res.Object, widgetBuild("", map[string]string{"a": "1"}), &ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	fm, fn := form("m"), form("n")
	if lay.objectMeta(fm.ac, false) != lay.objectMeta(fn.ac, false) {
		t.Fatal("the managers' forms keep a copy of the metadata each")
	}
	mBody, err := json.Marshal(fm.ac)
	if err != nil {
		t.Fatal(err)
	}

	// The control: a shallow copy shares the metadata with the form.
	shallow := *fm.ac.(*acv1alpha1.WidgetApplyConfiguration)
	shallow.WithLabels(map[string]string{"leak": "x"})
	if leaked, _ := json.Marshal(fm.ac); string(leaked) == string(mBody) {
		t.Fatal("the control expects an edit through a shallow copy to reach the form")
	}
	shallow.Labels = nil // undo

	// n labels the object: its build edits a copy, m's form stays as applied.
	labels := Build{Func: func(*unstructured.Unstructured, client.Object) (Built, error) { return Built{}, nil },
		Typed: &TypedBuild{Type: typ, Mutate: func(ac any, _ client.Object) (Built, error) {
			ac.(*acv1alpha1.WidgetApplyConfiguration).WithLabels(map[string]string{"n": "1"})
			return Built{}, nil
		}}}
	if _, err = h.a.Apply(ctx, n, h.observe(t), labels, &ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if !fm.encodesAs(mBody) || form("m") != fm {
		t.Fatalf("m's form changed with n's labels")
	}
	if meta := lay.objectMeta(form("n").ac, false); meta == lay.objectMeta(fm.ac, false) || meta.Labels["n"] != "1" {
		t.Fatalf("n's form holds %+v, want its own metadata with its label", meta)
	}
	sent := len(h.bodies())
	if again, err := h.a.Apply(ctx, m, h.observe(t), widgetBuild("On", nil), &ApplyOptions{}); err != nil || again.Sent || len(h.bodies()) != sent {
		t.Fatalf("m's unchanged intent: sent %v, err %v; want nothing sent", again.Sent, err)
	}
}
