package conflicts

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/ownership"
)

// Error is a field-manager conflict on one object for one applying manager:
// which fields it could not change and who owns them.
//
// Unwrap returns the API server's error, so apierrors.IsConflict and
// errors.As(err, *apierrors.StatusError) keep working through it; find the
// *Error itself in a wrapped or joined error with errors.As.
type Error struct {
	// Object is the object the apply was for.
	Object ownership.ObjectRef
	// Manager is the field manager whose apply was refused.
	Manager string
	// Conflicts are the contested fields. It may be empty when the server's
	// text could not be parsed; Error then shows the server's message.
	Conflicts []Conflict
	// Err is the API server's error. It must not be nil.
	Err error
}

// Error says who could not change what on which object, and who owns it:
//
//	manager net cannot change .status.conditions[type="Ready"].status of Widget ns/w1: owned by legacy (Update)
//
// With several conflicts, one line per field follows the first.
func (e *Error) Error() string {
	switch len(e.Conflicts) {
	case 0:
		return fmt.Sprintf("manager %s cannot apply to %s: %v", e.Manager, e.Object, e.Err)
	case 1:
		c := e.Conflicts[0]
		return fmt.Sprintf("manager %s cannot change %s of %s: owned by %s", e.Manager, c.Path, e.Object, c.Owner())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "manager %s cannot change %d fields of %s:", e.Manager, len(e.Conflicts), e.Object)
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "\n- %s: owned by %s", c.Path, c.Owner())
	}
	return b.String()
}

// Unwrap returns the API server's error.
func (e *Error) Unwrap() error { return e.Err }

// FromError turns the error of an apply by manager to obj into an *Error when
// it is a field-manager conflict, and reports false otherwise (a nil error, a
// stale resourceVersion, or anything else: return those unchanged).
//
// err may be wrapped or joined. When it already holds an *Error, that one is
// returned. When the server's text cannot be parsed, the *Error has no
// Conflicts and its message carries the server's.
func FromError(err error, manager string, obj ownership.ObjectRef) (*Error, bool) {
	if err == nil {
		return nil, false
	}
	var existing *Error
	if errors.As(err, &existing) {
		return existing, true
	}
	s, ok := findStatus(err, func(s metav1.Status) bool { return classOf(s) == ClassFieldManagerConflict })
	if !ok {
		return nil, false
	}
	conflicts, perr := ParseStatus(s)
	if perr != nil {
		conflicts = nil
	}
	return &Error{Object: obj, Manager: manager, Conflicts: conflicts, Err: err}, true
}
