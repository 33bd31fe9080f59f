// Package ssa applies one field manager's intent for one object with
// server-side apply, the way several status writers can share an object
// without erasing each other's fields.
//
// An [Applier] is long-lived: one per controller process, shared by every
// reconcile. It knows the schemas of the kinds it writes (a managedfields
// TypeConverter), serialises applies to the same object sent from this process,
// and counts what it does. [Applier.Apply] writes one [Target] (object,
// subresource, field manager):
//
//  1. The intent starts from what the manager already owns on the observed
//     object ([Incremental], the default), or from nothing ([Declarative]).
//     What a manager owns is read from managedFields and remembered, per
//     object uid, manager and subresource, for as long as it provably still
//     holds (see [WithOwnedCacheSize]).
//  2. A [Build] edits the intent: in unstructured content, or in the apply
//     configuration type its mutators edit, which is then never converted.
//  3. If the intent equals what the manager owns, nothing is sent.
//  4. Otherwise one apply is sent with the manager's name as field owner and
//     ForceOwnership off, so a field another manager owns is never taken
//     silently: the API server answers 409 and the caller decides.
//
// # The caller's contract
//
// The observed object is what the writer decided from. It is used to extract
// what the manager owns, as the object handed to the build, and, for guarded
// applies, for its resourceVersion. It is never modified. It must carry
// managedFields for incremental applies: an object without any (for instance one
// read from a cache that strips them) is read again from the API server, because
// treating it as "owns nothing" would release every field the manager owns.
//
// Applies carry the observed object's uid, so a main-resource apply never
// recreates an object that was deleted after it was observed, and a status apply
// to a deleted object fails with NotFound. The API server ignores the uid of a
// status apply, though: if the object was deleted and created again under the
// same name in between, an unguarded status apply writes to the new object.
// Guard the entry when that matters; the resourceVersion catches it.
//
// Omission means release. A field the manager applied before and leaves out of
// its next apply is given up, and deleted unless another manager owns it too. In
// incremental mode only what the build removes is left out; in declarative
// mode everything not built again is.
//
// Guard an apply ([Guarded]) when what it writes was decided from observed
// state, such as creating a plan only when none exists. The apply then carries
// the observed resourceVersion; if the object changed meanwhile the API server
// answers 409, and Apply reads the object again, rebuilds the intent against it
// and retries, a bounded number of times. Unguarded applies need no read at all.
package ssa
