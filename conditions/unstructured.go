package conditions

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// UnstructuredObject is an unstructured object seen through conditions
// accessors: its status.conditions, read and written as metav1.Conditions.
// It is an Object, so the helpers of this package work on custom resources
// without Go types.
//
// SetConditions rewrites only the conditions that changed: the others keep
// their content as it was, field for field, so an Edit never claims another
// writer's condition by re-encoding it. A changed condition keeps the fields
// metav1.Condition does not have. Items GetConditions cannot read as
// metav1.Conditions are left out of its result and reported by Err.
type UnstructuredObject struct {
	*unstructured.Unstructured
	errs []error
}

// Unstructured returns u seen through conditions accessors. Changes are made
// to u itself.
func Unstructured(u *unstructured.Unstructured) *UnstructuredObject {
	return &UnstructuredObject{Unstructured: u}
}

// GetConditions returns status.conditions as metav1.Conditions.
func (u *UnstructuredObject) GetConditions() []metav1.Condition {
	items, found, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		u.errs = append(u.errs, fmt.Errorf("status.conditions: %w", err))
		return nil
	}
	if !found {
		return nil
	}
	out := make([]metav1.Condition, 0, len(items))
	for i, item := range items {
		c, err := decode(item)
		if err != nil {
			u.errs = append(u.errs, fmt.Errorf("status.conditions[%d]: %w", i, err))
			continue
		}
		out = append(out, c)
	}
	return out
}

// SetConditions replaces status.conditions with list.
func (u *UnstructuredObject) SetConditions(list []metav1.Condition) {
	var before []any
	if items, found, err := unstructured.NestedFieldNoCopy(u.Object, "status", "conditions"); found && err == nil {
		before, _ = items.([]any)
	}
	byType := map[string]map[string]any{}
	for _, item := range before {
		if m, ok := item.(map[string]any); ok {
			if t, ok := m["type"].(string); ok {
				byType[t] = m
			}
		}
	}
	if len(list) == 0 {
		unstructured.RemoveNestedField(u.Object, "status", "conditions")
		return
	}
	items := make([]any, 0, len(list))
	for _, c := range list {
		item, err := encode(c, byType[c.Type])
		if err != nil {
			u.errs = append(u.errs, fmt.Errorf("condition %q: %w", c.Type, err))
			if prev := byType[c.Type]; prev != nil {
				items = append(items, prev)
			}
			continue
		}
		items = append(items, item)
	}
	if err := unstructured.SetNestedSlice(u.Object, items, "status", "conditions"); err != nil {
		u.errs = append(u.errs, fmt.Errorf("status.conditions: %w", err))
	}
}

// Err reports the conditions that could not be read or written.
func (u *UnstructuredObject) Err() error { return errors.Join(u.errs...) }

// decode reads one item of status.conditions.
func decode(item any) (metav1.Condition, error) {
	var c metav1.Condition
	m, ok := item.(map[string]any)
	if !ok {
		return c, fmt.Errorf("a %T, not an object", item)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
		return c, err
	}
	return c, nil
}

// encode returns c as an item of status.conditions. prev is the item of the
// same type, if any: it is returned as is when it already says c, and its
// fields metav1.Condition does not have are kept.
func encode(c metav1.Condition, prev map[string]any) (map[string]any, error) {
	if prev != nil {
		if was, err := decode(prev); err == nil && same(was, c) {
			return prev, nil
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		return m, nil
	}
	out := make(map[string]any, len(prev)+len(m))
	for k, v := range prev {
		switch k {
		case "type", "status", "reason", "message", "lastTransitionTime", "observedGeneration":
		default:
			out[k] = v
		}
	}
	for k, v := range m {
		out[k] = v
	}
	return out, nil
}

// same reports whether a and b encode alike: lastTransitionTime is stored
// with one-second resolution.
func same(a, b metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration &&
		a.LastTransitionTime.Truncate(time.Second).Equal(b.LastTransitionTime.Truncate(time.Second))
}
