// Package batcher accumulates the status (and spec) contributions of one
// reconcile and sends them at Flush as one server-side apply per object, field
// manager and subresource.
//
// A reconcile is often made of many small functions that each set a condition
// or a field. Each one contributes a typed mutator with [Status] or [Object];
// mutators of the same entry (object + subresource + field manager) are run in
// queue order at Flush on one apply configuration, each seeing the previous
// one's edits, and the entry is applied once by the [ssa.Applier], without
// forcing ownership. An entry whose result changes nothing sends nothing.
//
// # The caller's contract
//
//   - A Batch belongs to one reconcile. Create it with [New] at the start and
//     flush it at every exit, error paths included: `defer b.FlushInto(ctx,
//     &err)` with a named error result does both in one line.
//   - The first object queued for a key is the batch's observation of it; later
//     contributions with other pointers to the same object join the same entry.
//     After each apply the API server's response replaces the observation, so a
//     second Flush in the same reconcile builds on what the first one wrote,
//     without a GET. Mutators get the observation as a fresh typed copy and must
//     not keep it. The copy of a typed object shares its managedFields entries'
//     fieldsV1 bytes and timestamps with the object queued: replace those,
//     never modify them in place (nothing in Kubernetes does).
//   - Mutators run at Flush, not when queued, and again on a guarded retry:
//     they must be deterministic functions of the observed object and must not
//     have side effects.
//   - Flush is best effort across objects. A failed entry stays queued for the
//     next Flush, a successful one is cleared; [Batch.Pending] lists what is
//     queued. An object's main-resource entries are sent before its status
//     entries, and a main-resource failure holds the status entries back.
package batcher
