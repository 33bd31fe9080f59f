// Package ownership reads who owns what in an object's status from its
// managedFields: the basics that applying, batching, conflict handling and
// the fleet tooling all build on.
//
//   - Inspect reads an object's managedFields as
//     per-manager records (Entry) with structured-merge-diff field sets,
//     answering who owns a path, which condition types each manager owns,
//     which status fields are shared and which managers are legacy writers.
//     An object without any managedFields (for example one read from a cache
//     that strips them) is reported with ErrNoManagedFields, never as "owns
//     nothing".
//   - AppliedFields reads one manager's Apply entry, as every apply does.
//   - StatusPath, ConditionsPath and ConditionPath name the parts of status
//     a field set holds.
//   - HandBack moves fields from before-first-apply to a manager's Apply
//     entry, and ManagedFieldsPatch writes managedFields guarded by
//     resourceVersion: what an Applier recovering from lost managedFields and
//     a fleet migration both do.
//
// Auditing, linting and migrating many objects are in package fleet, which
// sits above this one.
package ownership
