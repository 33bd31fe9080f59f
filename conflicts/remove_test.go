package conflicts

import (
	"encoding/json"
	"reflect"
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

func TestRemoveFields(t *testing.T) {
	tests := []struct {
		name        string
		paths       []string
		wantRemoved []string
		wantStatus  string
	}{
		{"a condition's field drops the whole condition",
			[]string{`.status.conditions[type="Ready"].status`, `.status.conditions[type="Ready"].reason`},
			[]string{`.status.conditions[type="Ready"]`},
			`{"conditions":[{"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"a scalar field drops just that field",
			[]string{`.status.endpoint`},
			[]string{`.status.endpoint`},
			`{"conditions":[{"type":"Ready","status":"False","reason":"Down","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"a map key drops just that key; emptied containers go",
			[]string{`.status.attributes.zone`, `.status.attributes.region`, `.status.plan.steps`, `.status.finalizers[="a"]`, `.status.conditions[type="Ready"]`, `.status.conditions[type="Degraded"].message`},
			[]string{`.status.attributes.zone`, `.status.attributes.region`, `.status.plan.steps`, `.status.finalizers[="a"]`, `.status.conditions[type="Ready"]`, `.status.conditions[type="Degraded"]`},
			`{"endpoint":"10.0.0.1","plan":{"id":"p1"},"finalizers":["b"]}`},
		{"absent paths are skipped",
			[]string{`.status.conditions[type="Nope"].status`, `.status.phase`, `.spec.replicas`, `.status.plan.steps[7]`},
			nil,
			`{"conditions":[{"type":"Ready","status":"False","reason":"Down","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"},
			  {"type":"Degraded","status":"True","reason":"Slow","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z"}],
			  "endpoint":"10.0.0.1","attributes":{"zone":"a","region":"eu"},"plan":{"id":"p1","steps":["x","y"]},"finalizers":["a","b"]}`},
		{"an index drops that element",
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
			removed, err := RemoveFields(intent, ps...)
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

func TestRemoveFieldsKeepsAlreadyEmptyContainers(t *testing.T) {
	intent := intentJSON(t, `{"status":{"attributes":{},"endpoint":"x"}}`)
	if _, err := RemoveFields(intent, MustParsePath(".status.endpoint")); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(intent, intentJSON(t, `{"status":{"attributes":{}}}`)) {
		t.Fatalf("got %v", intent)
	}
}

func TestRemoveFieldsShapeMismatch(t *testing.T) {
	intent := intentJSON(t, `{"status":{"conditions":"oops","endpoint":"x"}}`)
	if _, err := RemoveFields(intent, MustParsePath(`.status.conditions[type="Ready"].status`)); err == nil {
		t.Fatal("want an error when a list is expected")
	}
	if _, err := RemoveFields(intent, MustParsePath(`.status.endpoint.x`)); err == nil {
		t.Fatal("want an error when an object is expected")
	}
	if !reflect.DeepEqual(intent, intentJSON(t, `{"status":{"conditions":"oops","endpoint":"x"}}`)) {
		t.Fatalf("a failed removal must leave the intent alone: %v", intent)
	}
}

func TestRemovalTarget(t *testing.T) {
	for in, want := range map[string]string{
		`.status.conditions[type="Ready"].status`: `.status.conditions[type="Ready"]`,
		`.status.endpoint`:                        `.status.endpoint`,
		`.a[k="x"].b[k="y"].c`:                    `.a[k="x"].b[k="y"]`,
		`.a[2].b`:                                 `.a[2]`,
		``:                                        ``,
	} {
		if got := RemovalTarget(MustParsePath(in)).String(); got != want {
			t.Errorf("RemovalTarget(%s) = %s, want %s", in, got, want)
		}
	}
}
