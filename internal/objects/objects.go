// Package objects holds what ssa and batcher both need to know about
// client.Objects beyond their interface.
package objects

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

// StatusList is where a Go type of objects (a typed object or an apply
// configuration) keeps a list in its status.
type StatusList struct {
	Status    int  // the index of the field tagged json:"status"
	StatusPtr bool // the status field is a pointer to its struct
	List      int  // the index of the list in the status struct
}

// FindStatusList finds in typ, a pointer to a struct, the field tagged
// json:"status" (a struct or a pointer to one) and in it the field tagged
// json:name of type list. ok is false unless both are there and the status
// has no inlined or embedded fields, whose content could mix with the list.
// Fields are known by their JSON names, as the API server knows them.
func FindStatusList(typ reflect.Type, name string, list reflect.Type) (StatusList, bool) {
	var sl StatusList
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return sl, false
	}
	var found bool
	if sl.Status, found = StatusField(typ.Elem()); !found {
		return sl, false
	}
	status := typ.Elem().Field(sl.Status).Type
	if status.Kind() == reflect.Pointer {
		sl.StatusPtr, status = true, status.Elem()
	}
	if status.Kind() != reflect.Struct {
		return sl, false
	}
	sl.List = -1
	for i := range status.NumField() {
		f := status.Field(i)
		switch fname, inline, _ := JSONName(f); {
		case inline || f.Anonymous:
			return sl, false
		case fname == name && f.Type == list:
			sl.List = i
		}
	}
	return sl, sl.List >= 0
}

// StatusOf returns the status struct of obj, a pointer to the struct of the
// type sl was found in; ok is false for a nil status pointer.
func (sl StatusList) StatusOf(obj reflect.Value) (reflect.Value, bool) {
	v := obj.Elem().Field(sl.Status)
	if sl.StatusPtr {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

// StatusField returns the index of st's field tagged json:"status".
func StatusField(st reflect.Type) (int, bool) {
	for i := range st.NumField() {
		if name, inline, ok := JSONName(st.Field(i)); ok && !inline && name == "status" {
			return i, true
		}
	}
	return -1, false
}

// Content returns obj's content without managedFields, which no manager owns:
// of its top-level fields in top (apiVersion and kind too, for unstructured
// content), every field when top is nil. It shares what it can with obj, so
// callers must not modify it. A typed object's other fields are zeroed before
// the conversion, so that a manager of status does not pay for the spec; its
// inlined fields are kept.
func Content(obj client.Object, top []string) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if top == nil {
			return WithoutManagedFields(u).Object, nil
		}
		content := make(map[string]any, len(top)+2)
		for _, k := range append([]string{"apiVersion", "kind"}, top...) {
			if v, has := u.Object[k]; has {
				content[k] = v
			}
		}
		return WithoutManagedFields(&unstructured.Unstructured{Object: content}).Object, nil
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%T is not a pointer to a struct", obj)
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	if top != nil {
		st := cp.Elem()
		for i := range st.NumField() {
			name, inline, ok := JSONName(st.Type().Field(i))
			if ok && !inline && !slices.Contains(top, name) {
				st.Field(i).SetZero()
			}
		}
	}
	co, ok := cp.Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a client.Object", obj)
	}
	co.SetManagedFields(nil)
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(co)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	if top != nil {
		for k := range content {
			// A zero struct field still converts (metadata to a null
			// creationTimestamp), and typing it would cost as much as the rest.
			if !slices.Contains(top, k) {
				delete(content, k)
			}
		}
	}
	return content, nil
}
