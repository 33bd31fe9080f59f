package shadow

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
)

// The labels of a divergence come from condition types and the schema's
// field names only, each label set once, so the series stay bounded.
func TestLabels(t *testing.T) {
	path := fieldpath.MakePathOrDie
	cond := func(typ string, c batcher.Change, fields ...string) batcher.ConditionDivergence {
		return batcher.ConditionDivergence{Type: typ, Change: c, Fields: fields}
	}
	field := func(p fieldpath.Path, c batcher.Change) batcher.FieldDivergence {
		return batcher.FieldDivergence{Path: p, Change: c}
	}
	for name, tc := range map[string]struct {
		d    batcher.Divergence
		want []divergenceLabels
	}{
		"nothing": {},
		"a condition's reason": {d: batcher.Divergence{Conditions: []batcher.ConditionDivergence{cond("Ready", batcher.Changed, "reason")}},
			want: []divergenceLabels{{conditionType: "Ready", field: "reason", change: "changed"}}},
		"a condition's fields, one label each": {
			d: batcher.Divergence{Conditions: []batcher.ConditionDivergence{cond("Synced", batcher.Changed, "message", "reason", "status")}},
			want: []divergenceLabels{
				{conditionType: "Synced", field: "message", change: "changed"},
				{conditionType: "Synced", field: "reason", change: "changed"},
				{conditionType: "Synced", field: "status", change: "changed"},
			}},
		"a condition added and one removed, without a field": {
			d:    batcher.Divergence{Conditions: []batcher.ConditionDivergence{cond("Healthy", batcher.Added), cond("Synced", batcher.Removed)}},
			want: []divergenceLabels{{conditionType: "Healthy", change: "added"}, {conditionType: "Synced", change: "removed"}}},
		"fields by their path": {d: batcher.Divergence{Fields: []batcher.FieldDivergence{
			field(path("status", "phase"), batcher.Changed), field(path("status", "plan"), batcher.Added),
			field(path("status", "readyReplicas"), batcher.Removed)}},
			want: []divergenceLabels{{field: ".status.phase", change: "changed"}, {field: ".status.plan", change: "added"},
				{field: ".status.readyReplicas", change: "removed"}}},
		"map entries labelled by the map, once per change": {d: batcher.Divergence{Fields: []batcher.FieldDivergence{
			field(path("status", "attributes", "rack"), batcher.Added), field(path("status", "attributes", "zone"), batcher.Changed),
			field(path("status", "attributes", "row"), batcher.Added)}},
			want: []divergenceLabels{{field: ".status.attributes", change: "added"}, {field: ".status.attributes", change: "changed"}}},
		"cut before a list key or value": {d: batcher.Divergence{Fields: []batcher.FieldDivergence{
			field(path("status", "plan", "steps"), batcher.Changed),
			field(path("spec", fieldpath.KeyByFields("name", "a"), "x"), batcher.Changed),
			field(path("metadata", "labels", "app"), batcher.Changed)}},
			want: []divergenceLabels{{field: ".status.plan", change: "changed"}, {field: ".spec", change: "changed"},
				{field: ".metadata.labels", change: "changed"}}},
		"conditions first, then fields": {d: batcher.Divergence{
			Conditions: []batcher.ConditionDivergence{cond("Ready", batcher.Changed, "message")},
			Fields:     []batcher.FieldDivergence{field(path("status", "readyReplicas"), batcher.Added)}},
			want: []divergenceLabels{{conditionType: "Ready", field: "message", change: "changed"},
				{field: ".status.readyReplicas", change: "added"}}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := labels(tc.d); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("labels:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(s)
	return s
}
