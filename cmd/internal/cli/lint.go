package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/schemas"
)

// stdinName labels findings of a manifest read from standard input.
const stdinName = "<stdin>"

const lintLong = `Check CustomResourceDefinition schemas for status fields that make several
status writers conflict.

status.conditions that is not a map-list keyed by type
(x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [type]) is an
error: the whole list then has one owner, and every second writer's apply
conflicts. Other atomic lists and maps under status are warnings.

A served version that is not the storage version (a deprecated version a CRD
keeps serving, such as Cluster API Machine's v1beta1) only has warnings, when
the storage version is served: status writers write through the storage
version. --version VERSION (repeatable) checks only the named versions, for a
CRD you do not own and cannot fix.

FILE arguments are manifests (multi-document YAML or JSON; "-" reads standard
input); documents of other kinds are skipped, and List documents (kubectl get
crd -o yaml) are unpacked. Without FILE, or with --cluster-crds, the
cluster's CRDs are checked.

Exit codes: 0 no error finding (warnings alone pass), 1 at least one error
finding, or no CRD checked at all (unless --allow-empty), so it can gate CI;
2 a file that cannot be read or decoded (what the files before it held is
still printed), a cluster that cannot be reached, a --version that no CRD
checked serves, or bad flags.

-o json and -o yaml print a LintFindingList (cli.statusapply.io/v1alpha1);
-o name prints the CRDs that have findings. The summary line (CRDs checked,
errors, warnings) goes to stderr, so that stdout holds only the findings.`

const lintExample = `  statusapply lint config/crd/*.yaml
  kustomize build config/default | statusapply lint -
  statusapply lint --context prod -o json
  statusapply lint machines.yaml --version v1beta2
  statusapply lint config/crd/*.yaml -o jsonpath='{.summary.errors}'`

// lintOutput is the document of the lint command.
type lintOutput struct {
	typeMeta `json:",inline"`
	Summary  lintSummary   `json:"summary"`
	Items    []findingView `json:"items"`

	// served collects the served versions of the CRDs checked, for the
	// check of --version.
	served []string
}

// lintSummary counts what lint checked and found.
type lintSummary struct {
	// CRDs counts the CustomResourceDefinitions checked.
	CRDs     int `json:"crds"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
}

// findingView is an fleet.Finding with JSON names; File is empty for
// CRDs read from the cluster.
type findingView struct {
	typeMeta `json:",inline"`
	File     string `json:"file,omitempty"`
	CRD      string `json:"crd"`
	Version  string `json:"version"`
	Path     string `json:"path"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// newLintCommand returns the lint command.
func newLintCommand(cluster *clusterAccess) *cobra.Command {
	var (
		fromCluster bool
		allowEmpty  bool
		versions    []string
	)
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:     "lint [FILE...]",
		Short:   "Check CRD status schemas for lists and maps that make status writers conflict",
		Long:    lintLong,
		Example: lintExample,
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"yaml", "yml", "json"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, files []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if slices.Contains(versions, "") {
				return withExitCode(exitUsage, errors.New("--version: empty version name"))
			}
			opts := fleet.LintOptions{Versions: versions}
			result := newLintOutput()
			// A file that cannot be read stops the run; what the files
			// before it held is still printed, then the error.
			var readErr error
			for _, file := range files {
				if readErr = lintFile(cmd.InOrStdin(), cmd.ErrOrStderr(), file, opts, &result); readErr != nil {
					break
				}
			}
			if readErr == nil {
				if fromCluster || len(files) == 0 {
					if err := lintCluster(cmd.Context(), cluster, opts, &result); err != nil {
						return err
					}
				}
				if err := result.checkVersions(versions); err != nil {
					return withExitCode(exitUsage, err)
				}
			}
			if err := writeLintOutput(cmd.OutOrStdout(), cmd.ErrOrStderr(), out, result); err != nil {
				return err
			}
			switch {
			case readErr != nil:
				return readErr
			case result.Summary.Errors > 0:
				return withExitCode(exitFindings,
					fmt.Errorf("lint found %s in CRD status schemas", plural(result.Summary.Errors, "error", "errors")))
			case result.Summary.CRDs == 0 && !allowEmpty:
				return withExitCode(exitFindings, errors.New(emptyLintMessage(files, fromCluster)))
			}
			return nil
		},
	}
	out.addFlags(cmd)
	cmd.Flags().BoolVar(&fromCluster, "cluster-crds", false,
		"also check the cluster's CRDs when FILE arguments are given (--cluster is kubectl's kubeconfig cluster flag)")
	addAllowEmptyFlag(cmd, &allowEmpty, "no CRD is checked (no file holds one, or the cluster has none)")
	cmd.Flags().StringArrayVar(&versions, "version", nil,
		"check only this served version of the CRDs (repeatable); a version no CRD checked serves is an error")
	return cmd
}

// lintFile lints the CRDs in one manifest ("-" for stdin) into result. A
// manifest without any CRD is worth a warning: a CI job pointed at the wrong
// file would otherwise pass silently.
func lintFile(stdin io.Reader, stderr io.Writer, file string, opts fleet.LintOptions, result *lintOutput) error {
	name := file
	var (
		data []byte
		err  error
	)
	if file == "-" {
		name = stdinName
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	crds, err := schemas.DecodeCRDs(name, data)
	if err != nil {
		return err
	}
	if len(crds) == 0 {
		fmt.Fprintf(stderr, "warning: %s holds no CustomResourceDefinition\n", name)
	}
	findings := fleet.LintCRDsWith(opts, crds...)
	for i := range findings {
		findings[i].File = name
	}
	result.add(len(crds), findings)
	result.addServed(crds)
	return nil
}

// lintCluster lints every CRD the API server has into result.
func lintCluster(ctx context.Context, cluster *clusterAccess, opts fleet.LintOptions, result *lintOutput) error {
	c, err := cluster.client()
	if err != nil {
		return err
	}
	l := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, l); err != nil {
		return fmt.Errorf("listing the cluster's CustomResourceDefinitions: %w", err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(l.Items))
	for i := range l.Items {
		crds = append(crds, &l.Items[i])
	}
	result.add(len(crds), fleet.LintCRDsWith(opts, crds...))
	result.addServed(crds)
	return nil
}

// emptyLintMessage says why a lint that checked no CRD fails: a CI job
// pointed at the wrong files or cluster must not pass.
func emptyLintMessage(files []string, fromCluster bool) string {
	where := "the cluster has none"
	switch {
	case len(files) > 0 && fromCluster:
		where = "neither the files nor the cluster hold one"
	case len(files) > 0:
		where = "the files hold none"
	}
	return fmt.Sprintf("no CustomResourceDefinition checked: %s; %s", where, allowEmptyHint)
}

// newLintOutput returns an empty document.
func newLintOutput() lintOutput {
	return lintOutput{typeMeta: documentType("LintFindingList"), Items: []findingView{}}
}

// add records findings of n CRDs and keeps the counts.
func (r *lintOutput) add(n int, findings []fleet.Finding) {
	r.Summary.CRDs += n
	for _, f := range findings {
		switch f.Severity {
		case fleet.SeverityError:
			r.Summary.Errors++
		case fleet.SeverityWarning:
			r.Summary.Warnings++
		}
		r.Items = append(r.Items, findingView{
			typeMeta: documentType("LintFinding"),
			File:     f.File, CRD: f.CRD, Version: f.Version, Path: f.Path,
			Severity: string(f.Severity), Message: f.Message,
		})
	}
}

// addServed records the served versions of crds.
func (r *lintOutput) addServed(crds []*apiextensionsv1.CustomResourceDefinition) {
	for _, v := range fleet.ServedVersions(crds...) {
		if !slices.Contains(r.served, v) {
			r.served = append(r.served, v)
		}
	}
}

// checkVersions refuses --version names that no CRD checked serves: a
// misspelt version would otherwise check nothing and pass.
func (r *lintOutput) checkVersions(versions []string) error {
	var missing []string
	for _, v := range versions {
		if !slices.Contains(r.served, v) && !slices.Contains(missing, v) {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	served := "none"
	if len(r.served) > 0 {
		served = strings.Join(slices.Sorted(slices.Values(r.served)), ", ")
	}
	return fmt.Errorf("--version %s: no CRD checked serves it (served: %s)", strings.Join(missing, ", "), served)
}

// crdsWithFindings returns the CRDs that have findings, once each, as
// objects for -o name.
func (r *lintOutput) crdsWithFindings() []runtime.Object {
	var (
		out  []runtime.Object
		seen = map[string]bool{}
	)
	for _, f := range r.Items {
		if seen[f.CRD] {
			continue
		}
		seen[f.CRD] = true
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		u.SetName(f.CRD)
		out = append(out, u)
	}
	return out
}

// writeLintOutput prints the findings in the format the flags ask for on
// stdout and, but for documents (which hold the counts), the summary line on
// stderr, so that stdout holds only what was asked for.
func writeLintOutput(stdout, stderr io.Writer, out *outputFlags, r lintOutput) error {
	var err error
	switch out.mode() {
	case modeDocument:
		return out.printDocument(stdout, r)
	case modeName:
		err = printNames(stdout, r.crdsWithFindings())
	default:
		err = writeLintTable(stdout, out, r)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, r.summaryLine())
	return nil
}

// writeLintTable prints the findings as a table; nothing without findings.
func writeLintTable(w io.Writer, out *outputFlags, r lintOutput) error {
	t := newTable(schema.GroupKind{},
		column("Source", false, "the manifest, or cluster"),
		column("CRD", false, "the CustomResourceDefinition"),
		column("Version", false, "the served version whose schema has the finding"),
		column("Path", false, "the field in the schema"),
		column("Severity", false, "error or warning"),
		column("Message", false, "what is wrong and how to fix it"),
	)
	for _, f := range r.Items {
		source := f.File
		if source == "" {
			source = "cluster"
		}
		t.row(nil, source, f.CRD, f.Version, f.Path, f.Severity, f.Message)
	}
	return out.printTables(w, tableOptions{}, t)
}

// summaryLine counts the CRDs checked and the findings.
func (r lintOutput) summaryLine() string {
	s := r.Summary
	return fmt.Sprintf("%s checked: %s, %s",
		plural(s.CRDs, "CRD", "CRDs"), plural(s.Errors, "error", "errors"), plural(s.Warnings, "warning", "warnings"))
}

// plural renders a count with its noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
