// Package ssa applies one field manager's intent for one object with
// server-side apply, so that several status writers share an object without
// erasing each other's fields.
//
// An [Applier] is long-lived, one per controller process. [Applier.Apply]
// writes one [Target] (object, subresource, field manager):
//
//  1. The intent starts from what the manager owns on the observed object
//     ([Incremental], the default), or from nothing ([Declarative]).
//  2. A [Build] edits it, as unstructured content or a typed apply configuration.
//  3. If it equals what the manager owns, nothing is sent.
//  4. Otherwise one apply is sent without ForceOwnership: a field another
//     manager owns is never taken silently; the API server answers 409.
//
// docs/design.md follows an apply step by step.
//
// # The caller's contract
//
// The observed object is never modified. Incremental applies need its
// managedFields: an object without them is read again, since "owns nothing"
// would release every field the manager owns.
//
// Omission means release: a field the manager applied before and leaves out is
// given up, and deleted unless another manager owns it too. A removal that
// must take effect is declared ([RemovingConditions]) and refused with
// [ErrRemovesForeignField] when another manager owns what it removes.
//
// Applies carry the observed uid, so a deleted object is not recreated, but the
// API server ignores a status apply's uid: an unguarded one can write to an
// object re-created under the same name. Guard an apply ([Guarded]) when that
// matters, or when what it writes was decided from observed state: on a stale
// resourceVersion Apply reads the object again, rebuilds and retries.
package ssa
