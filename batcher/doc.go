// Package batcher accumulates the status (and spec) contributions of one
// reconcile and sends them at Flush as one server-side apply per object, field
// manager and subresource.
//
// Each part of a reconcile contributes a typed mutator with [Status] or
// [Object]. At Flush an entry's mutators run in queue order on one apply
// configuration, each seeing the previous one's edits, and the [ssa.Applier]
// applies it once, without forcing ownership, unless it changes nothing.
//
// # The caller's contract
//
//   - A Batch belongs to one reconcile: create it with [New] and flush it at
//     every exit, error paths included (`defer b.FlushInto(ctx, &err)`).
//   - The first object queued for a key is the batch's observation of it,
//     whatever pointer later contributions use; each apply's response replaces
//     it, so a second Flush needs no GET. Mutators get a fresh typed copy and
//     must not keep it; its managedFields bytes and timestamps are shared:
//     replace them, never modify them.
//   - Mutators run at Flush, not when queued, and again on a guarded retry:
//     they must be deterministic in the observed object, without side effects.
//   - Flush is best effort across objects: a failed entry stays queued
//     ([Batch.Pending]), a successful one is cleared. Main-resource entries go
//     first, and their failure holds the object's status entries back.
package batcher
