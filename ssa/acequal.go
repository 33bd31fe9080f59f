package ssa

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/statusapply/statusapply/internal/conditionac"
)

// equalAC reports whether a and b, apply configurations of one type (pointers
// to structs), would encode to the same JSON: deeply equal, with times compared
// to the second as they encode. A struct with unexported fields (a time aside)
// or an interface compares as reflect.DeepEqual has it, which errs on the side
// of "different": an apply is sent.
func equalAC(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.IsValid() && vb.IsValid() && va.Type() == vb.Type() && equalValue(va, vb)
}

func equalValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Pointer:
		if a.Pointer() == b.Pointer() {
			return true
		}
		return !a.IsNil() && !b.IsNil() && equalValue(a.Elem(), b.Elem())
	case reflect.Struct:
		return equalStruct(a, b)
	case reflect.Slice:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			return false
		}
		if a.Type() == conditionsACType {
			// The bulk of most statuses, compared without reflection.
			return conditionac.EqualAll(conditionsOf(a), conditionsOf(b))
		}
		return a.Pointer() == b.Pointer() || equalItems(a, b)
	case reflect.Array:
		return equalItems(a, b)
	case reflect.Map:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			return false
		}
		iter := a.MapRange()
		for iter.Next() {
			if other := b.MapIndex(iter.Key()); !other.IsValid() || !equalValue(iter.Value(), other) {
				return false
			}
		}
		return true
	case reflect.Interface:
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	return a.Equal(b)
}

func equalItems(a, b reflect.Value) bool {
	for i := range a.Len() {
		if !equalValue(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

func equalStruct(a, b reflect.Value) bool {
	t := a.Type()
	switch {
	case t == timeType:
		return timeOf(a).Unix() == timeOf(b).Unix()
	case t == objectMetaACType.Elem() && t.NumField() == len(objectMetaFields) && a.CanAddr() && b.CanAddr():
		// In every intent, and equal in most: compared in code.
		x, _ := a.Addr().Interface().(*metav1ac.ObjectMetaApplyConfiguration)
		y, _ := b.Addr().Interface().(*metav1ac.ObjectMetaApplyConfiguration)
		return equalObjectMeta(x, y)
	}
	for i := range t.NumField() {
		fa := a.Field(i)
		if !fa.CanInterface() { // unexported
			return reflect.DeepEqual(a.Interface(), b.Interface())
		}
		if !equalValue(fa, b.Field(i)) {
			return false
		}
	}
	return true
}

// objectMetaFields are the fields of ObjectMetaApplyConfiguration that
// equalObjectMeta compares; TestObjectMetaFields holds the type to them.
var objectMetaFields = [...]string{"Name", "GenerateName", "Namespace", "UID", "ResourceVersion", "Generation",
	"CreationTimestamp", "DeletionTimestamp", "DeletionGracePeriodSeconds", "Labels", "Annotations",
	"OwnerReferences", "Finalizers"}

func equalObjectMeta(x, y *metav1ac.ObjectMetaApplyConfiguration) bool {
	return equalPtr(x.Name, y.Name) && equalPtr(x.Namespace, y.Namespace) && equalPtr(x.UID, y.UID) &&
		equalPtr(x.GenerateName, y.GenerateName) && equalPtr(x.ResourceVersion, y.ResourceVersion) &&
		equalPtr(x.Generation, y.Generation) && equalTime(x.CreationTimestamp, y.CreationTimestamp) &&
		equalTime(x.DeletionTimestamp, y.DeletionTimestamp) &&
		equalPtr(x.DeletionGracePeriodSeconds, y.DeletionGracePeriodSeconds) &&
		equalValue(reflect.ValueOf(x.Labels), reflect.ValueOf(y.Labels)) &&
		equalValue(reflect.ValueOf(x.Annotations), reflect.ValueOf(y.Annotations)) &&
		equalValue(reflect.ValueOf(x.OwnerReferences), reflect.ValueOf(y.OwnerReferences)) &&
		equalValue(reflect.ValueOf(x.Finalizers), reflect.ValueOf(y.Finalizers))
}

// timeOf reads a metav1.Time value, through its address when it can: boxing copies it.
func timeOf(v reflect.Value) *metav1.Time {
	if v.CanAddr() {
		t, _ := v.Addr().Interface().(*metav1.Time)
		return t
	}
	t, _ := v.Interface().(metav1.Time)
	return &t
}

// equalTime compares times as they encode, to the second.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func equalTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Unix() == b.Unix()
}
