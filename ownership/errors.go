package ownership

import (
	"errors"
	"fmt"
)

// ErrNoManagedFields reports an object that carries no managedFields at all.
// That is not the same as a manager owning nothing: objects read from a cache
// with managedFields stripped look like this, and treating them as "owns
// nothing" would make the next apply built from them release every field.
// Callers test for it with errors.Is and re-read the object from the API
// server (or, for migration, let the server attribute its fields first).
var ErrNoManagedFields = errors.New("object has no managedFields")

// ErrBadManagedFields reports a managedFields entry that cannot be read: a
// fieldsType other than FieldsV1, a field set that does not decode, or an
// operation other than Apply and Update.
var ErrBadManagedFields = errors.New("unreadable managedFields entry")

// ErrRetriesExhausted reports a resourceVersion-guarded write (a migration
// here, a guarded apply in package ssa) whose object kept changing between the
// read and the write for every allowed attempt. Nothing was lost: the API
// server rejected the last write; try again later.
var ErrRetriesExhausted = errors.New("retries exhausted: the object kept changing")

// ErrInvalidPlan reports a migration Plan that cannot be carried out, such as
// an empty manager name or a target that is itself a legacy manager.
var ErrInvalidPlan = errors.New("invalid migration plan")

// ErrOrphanedFields reports a migration that would leave fields on the object
// that no manager owns, such as fields a legacy manager holds in an API
// version other than the one its apply successor uses. Rewrite refuses such
// a result: an unowned condition is deleted as a side effect the next time
// another manager removes its own last condition.
var ErrOrphanedFields = errors.New("the migration would leave fields without an owner")

// ErrPlanMismatch reports a Plan that names managers or condition types the
// selected objects do not have, or hands fields to a legacy writer's name
// (see CheckPlan). It wraps ErrInvalidPlan.
var ErrPlanMismatch = fmt.Errorf("%w: it does not match the objects", ErrInvalidPlan)

// ErrAPIVersionMismatch reports legacy fields to be merged into an apply
// manager's entry recorded in another API version: field sets of two
// versions cannot simply be unioned. Apply once in the legacy version first.
var ErrAPIVersionMismatch = errors.New("apply entry in another API version")

// ObjectError ties an error to the object it concerns. Use errors.As to get
// at the object and errors.Is to test the cause (ErrNoManagedFields,
// ErrRetriesExhausted, or an API status error such as a 409 conflict).
type ObjectError struct {
	// Object names the object the operation was about.
	Object ObjectRef
	// Op says what was being done, such as "inspecting" or "migrating".
	Op string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *ObjectError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.Object, e.Err)
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *ObjectError) Unwrap() error { return e.Err }
