package fleet

import (
	"fmt"
	"os"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/schemas"
)

// Severity ranks a lint finding.
type Severity string

const (
	// SeverityError marks a schema that breaks several status writers outright:
	// CI should fail on it.
	SeverityError Severity = "error"
	// SeverityWarning marks a schema that is fine with one writer per field but
	// makes writers fight once two of them set the same list or map.
	SeverityWarning Severity = "warning"
)

// Finding is one lint result.
type Finding struct {
	// File is the manifest the CRD came from; empty for CRDs passed as objects.
	File string
	// CRD is the CustomResourceDefinition's name, such as widgets.example.com.
	CRD string
	// Version is the served version whose schema has the problem.
	Version string
	// Path is the field in the schema, such as status.conditions; list items
	// are written as [] (status.items[].ports).
	Path string
	// Severity says whether CI should fail.
	Severity Severity
	// Message explains the problem and the fix.
	Message string
}

// String renders the finding as "file: crd version path: severity: message".
func (f Finding) String() string {
	where := f.CRD + " " + f.Version + " " + f.Path
	if f.File != "" {
		where = f.File + ": " + where
	}
	return fmt.Sprintf("%s: %s: %s", where, f.Severity, f.Message)
}

// HasErrors reports whether any finding is an error, for CI gates.
func HasErrors(findings []Finding) bool {
	return slices.ContainsFunc(findings, func(f Finding) bool { return f.Severity == SeverityError })
}

// LintCRDs checks the status schema of every served version of each CRD, and
// returns the findings in the order of the CRDs given, then versions, then
// paths (sorted). It never fails: a CRD
// or version without a schema has nothing to check.
//
// status.conditions that is not x-kubernetes-list-type: map with
// x-kubernetes-list-map-keys: [type] is an error, because the whole list then
// has one owner and every second writer's apply conflicts. Other atomic lists
// (no list type, or atomic) and atomic maps or structs anywhere under status
// are warnings, because two writers setting them would conflict in the same
// way. Fields inside an atomic list or map are not reported again.
//
// A finding on a version that is served but is not the storage version, in a
// CRD whose storage version is served, is a warning whatever its kind: status
// writers can (and should) write through the storage version, and a CRD often
// keeps serving a deprecated version its owner will not fix, as Cluster API's
// Machine serves v1beta1 with atomic conditions beside v1beta2. Its message
// says which version to write through.
func LintCRDs(crds ...*apiextensionsv1.CustomResourceDefinition) []Finding {
	return LintCRDsWith(LintOptions{}, crds...)
}

// LintOptions narrow LintCRDsWith.
type LintOptions struct {
	// Versions, when not empty, limits the check to the served versions of
	// these names; the other versions are not checked at all.
	Versions []string
}

// LintCRDsWith is LintCRDs with options.
func LintCRDsWith(opts LintOptions, crds ...*apiextensionsv1.CustomResourceDefinition) []Finding {
	var out []Finding
	for _, crd := range crds {
		if crd == nil {
			continue
		}
		storage := servedStorageVersion(crd)
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			if len(opts.Versions) > 0 && !slices.Contains(opts.Versions, v.Name) {
				continue
			}
			status, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
			if !ok {
				continue
			}
			l := &schemaLinter{crd: crd.Name, version: v.Name}
			l.walk("status", &status)
			if storage != "" && v.Name != storage {
				for i := range l.findings {
					l.findings[i].demote(storage)
				}
			}
			out = append(out, l.findings...)
		}
	}
	return out
}

// ServedVersions returns the names of the versions of crds that are served,
// once each, in order; lint callers check the versions they were asked for
// against it.
func ServedVersions(crds ...*apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, crd := range crds {
		if crd == nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && !slices.Contains(out, v.Name) {
				out = append(out, v.Name)
			}
		}
	}
	return out
}

// servedStorageVersion returns the name of crd's storage version when it is
// served, else "".
func servedStorageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage && v.Served {
			return v.Name
		}
	}
	return ""
}

// NotOwnedAdvice is where the documentation explains what to do with
// findings in a CRD you cannot change; lint messages of served versions
// other than the storage version end with it.
const NotOwnedAdvice = "docs/crds-you-do-not-own.md#linting-a-crd-you-do-not-own"

// demote turns f, found on a served version that is not the storage version,
// into a warning that says to write status through storage.
func (f *Finding) demote(storage string) {
	f.Severity = SeverityWarning
	f.Message = fmt.Sprintf("%s. %s is served but is not the storage version (%s): a warning as long as every status "+
		"writer writes through %s (the apiVersion of the objects and apply configurations it sends). If you own the "+
		"CRD, fix %s too or stop serving it; if you do not, lint the versions you write (--version %s), see %s",
		f.Message, f.Version, storage, storage, f.Version, storage, NotOwnedAdvice)
}

// LintFiles reads CRD manifests, each possibly holding several YAML (or JSON)
// documents, and lints every CustomResourceDefinition in them; other kinds
// are skipped. Findings carry the file name. An unreadable file or a
// document that does not parse is an error naming the file.
func LintFiles(paths ...string) ([]Finding, error) {
	var out []Finding
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("linting CRDs: %w", err)
		}
		findings, err := LintManifest(path, data)
		if err != nil {
			return nil, err
		}
		out = append(out, findings...)
	}
	return out, nil
}

// LintManifest lints the CRDs in data, a multi-document YAML (or JSON)
// manifest; name labels the findings and errors, and need not be a path on
// disk (embedded manifests pass their file name).
func LintManifest(name string, data []byte) ([]Finding, error) {
	crds, err := schemas.DecodeCRDs(name, data)
	if err != nil {
		return nil, err
	}
	findings := LintCRDs(crds...)
	for i := range findings {
		findings[i].File = name
	}
	return findings, nil
}

// schemaLinter collects the findings of one CRD version's status schema.
type schemaLinter struct {
	crd, version string
	findings     []Finding
}

// report records a finding at path.
func (l *schemaLinter) report(path string, sev Severity, msg string) {
	l.findings = append(l.findings, Finding{CRD: l.crd, Version: l.version, Path: path, Severity: sev, Message: msg})
}

// walk checks the schema s found at path and descends into its children,
// in sorted property order so that findings are stable.
func (l *schemaLinter) walk(path string, s *apiextensionsv1.JSONSchemaProps) {
	if path == "status.conditions" && l.checkConditions(path, s) {
		return
	}
	switch {
	case s.Type == "array" || s.Items != nil:
		lt := ""
		if s.XListType != nil {
			lt = *s.XListType
		}
		if lt == "" || lt == "atomic" {
			how := "x-kubernetes-list-type is unset, so the list is atomic"
			if lt == "atomic" {
				how = "x-kubernetes-list-type is atomic"
			}
			l.report(path, SeverityWarning, fmt.Sprintf(
				"%s: the whole list has one owner, and a second status writer that sets it conflicts with the first; "+
					"if several writers contribute items, make it a map-list keyed by a unique field "+
					"(kubebuilder markers +listType=map and +listMapKey=<field>) or a set of scalars (+listType=set)", how))
			return
		}
		if s.Items != nil && s.Items.Schema != nil {
			l.walk(path+"[]", s.Items.Schema)
		}
	default:
		if s.XMapType != nil && *s.XMapType == "atomic" {
			l.report(path, SeverityWarning,
				"x-kubernetes-map-type is atomic: the whole object has one owner, and a second status writer that sets any "+
					"field of it conflicts with the first; if several writers contribute fields, drop the marker or use "+
					"+mapType=granular")
			return
		}
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			child := s.Properties[name]
			l.walk(path+"."+name, &child)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			l.walk(path+".*", s.AdditionalProperties.Schema)
		}
	}
}

// checkConditions reports status.conditions unless it is a map-list keyed by
// type alone, and says whether it reported (then its items are not walked).
func (l *schemaLinter) checkConditions(path string, s *apiextensionsv1.JSONSchemaProps) bool {
	lt := ""
	if s.XListType != nil {
		lt = *s.XListType
	}
	if lt == "map" && slices.Equal(s.XListMapKeys, []string{ownership.ConditionKey}) {
		return false
	}
	var what string
	switch lt {
	case "":
		what = "x-kubernetes-list-type is unset, so the list is atomic"
	case "map":
		what = fmt.Sprintf("x-kubernetes-list-map-keys is %v, not [type]", s.XListMapKeys)
	default:
		what = fmt.Sprintf("x-kubernetes-list-type is %s", lt)
	}
	l.report(path, SeverityError, what+
		": the conditions list has one owner as a whole, so every second status writer's apply conflicts "+
		"and a writer cannot drop its own condition; mark the field with the kubebuilder markers "+
		"+listType=map and +listMapKey=type (x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [type])")
	return true
}
