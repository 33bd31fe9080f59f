package conflicts

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func intentJSON(t *testing.T, s string) map[string]interface{} {
	t.Helper()
	var m map[string]interface{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const widgetIntent = `{
 "apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
 "metadata": {"name": "w1", "namespace": "ns"},
 "status": {
  "conditions": [
   {"type": "Ready", "status": "False", "reason": "Down", "message": "m", "lastTransitionTime": "2026-01-02T03:04:05Z"},
   {"type": "Degraded", "status": "True", "reason": "Slow", "message": "m", "lastTransitionTime": "2026-01-02T03:04:05Z"}
  ],
  "endpoint": "10.0.0.1",
  "attributes": {"zone": "a", "region": "eu"},
  "plan": {"id": "p1", "steps": ["x", "y"]},
  "finalizers": ["a", "b"]
 }
}`

// readyOwned is the Apply entry of a manager that applied Ready and Degraded
// and then lost Ready's status, reason and message to a merge patch: it still
// owns Ready's key and lastTransitionTime.
const readyOwned = `{"f:status":{"f:conditions":{
 "k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:lastTransitionTime":{}},
 "k:{\"type\":\"Degraded\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{},"f:message":{},"f:lastTransitionTime":{}}}}}`

func fieldSet(t *testing.T, s string) *fieldpath.Set {
	t.Helper()
	set := &fieldpath.Set{}
	if err := set.FromJSON(strings.NewReader(s)); err != nil {
		t.Fatal(err)
	}
	return set
}

func TestRemoveFields(t *testing.T) {
	tests := []struct {
		name        string
		owned       string // the manager's Apply entry; "" for none
		paths       []string
		wantRemoved []string
		wantStatus  string
	}{
		{"a condition's field drops the whole condition the manager does not own",
			"",
			[]string{`.status.conditions[type="Ready"].status`, `.status.conditions[type="Ready"].reason`},
			[]string{`.status.conditions[type="Ready"]`},
			`{"conditions":[{"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"in a condition the manager owns, just the contested fields go; the key and the rest stay",
			readyOwned,
			[]string{`.status.conditions[type="Ready"].status`, `.status.conditions[type="Ready"].reason`, `.status.conditions[type="Ready"].message`},
			[]string{`.status.conditions[type="Ready"].status`, `.status.conditions[type="Ready"].reason`, `.status.conditions[type="Ready"].message`},
			`{"conditions":[{"type":"Ready","lastTransitionTime":"2026-01-02T03:04:05Z"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"owning the key field alone is owning the element",
			`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{"f:type":{}}}}}`,
			[]string{`.status.conditions[type="Ready"].status`},
			[]string{`.status.conditions[type="Ready"].status`},
			`{"conditions":[{"type":"Ready","reason":"Down","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"owning a field of the element but not its key is not owning the element",
			`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{"f:message":{}}}}}`,
			[]string{`.status.conditions[type="Ready"].status`},
			[]string{`.status.conditions[type="Ready"]`},
			`{"conditions":[{"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"an owned condition named itself keeps its key alone",
			readyOwned,
			[]string{`.status.conditions[type="Ready"]`, `.status.conditions[type="Ready"].status`},
			[]string{`.status.conditions[type="Ready"]`},
			`{"conditions":[{"type":"Ready"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"every field of every owned condition contested: only the keys are left",
			readyOwned,
			[]string{`.status.conditions[type="Ready"].status`, `.status.conditions[type="Ready"].reason`, `.status.conditions[type="Ready"].message`,
				`.status.conditions[type="Ready"].lastTransitionTime`, `.status.conditions[type="Degraded"].status`, `.status.conditions[type="Degraded"].reason`,
				`.status.conditions[type="Degraded"].message`, `.status.conditions[type="Degraded"].lastTransitionTime`,
				`.status.endpoint`, `.status.attributes`, `.status.plan`, `.status.finalizers`},
			[]string{`.status.conditions[type="Ready"].status`, `.status.conditions[type="Ready"].reason`, `.status.conditions[type="Ready"].message`,
				`.status.conditions[type="Ready"].lastTransitionTime`, `.status.conditions[type="Degraded"].status`, `.status.conditions[type="Degraded"].reason`,
				`.status.conditions[type="Degraded"].message`, `.status.conditions[type="Degraded"].lastTransitionTime`,
				`.status.endpoint`, `.status.attributes`, `.status.plan`, `.status.finalizers`},
			`{"conditions":[{"type":"Ready"},{"type":"Degraded"}]}`},
		{"a scalar field drops just that field",
			"",
			[]string{`.status.endpoint`},
			[]string{`.status.endpoint`},
			`{"conditions":[{"type":"Ready","status":"False","reason":"Down","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"a map key drops just that key; emptied containers go",
			"",
			[]string{`.status.attributes.zone`, `.status.attributes.region`, `.status.plan.steps`, `.status.finalizers[="a"]`, `.status.conditions[type="Ready"]`, `.status.conditions[type="Degraded"].message`},
			[]string{`.status.attributes.zone`, `.status.attributes.region`, `.status.plan.steps`, `.status.finalizers[="a"]`, `.status.conditions[type="Ready"]`, `.status.conditions[type="Degraded"]`},
			`{"endpoint":"10.0.0.1","plan":{"id":"p1"},"finalizers":["b"]}`},
		{"an element selected by value goes whole, owned or not",
			`{"f:status":{"f:finalizers":{"v:\"a\"":{}}}}`,
			[]string{`.status.finalizers[="a"]`},
			[]string{`.status.finalizers[="a"]`},
			`{"conditions":[{"type":"Ready","status":"False","reason":"Down","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["b"]}`},
		{"absent paths are skipped",
			readyOwned,
			[]string{`.status.conditions[type="Nope"].status`, `.status.phase`, `.spec.replicas`, `.status.plan.steps[7]`, `.status.conditions[type="Ready"].observedGeneration`},
			nil,
			`{"conditions":[{"type":"Ready","status":"False","reason":"Down","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"an index drops that element",
			"",
			[]string{`.status.plan.steps[0]`},
			[]string{`.status.plan.steps[0]`},
			`{"conditions":[{"type":"Ready","status":"False","reason":"Down","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["y"]},"finalizers":["a","b"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			intent := intentJSON(t, widgetIntent)
			var ps []fieldpath.Path
			for _, p := range tt.paths {
				ps = append(ps, MustParsePath(p))
			}
			var owned *fieldpath.Set
			if tt.owned != "" {
				owned = fieldSet(t, tt.owned)
			}
			removed, err := RemoveFields(intent, owned, ps...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(paths(removed), tt.wantRemoved) {
				t.Fatalf("removed %v, want %v", paths(removed), tt.wantRemoved)
			}
			if want := intentJSON(t, `{"status":`+tt.wantStatus+`}`)["status"]; !reflect.DeepEqual(intent["status"], want) {
				got, _ := json.Marshal(intent["status"])
				t.Fatalf("status %s", got)
			}
			if intent["apiVersion"] == nil || intent["metadata"] == nil {
				t.Fatal("identity fields must stay")
			}
		})
	}
}

// An element nested in another is owned or not on its own: the innermost
// element the path selects decides.
func TestRemoveFieldsNestedElements(t *testing.T) {
	const nested = `{"a":[{"k":"x","n":1,"b":[{"k":"y","c":"1","d":"2"}]}]}`
	outerOnly := `{"f:a":{"k:{\"k\":\"x\"}":{".":{},"f:k":{},"f:n":{}}}}`
	both := `{"f:a":{"k:{\"k\":\"x\"}":{".":{},"f:k":{},"f:b":{"k:{\"k\":\"y\"}":{".":{},"f:k":{},"f:c":{}}}}}}`
	for _, tc := range []struct {
		name, owned, want, removed string
	}{
		{"the inner element is not owned", outerOnly, `{"a":[{"k":"x","n":1}]}`, `.a[k="x"].b[k="y"]`},
		{"both are owned", both, `{"a":[{"k":"x","n":1,"b":[{"k":"y","d":"2"}]}]}`, `.a[k="x"].b[k="y"].c`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			intent := intentJSON(t, nested)
			removed, err := RemoveFields(intent, fieldSet(t, tc.owned), MustParsePath(`.a[k="x"].b[k="y"].c`))
			if err != nil {
				t.Fatal(err)
			}
			if got := paths(removed); len(got) != 1 || got[0] != tc.removed {
				t.Fatalf("removed %v, want %s", got, tc.removed)
			}
			if !reflect.DeepEqual(intent, intentJSON(t, tc.want)) {
				got, _ := json.Marshal(intent)
				t.Fatalf("intent %s, want %s", got, tc.want)
			}
		})
	}
}

// An owned element named by a path of its own, holding nothing but its key,
// has nothing to give up.
func TestRemoveFieldsKeyOnlyElement(t *testing.T) {
	intent := intentJSON(t, `{"status":{"conditions":[{"type":"Ready"}]}}`)
	removed, err := RemoveFields(intent, fieldSet(t, readyOwned), MustParsePath(`.status.conditions[type="Ready"]`))
	if err != nil || len(removed) != 0 {
		t.Fatalf("removed %v, err %v; want nothing", removed, err)
	}
	if !reflect.DeepEqual(intent, intentJSON(t, `{"status":{"conditions":[{"type":"Ready"}]}}`)) {
		t.Fatalf("got %v", intent)
	}
}

func TestRemoveFieldsKeepsAlreadyEmptyContainers(t *testing.T) {
	intent := intentJSON(t, `{"status":{"attributes":{},"endpoint":"x"}}`)
	if _, err := RemoveFields(intent, nil, MustParsePath(".status.endpoint")); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(intent, intentJSON(t, `{"status":{"attributes":{}}}`)) {
		t.Fatalf("got %v", intent)
	}
}

func TestRemoveFieldsShapeMismatch(t *testing.T) {
	intent := intentJSON(t, `{"status":{"conditions":"oops","endpoint":"x"}}`)
	if _, err := RemoveFields(intent, nil, MustParsePath(`.status.conditions[type="Ready"].status`)); err == nil {
		t.Fatal("want an error when a list is expected")
	}
	if _, err := RemoveFields(intent, fieldSet(t, readyOwned), MustParsePath(`.status.conditions[type="Ready"].status`)); err == nil {
		t.Fatal("want an error when a list is expected, the element owned")
	}
	if _, err := RemoveFields(intent, nil, MustParsePath(`.status.endpoint.x`)); err == nil {
		t.Fatal("want an error when an object is expected")
	}
	if !reflect.DeepEqual(intent, intentJSON(t, `{"status":{"conditions":"oops","endpoint":"x"}}`)) {
		t.Fatalf("a failed removal must leave the intent alone: %v", intent)
	}
}

func TestRemovalTarget(t *testing.T) {
	owned := `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{"f:type":{}}}},
	  "f:a":{"k:{\"k\":\"x\"}":{".":{},"f:b":{"k:{\"k\":\"y\"}":{".":{}}}}},"f:l":{"v:\"v\"":{}}}`
	for _, tc := range []struct {
		in, wantNone, wantOwned string
	}{
		{`.status.conditions[type="Ready"].status`, `.status.conditions[type="Ready"]`, `.status.conditions[type="Ready"].status`},
		{`.status.conditions[type="Ready"]`, `.status.conditions[type="Ready"]`, `.status.conditions[type="Ready"]`},
		{`.status.conditions[type="Other"].status`, `.status.conditions[type="Other"]`, `.status.conditions[type="Other"]`},
		{`.status.endpoint`, `.status.endpoint`, `.status.endpoint`},
		{`.a[k="x"].b[k="y"].c`, `.a[k="x"].b[k="y"]`, `.a[k="x"].b[k="y"].c`},
		{`.a[k="x"].b[k="z"].c`, `.a[k="x"].b[k="z"]`, `.a[k="x"].b[k="z"]`},
		{`.a[k="x"].n`, `.a[k="x"]`, `.a[k="x"].n`},
		{`.l[="v"]`, `.l[="v"]`, `.l[="v"]`},
		{`.a[2].b`, `.a[2]`, `.a[2]`},
		{``, ``, ``},
	} {
		p := MustParsePath(tc.in)
		if got := removalTarget(p, nil).String(); got != tc.wantNone {
			t.Errorf("removalTarget(%s, nil) = %s, want %s", tc.in, got, tc.wantNone)
		}
		if got := removalTarget(p, fieldSet(t, owned)).String(); got != tc.wantOwned {
			t.Errorf("removalTarget(%s, owned) = %s, want %s", tc.in, got, tc.wantOwned)
		}
	}
}
