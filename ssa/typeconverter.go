package ssa

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/internal/kindschema"
)

// ErrNoSchema is wrapped when no type converter has the schema of an
// object's kind. The error names the kind and the options that provide one.
// Type converters may wrap it in their own errors for a kind they do not
// serve (the schemas package's do), so that errors.Is finds it either way.
var ErrNoSchema = errors.New("no schema")

const noSchemaHint = "give the Applier its schema with WithTypeConverter: schemas.FromCluster(cfg) reads it " +
	"from the API server's OpenAPI, crdschema.FromCRDFiles(paths...) from the CRD's manifest, and a generated " +
	"applyconfiguration package's NewTypeConverter(scheme) serves your own Go types"

// TypeConverters combines type converters into one that asks each in turn, so
// that built-in kinds and custom resources are served together. The first that
// has the object's kind decides: an object that does not fit its schema gets
// its error, prefixed with the kind. When none has the kind, the error wraps
// ErrNoSchema, names the kind and says how to provide it.
func TypeConverters(converters ...managedfields.TypeConverter) managedfields.TypeConverter {
	return typeConverters(converters)
}

type typeConverters []managedfields.TypeConverter

func (tcs typeConverters) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (tv *typed.TypedValue, err error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	var misses []error
	for _, tc := range tcs {
		if tv, err = tc.ObjectToTyped(obj, opts...); err == nil {
			return tv, nil
		}
		if !errors.Is(err, ErrNoSchema) && kindschema.Has(tc, gvk) {
			// The converter knows the kind: the object does not fit its schema.
			return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
		}
		misses = append(misses, err)
	}
	return nil, fmt.Errorf("%w for kind %s (%s): %s: %w", ErrNoSchema, gvk.Kind, gvk.GroupVersion(), noSchemaHint, errors.Join(misses...))
}

// SchemaVersion sums the converters' SchemaVersions, so that it changes with
// any schema they serve; converters without one never change.
func (tcs typeConverters) SchemaVersion() uint64 {
	var v uint64
	for _, tc := range tcs {
		if versioned, ok := tc.(interface{ SchemaVersion() uint64 }); ok {
			v += versioned.SchemaVersion()
		}
	}
	return v
}

func (tcs typeConverters) TypedToObject(tv *typed.TypedValue) (runtime.Object, error) {
	if len(tcs) == 0 {
		return nil, errors.New("no type converter")
	}
	return tcs[0].TypedToObject(tv)
}
