package ssa

import (
	"fmt"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/statusapply/statusapply/ownership"
)

// Subresource names the part of an object an apply writes.
type Subresource string

const (
	// MainResource writes the object itself (metadata and spec).
	MainResource Subresource = ""
	// StatusSubresource writes the status subresource.
	StatusSubresource Subresource = ownership.StatusSubresource
)

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
func (t Target) Object() ownership.ObjectRef {
	return ownership.ObjectRef{GVK: t.GVK, Namespace: t.Namespace, Name: t.Name}
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
	if err := ValidateFieldManager(t.Manager); err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	return nil
}

// ValidateFieldManager checks a field manager name before any request with the
// API server's own rule (length and printable characters; called, not copied,
// so the two stay in step), and refuses the empty name, which an apply needs.
// Its errors wrap ErrInvalidInput.
func ValidateFieldManager(manager string) error {
	if manager == "" {
		return invalidf("empty field manager")
	}
	// Short printable ASCII, which the API server's rule accepts, is
	// accepted without it: every Apply checks its manager.
	plain := len(manager) <= metav1validation.FieldManagerMaxLength
	for i := 0; plain && i < len(manager); i++ {
		plain = manager[i] >= ' ' && manager[i] <= '~'
	}
	if plain {
		return nil
	}
	if errs := metav1validation.ValidateFieldManager(manager, field.NewPath("fieldManager")); len(errs) > 0 {
		return fmt.Errorf("%w: field manager %.40q: %w", ErrInvalidInput, manager, errs.ToAggregate())
	}
	return nil
}

// String names the target the way errors and logs show it, for example
// `status of Widget ns/w1 as "readiness"`.
func (t Target) String() string {
	part := "status of "
	if t.Subresource == MainResource {
		part = ""
	}
	return fmt.Sprintf("%s%s as %q", part, t.Object(), t.Manager)
}
