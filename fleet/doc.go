// Package fleet is the tooling for moving a fleet of objects from whole-array
// JSON merge patches (or Update) to one server-side-apply field manager per
// status writer. It builds on package ownership, which reads one object's
// managedFields, and is what the statusapply CLI runs.
//
// It has four jobs:
//
//   - Audit (Audit, ListObjects): reads many objects' managedFields page by
//     page and reports which managers still write status the legacy way,
//     which fields they share, and a verdict with the migration to run.
//   - CRD lint (LintCRDs, LintFiles): status.conditions that is not a map-list
//     keyed by type is an error, because every second writer conflicts on the
//     whole list; other atomic lists and maps under status are warnings.
//   - Plans (Plan, CheckPlan): which legacy manager's fields, or which
//     condition types, go to which apply manager, checked against the objects
//     before anything is written.
//   - Migration (Migrator, MigrateAll): moves status ownership from legacy
//     writers to apply managers, whole managers (through client-go's
//     csaupgrade) or per condition type, guarded by the object's
//     resourceVersion.
package fleet
