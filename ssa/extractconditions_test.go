package ssa

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// generalContent is the general extraction of f from observed: its
// top-level fields converted, checked against the schema and walked.
func generalContent(t testing.TB, tc managedfields.TypeConverter, ks *kindSchema, f *entryFields, observed client.Object) (map[string]any, bool) {
	t.Helper()
	u, err := contentOf(observed, v1alpha1.SchemeGroupVersion.WithKind("Widget"), f.top, ks, f.leaves)
	if err != nil {
		t.Fatal(err)
	}
	content, complete, err := f.extract(tc, u)
	if err != nil {
		t.Fatal(err)
	}
	return content, complete
}

// conditionEntry is the fieldsV1 of an entry owning the named fields (all
// six when none are named) of each condition type.
func conditionEntry(types map[string][]string) string {
	items := map[string]any{}
	for typ, fields := range types {
		if fields == nil {
			fields = metav1ConditionFields[:]
		}
		item := map[string]any{".": map[string]any{}}
		for _, f := range fields {
			item["f:"+f] = map[string]any{}
		}
		key, _ := json.Marshal(map[string]string{"type": typ})
		items["k:"+string(key)] = item
	}
	raw, _ := json.Marshal(map[string]any{"f:status": map[string]any{"f:conditions": items}})
	return string(raw)
}

// TestConditionsContent holds the typed extraction of a manager of
// conditions to the general one, and shows what it leaves to it.
func TestConditionsContent(t *testing.T) {
	conv := widgetConverter(t)
	ks := kindSchemaFor(t, v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	ready := observedCondition("Ready", "True", "Up", "all up", 3, heldBase.Add(400*time.Millisecond))
	synced := observedCondition("Synced", "False", "Behind", "two behind", 3, heldBase.Add(-time.Hour).In(time.FixedZone("east", 3600)))
	for _, tc := range []struct {
		name     string
		entry    string
		observed client.Object
		decided  bool
		complete bool
	}{
		{"one type of several", conditionEntry(map[string][]string{"Ready": nil}), heldObserved(synced, ready), true, true},
		{"two types, in the object's order", conditionEntry(map[string][]string{"Ready": nil, "Synced": nil}), heldObserved(synced, ready), true, true},
		{"some fields of a type", conditionEntry(map[string][]string{"Ready": {"type", "status", "message"}}), heldObserved(ready), true, true},
		{"a named type missing", conditionEntry(map[string][]string{"Ready": nil, "Gone": nil}), heldObserved(synced, ready), true, false},
		{"an observedGeneration of 0, left out", conditionEntry(map[string][]string{"Ready": nil}),
			heldObserved(observedCondition("Ready", "True", "Up", "all up", 0, heldBase)), true, false},
		{"an entry without the key field", conditionEntry(map[string][]string{"Ready": {"status"}}), heldObserved(ready), true, false},
		{"no named type on the object", conditionEntry(map[string][]string{"Gone": nil}), heldObserved(ready), false, false},
		{"two items of one type", conditionEntry(map[string][]string{"Ready": nil}), heldObserved(ready, ready), false, false},
		{"a zero lastTransitionTime", conditionEntry(map[string][]string{"Ready": nil}),
			heldObserved(observedCondition("Ready", "True", "Up", "all up", 3, time.Time{})), false, false},
		{"another status field", `{"f:status":{"f:phase":{},"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:status":{}}}}}`, heldObserved(ready), false, false},
		{"a spec field", `{"f:spec":{"f:replicas":{}},"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:status":{}}}}}`, heldObserved(ready), false, false},
		{"a whole item", `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{}}}}`, heldObserved(ready), false, false},
		{"an item keyed otherwise", `{"f:status":{"f:conditions":{"k:{\"name\":\"Ready\"}":{".":{},"f:status":{}}}}}`, heldObserved(ready), false, false},
		{"a field conditions do not have", `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:severity":{}}}}}`, heldObserved(ready), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := newEntryFields([]byte(tc.entry))
			if err != nil {
				t.Fatal(err)
			}
			var objs objectConditions
			content, complete, ok := conditionsContent(ks, &objs, f, tc.observed)
			if ok != tc.decided {
				t.Fatalf("decided %v, want %v", ok, tc.decided)
			}
			if !ok {
				return
			}
			want, wantComplete := generalContent(t, conv, ks, f, tc.observed)
			if !reflect.DeepEqual(content, want) || complete != wantComplete {
				t.Fatalf("typed %v (complete %v)\ngeneral %v (complete %v)", content, complete, want, wantComplete)
			}
			if complete != tc.complete {
				t.Fatalf("complete %v, want %v", complete, tc.complete)
			}
		})
	}
	t.Run("a kind whose conditions are an atomic list", func(t *testing.T) {
		f, err := newEntryFields([]byte(conditionEntry(map[string][]string{"Ready": nil})))
		if err != nil {
			t.Fatal(err)
		}
		var objs objectConditions
		if _, _, ok := conditionsContent(kindSchemaFor(t, v1alpha1.SchemeGroupVersion.WithKind("Gadget")), &objs, f, heldObserved(ready)); ok {
			t.Fatal("extracted conditions the schema does not merge by type")
		}
	})
	// The control: an extraction that reads every field it names, with an
	// observedGeneration of 0 as 0, says it has all of them and holds the
	// 0; the general one says the field is not there, and a state made
	// complete so could serve at another resourceVersion without checking
	// it. The comparison of the table tells the two apart.
	f, err := newEntryFields([]byte(conditionEntry(map[string][]string{"Ready": nil})))
	if err != nil {
		t.Fatal(err)
	}
	naive := map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "Up", "message": "all up", "observedGeneration": int64(0),
		"lastTransitionTime": heldBase.Format(time.RFC3339),
	}}}}
	general, complete := generalContent(t, conv, ks, f, heldObserved(observedCondition("Ready", "True", "Up", "all up", 0, heldBase)))
	if complete || reflect.DeepEqual(naive, general) {
		t.Fatalf("the control: the general extraction gave %v (complete %v), as a read that keeps the 0 would", general, complete)
	}
}

// FuzzConditionsContent holds the typed extraction of a manager of conditions
// to the general one: for an entry's fieldsV1 and a Widget, both as JSON, it
// either declines or gives the general extraction's content and
// completeness.
func FuzzConditionsContent(f *testing.F) {
	const widget = `{"metadata":{"name":"w1","namespace":"ns","resourceVersion":"7"},"spec":{"replicas":2},"status":{"phase":"On","conditions":[` +
		`{"type":"Synced","status":"False","reason":"Behind","message":"two behind","observedGeneration":3,"lastTransitionTime":"2026-11-27T05:00:00+01:00"},` +
		`{"type":"Ready","status":"True","reason":"Up","message":"all up","observedGeneration":3,"lastTransitionTime":"2026-11-27T06:00:00Z"}]}}`
	for _, s := range [][2]string{
		{conditionEntry(map[string][]string{"Ready": nil}), widget},
		{conditionEntry(map[string][]string{"Ready": nil, "Synced": {"type", "status"}, "Gone": nil}), widget},
		{conditionEntry(map[string][]string{"Ready": {"observedGeneration"}}), `{"status":{"conditions":[{"type":"Ready","lastTransitionTime":"2026-11-27T06:00:00Z"}]}}`},
		{conditionEntry(map[string][]string{"Ready": {"status"}}), widget},
		{`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{}}}}`, widget},
	} {
		f.Add(s[0], s[1])
	}
	tc := widgetConverter(f)
	ks := kindSchemaFor(f, v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	var objs objectConditions
	f.Fuzz(func(t *testing.T, entry, observedJSON string) {
		fields, err := newEntryFields([]byte(entry))
		if err != nil {
			return
		}
		observed := &v1alpha1.Widget{}
		if json.Unmarshal([]byte(observedJSON), observed) != nil {
			return
		}
		content, complete, ok := conditionsContent(ks, &objs, fields, observed)
		if !ok {
			return
		}
		want, wantComplete := generalContent(t, tc, ks, fields, observed)
		if !reflect.DeepEqual(content, want) || complete != wantComplete {
			t.Fatalf("typed %v (complete %v)\ngeneral %v (complete %v)\nentry %s\nobserved %s", content, complete, want, wantComplete, entry, observedJSON)
		}
	})
}
