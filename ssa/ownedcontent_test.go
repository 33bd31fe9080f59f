package ssa

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// FuzzOwnedContent decodes an arbitrary JSON object as a Widget apply
// configuration, remembered as a form, and holds the content the value check
// reads from the form (converted, not encoded) to what the form's JSON reads
// back as: the content the API server was sent.
func FuzzOwnedContent(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"w1","namespace":"ns","labels":{"a":"b"},"annotations":{}}}`,
		`{"status":{"conditions":[{"type":"A","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z","observedGeneration":3}]}}`,
		`{"status":{"phase":"On","conditions":[],"readyReplicas":0,"attributes":{}}}`,
		`{"spec":{"replicas":3,"message":""}}`,
		`{"status":{"plan":{"id":"p1","steps":[]}}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, x string) {
		ac := &acv1alpha1.WidgetApplyConfiguration{}
		if json.Unmarshal([]byte(x), ac) != nil {
			return
		}
		body, err := json.Marshal(ac)
		if err != nil {
			return
		}
		want := map[string]any{}
		if err := utiljson.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		st := &ownedState{last: &acForm{typ: reflect.TypeOf(ac), ac: ac}}
		got, err := st.ownedContent()
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !equality.Semantic.DeepEqual(got, withoutIdentity(want)) {
			t.Fatalf("%s: the form's content is %v, its JSON reads back as %v", body, got, withoutIdentity(want))
		}
	})
}
