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

// ErrRetriesExhausted reports a resourceVersion-guarded write (a migration by
// package fleet, a guarded apply in package ssa) whose object kept changing between the
// read and the write for every allowed attempt. Nothing was lost: the API
// server rejected the last write; try again later.
var ErrRetriesExhausted = errors.New("retries exhausted: the object kept changing")

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
