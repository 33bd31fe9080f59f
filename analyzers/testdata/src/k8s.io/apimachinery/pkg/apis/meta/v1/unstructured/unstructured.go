// Package unstructured is a stub of k8s.io/apimachinery/pkg/apis/meta/v1/unstructured.
package unstructured

import "fmt"

type Unstructured struct{ Object map[string]interface{} }

func (u *Unstructured) GetName() string { return "" }

// GetAPIVersion reads the object through NestedFieldNoCopy, as
// apimachinery's getters do.
func (u *Unstructured) GetAPIVersion() string {
	v, _, _ := NestedFieldNoCopy(u.Object, "apiVersion")
	s, _ := v.(string)
	return s
}

func (u *Unstructured) GroupVersionKind() string { return u.GetAPIVersion() }

func (u *Unstructured) UnstructuredContent() map[string]interface{} {
	if u.Object == nil {
		return make(map[string]interface{})
	}
	return u.Object
}

// NestedFieldNoCopy walks obj as apimachinery's does: its local val starts
// as obj and is rebound at each step, which writes nothing.
func NestedFieldNoCopy(obj map[string]interface{}, fields ...string) (interface{}, bool, error) {
	var val interface{} = obj
	for _, field := range fields {
		if val == nil {
			return nil, false, nil
		}
		if m, ok := val.(map[string]interface{}); ok {
			val, ok = m[field]
			if !ok {
				return nil, false, nil
			}
		} else {
			return nil, false, fmt.Errorf("%v is not a map", val)
		}
	}
	return val, true, nil
}

// SetNestedField sets value at fields, creating the maps on its way as
// apimachinery's does.
func SetNestedField(obj map[string]interface{}, value interface{}, fields ...string) error {
	m := obj
	for _, field := range fields[:len(fields)-1] {
		if v, ok := m[field]; ok {
			if next, ok := v.(map[string]interface{}); ok {
				m = next
				continue
			}
			return fmt.Errorf("%v is not a map", v)
		}
		next := map[string]interface{}{}
		m[field] = next
		m = next
	}
	m[fields[len(fields)-1]] = value
	return nil
}

func SetNestedMap(obj map[string]interface{}, value map[string]interface{}, fields ...string) error {
	return SetNestedField(obj, value, fields...)
}

func (u *Unstructured) DeepCopy() *Unstructured { c := *u; return &c }
