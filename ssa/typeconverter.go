package ssa

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// TypeConverters combines several type converters into one that asks each in
// turn, so that built-in kinds (client-go's applyconfigurations.NewTypeConverter)
// and custom resources (a generated applyconfiguration package's
// NewTypeConverter, or one built from CRD schemas) are served together.
func TypeConverters(converters ...managedfields.TypeConverter) managedfields.TypeConverter {
	return typeConverters(converters)
}

type typeConverters []managedfields.TypeConverter

func (tcs typeConverters) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (tv *typed.TypedValue, err error) {
	var errs []error
	for _, tc := range tcs {
		if tv, err = tc.ObjectToTyped(obj, opts...); err == nil {
			return tv, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no schema for %s: %w", obj.GetObjectKind().GroupVersionKind(), errors.Join(errs...))
}

func (tcs typeConverters) TypedToObject(tv *typed.TypedValue) (runtime.Object, error) {
	if len(tcs) == 0 {
		return nil, errors.New("no type converter")
	}
	return tcs[0].TypedToObject(tv)
}

// hasSchema reports whether tc has a schema for gvk. It converts an object
// holding only apiVersion and kind, which asks the same question as
// converting a whole object at a fraction of the cost, and works with any
// TypeConverter (the interface has no lookup by kind).
func hasSchema(tc managedfields.TypeConverter, gvk schema.GroupVersionKind) bool {
	probe := &unstructured.Unstructured{Object: map[string]any{}}
	probe.SetGroupVersionKind(gvk)
	_, err := tc.ObjectToTyped(probe)
	return err == nil
}
