// Package conflicts classifies and resolves the errors a server-side apply of
// status can meet when an object has several field managers.
//
// Every status writer applies as its own field manager and never forces
// ownership, so a 409 means one of two different things: the object moved on
// under an optimistic-lock apply (a stale resourceVersion; re-read and retry),
// or another manager owns a field this writer tried to change (a field-manager
// conflict; retrying the same apply can never succeed). Classify tells them
// apart; Parse and FromError turn a field-manager conflict into one Conflict per
// contested field, with the owner and the condition type; Predict computes the
// same records client-side from an observed object's managedFields before
// anything is sent.
//
// What to do about a field-manager conflict is a per-writer Policy: Fail (the
// default) returns the typed *Error; Yield re-sends the apply without the
// contested fields (RemoveFields); TakeDeclared forces the apply only when every
// contested field is one the writer declared as exclusively its own. Decide is
// pure: it says what to do, the caller does it; an ssa.Applier given an
// EventRecorder reports the outcome as an Event on the object.
//
// Nothing in this package talks to the API server or keeps state.
package conflicts
