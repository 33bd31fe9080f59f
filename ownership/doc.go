// Package ownership reads, checks and rewrites who owns what in an object's
// status, for controllers moving from whole-array JSON merge patches (or
// Update) to one server-side-apply field manager per status writer.
//
// It has three jobs:
//
//   - Inspection (Inspect): an object's managedFields as per-manager records
//     with structured-merge-diff field sets, answering who owns a path, which
//     condition types each manager owns, which status fields are shared and
//     which managers are legacy writers. An object without any managedFields
//     (for example one read from a cache that strips them) is reported with
//     ErrNoManagedFields, never as "owns nothing".
//   - CRD lint (LintCRDs, LintFiles): status.conditions that is not a map-list
//     keyed by type is an error, because every second writer conflicts on the
//     whole list; other atomic lists and maps under status are warnings.
//   - Migration (Plan, Migrator): moves status ownership from legacy writers to
//     apply managers, whole managers (through client-go's csaupgrade) or per
//     condition type, guarded by the object's resourceVersion.
package ownership
