// Package schemas gives an ssa.Applier the schemas of custom resources it has
// no Go types for, such as a CRD another project owns, so that their
// conditions merge per type, what each field manager owns can be extracted
// from managedFields, and edits of unstructured objects can be diffed.
//
// The sources implement managedfields.TypeConverter and plug into
// ssa.WithTypeConverter; they combine with the Applier's other converters
// (see ssa.TypeConverters), which are asked in the order they were added:
//
//   - [Cluster] reads the API server's OpenAPI v3 document of a group version
//     the first time one of its kinds is converted, and keeps it. It checks the
//     document's hash when the document is older than the refresh interval
//     (10 s by default, which bounds how long a changed CRD's schema is stale)
//     and at once when a kind is missing or an object does not fit the schema,
//     and reads the document again when it changed: a CRD updated while the
//     controller runs is followed without a restart. A group version that was
//     just installed may take a moment to appear; a miss waits for it (2 s by
//     default) before it is reported.
//   - crdschema.CRDs, in package schemas/crdschema, builds the schemas from
//     CustomResourceDefinition objects or their YAML manifests
//     (apiextensions.k8s.io/v1), offline, the way the API server builds them
//     for server-side apply. It is a package apart because that builder links
//     much of the API server (k8s.io/apiserver, CEL, gRPC, OpenTelemetry):
//     importing this package for Cluster does not.
//
// A kind neither has is a miss: the error wraps ssa.ErrNoSchema, is a
// *MissError naming the kind, where the converter looked and which option
// provides the schema.
//
// Both sources are safe for concurrent use.
package schemas
