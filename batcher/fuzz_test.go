package batcher

import (
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	"github.com/statusapply/statusapply/ssa"
)

// FuzzEditDiff builds a random Widget from the fuzzer's bytes (conditions,
// phase, plan, attributes, endpoint, spec, labels), applies a random sequence
// of edits to a copy (set, change, remove and reorder conditions, replace or
// drop the plan, set or delete attributes, set scalars, sometimes to the value
// they had) and runs the editor an Edit goes through at Flush. Properties, for
// the status subresource and for the object itself:
//
//   - round trip: the editor's changes, merged into the observed object's
//     content, reproduce the edited object's content for the subresource
//     (items of map lists compared by key, as the API server merges them),
//     and leave the rest of the object alone;
//   - an edit that changes nothing for the subresource (the same values,
//     conditions only reordered, or a change to the other part of the object)
//     yields no change: a declarative intent stays empty;
//   - a declarative intent claims only values the edited object holds.
func FuzzEditDiff(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{0, 2, 1, 0, 3, 1, 2, 0},
		{4, 1, 2, 1, 2, 3, 0, 1, 1, 5, 1, 2, 0, 0, 9},
		{3, 0, 1, 2, 6, 0, 0, 0, 6, 1, 0, 0, 5, 0, 1, 7},
		{2, 0, 0, 0, 1, 1, 1, 1, 8, 8, 8, 8},
		{255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
	} {
		f.Add(seed)
	}
	tc := fuzzTypeConverter(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data: data}
		sub := ssa.StatusSubresource
		if in.next()%4 == 0 {
			sub = ssa.MainResource
		}
		observed := in.widget()
		// The manager's entry, owning nothing: an Edit that removes a field
		// must know who owns it (an observation without managedFields is read
		// again, which the Applier does, not the editor).
		observed.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: v1alpha1.SchemeGroupVersion.String(), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1("{}"),
			Subresource: string(sub)}}
		edited := observed.DeepCopy()
		edits := in.edits()
		for _, e := range edits {
			e(edited)
		}
		before, after := contentOf(t, observed, widgetGVK), contentOf(t, edited, widgetGVK)

		// Incremental: the changes merged into the observed content.
		intent := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(before)}
		run := editRun(edits)
		target := ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w",
			Subresource: sub, Manager: "m"}
		ed := &editor{target: target, tc: tc, observed: observed, working: map[reflect.Type]client.Object{}}
		if _, err := ed.apply(run, 0, len(run), intent); err != nil {
			t.Fatalf("edit: %v", err)
		}
		part := func(content map[string]any) any { return subresourcePart(content, sub) }
		if !sameByKeys(part(intent.Object), part(after)) {
			t.Fatalf("round trip: the merged %v is not the edited %v", part(intent.Object), part(after))
		}
		if !sameByKeys(otherPart(intent.Object, sub), otherPart(before, sub)) {
			t.Fatalf("the merge changed the other part of the object: %v, was %v", otherPart(intent.Object, sub), otherPart(before, sub))
		}

		// Declarative: only what changed is claimed.
		declared := &unstructured.Unstructured{Object: map[string]any{}}
		ed = &editor{target: target, tc: tc, observed: observed, working: map[reflect.Type]client.Object{}}
		if _, err := ed.apply(run, 0, len(run), declared); err != nil {
			t.Fatalf("edit: %v", err)
		}
		if sameByKeys(part(before), part(after)) && len(declared.Object) != 0 {
			t.Fatalf("an edit that changed nothing claimed %v", declared.Object)
		}
		if !holds(after, declared.Object) {
			t.Fatalf("claimed %v, which the edited object %v does not hold", declared.Object, after)
		}
	})
}

var widgetGVK = [2]string{v1alpha1.SchemeGroupVersion.String(), "Widget"}

func fuzzTypeConverter(t testing.TB) managedfields.TypeConverter {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return applyconfiguration.NewTypeConverter(s)
}

// editRun wraps edits as the contributions EditStatus queues.
func editRun(edits []func(*v1alpha1.Widget)) []contribution {
	run := make([]contribution, 0, len(edits))
	for _, e := range edits {
		run = append(run, contribution{
			fn:   Edit[*v1alpha1.Widget](func(w *v1alpha1.Widget) error { e(w); return nil }),
			call: editCaller[*v1alpha1.Widget]{},
		})
	}
	if len(run) == 0 {
		run = append(run, contribution{fn: Edit[*v1alpha1.Widget](func(*v1alpha1.Widget) error { return nil }), call: editCaller[*v1alpha1.Widget]{}})
	}
	return run
}

// subresourcePart is what an apply to sub writes: status, or the object's
// spec and user metadata.
func subresourcePart(content map[string]any, sub ssa.Subresource) any {
	if sub == ssa.StatusSubresource {
		return content["status"]
	}
	md, _ := content["metadata"].(map[string]any)
	return map[string]any{"spec": content["spec"], "labels": md["labels"], "annotations": md["annotations"]}
}

// otherPart is the rest, which an apply to sub leaves alone.
func otherPart(content map[string]any, sub ssa.Subresource) any {
	if sub == ssa.StatusSubresource {
		return map[string]any{"spec": content["spec"], "metadata": content["metadata"]}
	}
	return content["status"]
}

// sameByKeys compares unstructured values as the Widget's schema merges them:
// conditions (the one map list) by their type whatever their order,
// everything else as JSON, an absent or empty value the same as null.
func sameByKeys(a, b any) bool {
	return equalJSON(normalised(a), normalised(b))
}

func normalised(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			if n := normalised(c); n != nil {
				out[k] = n
			}
		}
		if conds, ok := out["conditions"].([]any); ok {
			sorted := append([]any(nil), conds...)
			sort.SliceStable(sorted, func(i, j int) bool { return condType(sorted[i]) < condType(sorted[j]) })
			out["conditions"] = sorted
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalised(x[i])
		}
		return out
	}
	return v
}

func condType(item any) string {
	m, _ := item.(map[string]any)
	s, _ := m["type"].(string)
	return s
}

// holds reports whether every value claimed states is in whole: maps by
// entry, conditions by type, other values equal.
func holds(whole, claimed any) bool {
	switch c := claimed.(type) {
	case map[string]any:
		w, _ := whole.(map[string]any)
		for k, v := range c {
			if !holds(w[k], v) {
				return false
			}
		}
		return true
	case []any:
		w, _ := whole.([]any)
		if len(c) > 0 && condType(c[0]) != "" {
			for _, item := range c {
				found := false
				for _, candidate := range w {
					if condType(candidate) == condType(item) && holds(candidate, item) {
						found = true
						break
					}
				}
				if !found {
					return false
				}
			}
			return true
		}
	}
	return equalJSON(whole, claimed)
}

// fuzzInput turns the fuzzer's bytes into a Widget and edits, reading zero
// once they run out.
type fuzzInput struct {
	data []byte
	pos  int
}

func (in *fuzzInput) next() int {
	if in.pos >= len(in.data) {
		return 0
	}
	in.pos++
	return int(in.data[in.pos-1])
}

func (in *fuzzInput) pick(options ...string) string { return options[in.next()%len(options)] }

var (
	condTypes = []string{"A", "B", "C", "example.com/D"}
	statuses  = []string{"True", "False", "Unknown"}
)

func (in *fuzzInput) condition() metav1.Condition {
	return metav1.Condition{
		Type: in.pick(condTypes...), Status: metav1.ConditionStatus(in.pick(statuses...)),
		Reason: in.pick("Up", "Down", "R"), Message: in.pick("", "m", "other message"),
		ObservedGeneration: int64(in.next() % 3), LastTransitionTime: metav1.Unix(1700000000+int64(in.next()%2), 0),
	}
}

func (in *fuzzInput) plan() *v1alpha1.WidgetPlan {
	if in.next()%3 == 0 {
		return nil
	}
	p := &v1alpha1.WidgetPlan{ID: in.pick("p", "q"), CreatedBy: in.pick("", "planner")}
	for range in.next() % 3 {
		p.Steps = append(p.Steps, in.pick("a", "b", "c"))
	}
	return p
}

func (in *fuzzInput) widget() *v1alpha1.Widget {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}}
	for range in.next() % 4 {
		c := in.condition()
		if meta.FindStatusCondition(w.Status.Conditions, c.Type) == nil {
			w.Status.Conditions = append(w.Status.Conditions, c)
		}
	}
	w.Status.Phase = in.pick("", "Running", "Done")
	w.Status.Plan = in.plan()
	for range in.next() % 3 {
		if w.Status.Attributes == nil {
			w.Status.Attributes = map[string]string{}
		}
		w.Status.Attributes[in.pick("zone", "rack")] = in.pick("a", "b")
	}
	w.Status.Endpoint = in.pick("", "10.0.0.1")
	w.Status.ReadyReplicas = int32(in.next() % 3)
	w.Spec.Replicas = int32(in.next() % 3)
	if in.next()%2 == 1 {
		w.Labels = map[string]string{"app": in.pick("x", "y")}
	}
	return w
}

// edits reads up to eight edits.
func (in *fuzzInput) edits() []func(*v1alpha1.Widget) {
	var out []func(*v1alpha1.Widget)
	for range in.next() % 9 {
		switch in.next() % 12 {
		case 0:
			c := in.condition()
			out = append(out, func(w *v1alpha1.Widget) { meta.SetStatusCondition(&w.Status.Conditions, c) })
		case 1:
			typ := in.pick(condTypes...)
			out = append(out, func(w *v1alpha1.Widget) { meta.RemoveStatusCondition(&w.Status.Conditions, typ) })
		case 2:
			phase := in.pick("", "Running", "Done")
			out = append(out, func(w *v1alpha1.Widget) { w.Status.Phase = phase })
		case 3:
			p := in.plan()
			out = append(out, func(w *v1alpha1.Widget) { w.Status.Plan = p.DeepCopy() })
		case 4:
			key, value, del := in.pick("zone", "rack"), in.pick("a", "b"), in.next()%2 == 0
			out = append(out, func(w *v1alpha1.Widget) {
				switch {
				case del:
					delete(w.Status.Attributes, key)
				case w.Status.Attributes == nil:
					w.Status.Attributes = map[string]string{key: value}
				default:
					w.Status.Attributes[key] = value
				}
			})
		case 5:
			i, j := in.next(), in.next()
			out = append(out, func(w *v1alpha1.Widget) {
				if n := len(w.Status.Conditions); n > 1 {
					w.Status.Conditions[i%n], w.Status.Conditions[j%n] = w.Status.Conditions[j%n], w.Status.Conditions[i%n]
				}
			})
		case 6:
			msg := in.pick("", "m", "edited")
			out = append(out, func(w *v1alpha1.Widget) {
				if len(w.Status.Conditions) > 0 {
					w.Status.Conditions[0].Message = msg
				}
			})
		case 7:
			out = append(out, func(w *v1alpha1.Widget) { w.Status = *w.Status.DeepCopy() }) // the same values
		case 8:
			endpoint := in.pick("", "10.0.0.1", "10.0.0.2")
			out = append(out, func(w *v1alpha1.Widget) { w.Status.Endpoint = endpoint })
		case 9:
			n := int32(in.next() % 3)
			out = append(out, func(w *v1alpha1.Widget) { w.Status.ReadyReplicas = n })
		case 10:
			n := int32(in.next() % 3)
			out = append(out, func(w *v1alpha1.Widget) { w.Spec.Replicas = n })
		case 11:
			value, del := in.pick("x", "y", "z"), in.next()%2 == 0
			out = append(out, func(w *v1alpha1.Widget) {
				switch {
				case del:
					delete(w.Labels, "app")
				case w.Labels == nil:
					w.Labels = map[string]string{"app": value}
				default:
					w.Labels["app"] = value
				}
			})
		}
	}
	return out
}
