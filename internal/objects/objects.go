// Package objects holds what ssa and batcher both need to know about
// client.Objects beyond their interface.
package objects

import (
	"errors"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNeedsManagedFields is wrapped by the error of a build that cannot decide
// what to apply without the observed object's managedFields (who owns a field
// an Edit removes) when the observation carries none, as one read from a
// cache that strips them does. The build says so in ssa.Built
// (NeedsManagedFields), which is what the Applier acts on: it reads the
// object again and builds once more; the error is the one returned when
// that cannot help.
var ErrNeedsManagedFields = errors.New("the observed object carries no managedFields")

// EmptyLike returns a new, empty object of obj's Go type, ready for a
// response to be decoded into. An unstructured object has no type of its own:
// the new one takes obj's kind.
func EmptyLike(obj client.Object) client.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		out := &unstructured.Unstructured{Object: map[string]any{}}
		out.SetGroupVersionKind(u.GroupVersionKind())
		return out
	}
	out, _ := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	return out
}

// JSONName returns the name a typed object's struct field f is written under
// in JSON, by encoding/json's rules, which the unstructured converter and the
// API server's decoding share: its tag's name, else its Go name. inline is
// true for a field whose own fields are written in its place (an embedded
// struct without a tag name, or a tag with Kubernetes' inline option, as on
// TypeMeta and ObjectMeta); ok is false for a field that is not written at
// all (unexported and not embedded, or tagged "-").
func JSONName(f reflect.StructField) (name string, inline, ok bool) {
	if !f.IsExported() && !f.Anonymous {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	for opts != "" { // without splitting: callers read every field of a type
		var opt string
		if opt, opts, _ = strings.Cut(opts, ","); opt == "inline" {
			return "", true, true
		}
	}
	switch {
	case name != "":
		return name, false, true
	case f.Anonymous:
		return "", true, true
	}
	return f.Name, false, true
}

// WithoutManagedFields returns obj without metadata.managedFields, sharing
// everything else with obj (a shallow copy; obj is not modified). Typing an
// object for structured-merge-diff costs more for its managedFields than for
// the rest of a typical object, and no manager owns them.
func WithoutManagedFields(obj *unstructured.Unstructured) *unstructured.Unstructured {
	md, ok := obj.Object["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	if _, has := md["managedFields"]; !has {
		return obj
	}
	content := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		content[k] = v
	}
	meta := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			meta[k] = v
		}
	}
	content["metadata"] = meta
	return &unstructured.Unstructured{Object: content}
}
