package ssa

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Subresource names the part of an object an apply writes.
type Subresource string

const (
	// MainResource writes the object itself (metadata and spec).
	MainResource Subresource = ""
	// StatusSubresource writes the status subresource.
	StatusSubresource Subresource = "status"
)

// MaxFieldManagerLength is the longest field manager name the API server accepts.
const MaxFieldManagerLength = 128

// Target is what one apply writes: one subresource of one object, as one field
// manager. Applies to the same Target are the unit statusapply accumulates and
// sends once.
type Target struct {
	// GVK is the object's group, version and kind.
	GVK schema.GroupVersionKind
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name is the object's name.
	Name string
	// Subresource is MainResource or StatusSubresource.
	Subresource Subresource
	// Manager is the field manager that owns what the apply writes.
	Manager string
}

// Object identifies the object the Target writes, whatever the subresource or manager.
func (t Target) Object() ObjectID {
	return ObjectID{GVK: t.GVK, NamespacedName: types.NamespacedName{Namespace: t.Namespace, Name: t.Name}}
}

// Validate reports, before any request, what the API server would reject or
// what would apply to the wrong place. Its errors wrap ErrInvalidInput.
func (t Target) Validate() error {
	switch {
	case t.GVK.Kind == "" || t.GVK.Version == "":
		return invalidf("%s: no kind or version", t)
	case t.Name == "":
		return invalidf("%s: the object has no name", t)
	case t.Subresource != MainResource && t.Subresource != StatusSubresource:
		return invalidf("%s: unsupported subresource %q", t, string(t.Subresource))
	}
	return ValidateFieldManager(t.Manager)
}

// ValidateFieldManager checks a field manager name the way the API server
// would, before any request. Its errors wrap ErrInvalidInput.
func ValidateFieldManager(manager string) error {
	switch {
	case manager == "":
		return invalidf("empty field manager")
	case len(manager) > MaxFieldManagerLength:
		return invalidf("field manager %.20q... is %d characters long, more than %d", manager, len(manager), MaxFieldManagerLength)
	}
	return nil
}

// String names the target the way errors and logs show it, for example
// `status of Widget.demo.statusapply.io ns/w1 as "readiness"`.
func (t Target) String() string {
	part := "status of "
	if t.Subresource == MainResource {
		part = ""
	}
	return fmt.Sprintf("%s%s as %q", part, t.Object(), t.Manager)
}

// ObjectID identifies one object: kind and namespaced name.
type ObjectID struct {
	GVK schema.GroupVersionKind
	types.NamespacedName
}

// String prints the object as Kind.group namespace/name.
func (o ObjectID) String() string {
	kind := o.GVK.Kind
	if o.GVK.Group != "" {
		kind += "." + o.GVK.Group
	}
	if o.Namespace == "" {
		return kind + " " + o.Name
	}
	return kind + " " + o.Namespace + "/" + o.Name
}
