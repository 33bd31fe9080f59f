package differential

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// An op is one status contribution written in each of the four forms a
// status function can take: a Mutator of the generated apply configuration,
// an Edit of the typed object (the merge-patch way), and both again for an
// unstructured object. The four are meant to say the same thing; the harness
// holds them to it. removeCondition queues batcher.RemoveCondition in place
// of both Mutators; dropCondition has them drop the condition from their apply
// configuration.
type op struct {
	name     string
	removes  string // the condition type batcher.RemoveCondition removes
	mutator  widgets.Mutator
	edit     func(*v1alpha1.Widget) error
	uMutator func(ac, observed *unstructured.Unstructured) error
	uEdit    func(*unstructured.Unstructured) error
}

// intent is what the contributing manager queues: ops in order, each with
// the options.
type intent struct {
	ops  []op
	opts []ssa.ApplyOption
}

// setCondition sets a condition: ssa.SetCondition in a Mutator (which keeps
// the observed lastTransitionTime while the status is unchanged and takes
// observedGeneration from the object), meta.SetStatusCondition with the
// object's generation in an Edit, and the same rules by hand on unstructured
// content.
func setCondition(condType string, status metav1.ConditionStatus, reason, message string) op {
	c := metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message}
	return op{
		name:    fmt.Sprintf("set %s %s (%s)", condType, status, reason),
		mutator: widgets.PutCondition(c),
		edit: func(w *v1alpha1.Widget) error {
			c := c
			c.ObservedGeneration = w.Generation
			meta.SetStatusCondition(&w.Status.Conditions, c)
			return nil
		},
		uMutator: func(ac, observed *unstructured.Unstructured) error {
			ltt := now()
			if was := findCondition(conditionsOf(observed), condType); was != nil && was["status"] == string(status) {
				if t, ok := was["lastTransitionTime"].(string); ok {
					ltt = t
				}
			}
			item := map[string]any{"type": condType, "status": string(status), "reason": reason, "message": message,
				"lastTransitionTime": ltt, "observedGeneration": observed.GetGeneration()}
			return putConditions(ac, replaceCondition(conditionsOf(ac), item))
		},
		uEdit: func(o *unstructured.Unstructured) error {
			conds := conditionsOf(o)
			item := findCondition(conds, condType)
			if item == nil {
				item = map[string]any{"type": condType, "lastTransitionTime": now()}
				conds = append(conds, item)
			} else if item["status"] != string(status) {
				item["lastTransitionTime"] = now()
			}
			item["status"], item["reason"], item["message"] = string(status), reason, message
			item["observedGeneration"] = o.GetGeneration()
			return putConditions(o, conds)
		},
	}
}

// removeCondition removes a condition: batcher.RemoveCondition in place of a
// Mutator (a Mutator's apply configuration holds only what the manager owns),
// meta.RemoveStatusCondition on the object.
func removeCondition(condType string) op {
	return op{
		name:    "remove " + condType,
		removes: condType,
		edit: func(w *v1alpha1.Widget) error {
			meta.RemoveStatusCondition(&w.Status.Conditions, condType)
			return nil
		},
		uEdit: func(o *unstructured.Unstructured) error {
			return putConditions(o, withoutCondition(conditionsOf(o), condType))
		},
	}
}

// dropCondition removes a condition by leaving it out: a Mutator drops it
// from its apply configuration (which holds what the manager owns), an Edit
// from the object, with meta.RemoveStatusCondition or by hand.
func dropCondition(condType string) op {
	o := removeCondition(condType)
	o.name, o.removes = "drop "+condType, ""
	o.mutator = widgets.RemoveCondition(condType)
	o.uMutator = func(ac, _ *unstructured.Unstructured) error {
		if _, has := ac.Object["status"]; !has {
			// A manager that owns no status is not given an empty one.
			return nil
		}
		return putConditions(ac, withoutCondition(conditionsOf(ac), condType))
	}
	return o
}

// countConditions sets condType to True with the reason SawN, N the number
// of the observed object's other conditions: a decision taken from observed
// state, deterministic as a guarded contribution must be.
func countConditions(condType string) op {
	reason := func(n int) string { return fmt.Sprintf("Saw%d", n) }
	typed := func(w *v1alpha1.Widget) string {
		return reason(len(slices.DeleteFunc(slices.Clone(w.Status.Conditions),
			func(c metav1.Condition) bool { return c.Type == condType })))
	}
	untyped := func(o *unstructured.Unstructured) string {
		return reason(len(withoutCondition(conditionsOf(o), condType)))
	}
	return op{
		name: "count the other conditions in " + condType,
		mutator: func(ac *acv1alpha1.WidgetApplyConfiguration, w *v1alpha1.Widget) error {
			return setCondition(condType, metav1.ConditionTrue, typed(w), "counted").mutator(ac, w)
		},
		edit: func(w *v1alpha1.Widget) error {
			return setCondition(condType, metav1.ConditionTrue, typed(w), "counted").edit(w)
		},
		uMutator: func(ac, observed *unstructured.Unstructured) error {
			return setCondition(condType, metav1.ConditionTrue, untyped(observed), "counted").uMutator(ac, observed)
		},
		uEdit: func(o *unstructured.Unstructured) error {
			return setCondition(condType, metav1.ConditionTrue, untyped(o), "counted").uEdit(o)
		},
	}
}

// setPhase sets the phase, a field one writer owns whole.
func setPhase(phase string) op {
	return op{
		name: "set phase " + phase,
		mutator: func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithPhase(phase)
			return nil
		},
		edit: func(w *v1alpha1.Widget) error {
			w.Status.Phase = phase
			return nil
		},
		uMutator: func(ac, _ *unstructured.Unstructured) error {
			return unstructured.SetNestedField(ac.Object, phase, "status", "phase")
		},
		uEdit: func(o *unstructured.Unstructured) error {
			return unstructured.SetNestedField(o.Object, phase, "status", "phase")
		},
	}
}

// setAttribute sets one key of the granular attributes map.
func setAttribute(key, value string) op {
	return op{
		name: fmt.Sprintf("set attribute %s=%s", key, value),
		mutator: func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithAttributes(map[string]string{key: value})
			return nil
		},
		edit: func(w *v1alpha1.Widget) error {
			if w.Status.Attributes == nil {
				w.Status.Attributes = map[string]string{}
			}
			w.Status.Attributes[key] = value
			return nil
		},
		uMutator: func(ac, _ *unstructured.Unstructured) error {
			return unstructured.SetNestedField(ac.Object, value, "status", "attributes", key)
		},
		uEdit: func(o *unstructured.Unstructured) error {
			return unstructured.SetNestedField(o.Object, value, "status", "attributes", key)
		},
	}
}

// now is a lastTransitionTime as the API server stores one.
func now() string { return metav1.Now().UTC().Format(time.RFC3339) }

// conditionsOf returns a copy of u's conditions.
func conditionsOf(u *unstructured.Unstructured) []any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	return conds
}

// putConditions sets u's conditions; none leaves the field out, as the typed
// forms' omitempty does, and keeps the status it is in.
func putConditions(u *unstructured.Unstructured, conds []any) error {
	if len(conds) == 0 {
		unstructured.RemoveNestedField(u.Object, "status", "conditions")
		return nil
	}
	return unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
}

func findCondition(conds []any, condType string) map[string]any {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			return m
		}
	}
	return nil
}

func replaceCondition(conds []any, item map[string]any) []any {
	for i, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == item["type"] {
			conds[i] = item
			return conds
		}
	}
	return append(conds, item)
}

func withoutCondition(conds []any, condType string) []any {
	return slices.DeleteFunc(conds, func(c any) bool {
		m, ok := c.(map[string]any)
		return ok && m["type"] == condType
	})
}
