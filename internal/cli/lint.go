package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/statusapply/statusapply/ownership"
)

// stdinName labels findings of a manifest read from standard input.
const stdinName = "<stdin>"

const lintLong = `Check CustomResourceDefinition schemas for status fields that make several
status writers conflict.

status.conditions that is not a map-list keyed by type
(x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [type]) is an
error: the whole list then has one owner, and every second writer's apply
conflicts. Other atomic lists and maps under status are warnings.

FILE arguments are manifests (multi-document YAML or JSON; "-" reads standard
input); documents of other kinds are skipped. Without FILE, or with
--cluster-crds, the cluster's CRDs are checked. The command exits non-zero
when there is at least one error finding, so it can gate CI; warnings alone
exit 0.`

const lintExample = `  statusapply lint config/crd/*.yaml
  kustomize build config/default | statusapply lint -
  statusapply lint --context prod -o json`

// lintOutput is the JSON document of the lint command.
type lintOutput struct {
	// CRDs counts the CustomResourceDefinitions checked.
	CRDs     int           `json:"crds"`
	Errors   int           `json:"errors"`
	Warnings int           `json:"warnings"`
	Findings []findingView `json:"findings"`
}

// findingView is an ownership.Finding with JSON names; File is empty for
// CRDs read from the cluster.
type findingView struct {
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
		out         outputFormat
	)
	cmd := &cobra.Command{
		Use:     "lint [FILE...]",
		Short:   "Check CRD status schemas for lists and maps that make status writers conflict",
		Long:    lintLong,
		Example: lintExample,
		RunE: func(cmd *cobra.Command, files []string) error {
			result := lintOutput{Findings: []findingView{}}
			for _, file := range files {
				if err := lintFile(cmd.InOrStdin(), cmd.ErrOrStderr(), file, &result); err != nil {
					return err
				}
			}
			if fromCluster || len(files) == 0 {
				if err := lintCluster(cmd.Context(), cluster, &result); err != nil {
					return err
				}
			}
			if out == outputJSON {
				if err := writeJSON(cmd.OutOrStdout(), result); err != nil {
					return err
				}
			} else if err := writeLintTable(cmd.OutOrStdout(), result); err != nil {
				return err
			}
			if result.Errors > 0 {
				return fmt.Errorf("lint found %s in CRD status schemas", plural(result.Errors, "error", "errors"))
			}
			return nil
		},
	}
	addOutputFlag(cmd, &out)
	cmd.Flags().BoolVar(&fromCluster, "cluster-crds", false,
		"also check the cluster's CRDs when FILE arguments are given (--cluster is kubectl's kubeconfig cluster flag)")
	return cmd
}

// lintFile lints the CRDs in one manifest ("-" for stdin) into result. A
// manifest without any CRD is worth a warning: a CI job pointed at the wrong
// file would otherwise pass silently.
func lintFile(stdin io.Reader, stderr io.Writer, file string, result *lintOutput) error {
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
	crds, err := ownership.DecodeCRDs(name, data)
	if err != nil {
		return err
	}
	if len(crds) == 0 {
		fmt.Fprintf(stderr, "warning: %s holds no CustomResourceDefinition\n", name)
	}
	findings := ownership.LintCRDs(crds...)
	for i := range findings {
		findings[i].File = name
	}
	result.add(len(crds), findings)
	return nil
}

// lintCluster lints every CRD the API server has into result.
func lintCluster(ctx context.Context, cluster *clusterAccess, result *lintOutput) error {
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
	result.add(len(crds), ownership.LintCRDs(crds...))
	return nil
}

// add records findings of n CRDs and keeps the counts.
func (r *lintOutput) add(n int, findings []ownership.Finding) {
	r.CRDs += n
	for _, f := range findings {
		switch f.Severity {
		case ownership.SeverityError:
			r.Errors++
		case ownership.SeverityWarning:
			r.Warnings++
		}
		r.Findings = append(r.Findings, findingView{
			File: f.File, CRD: f.CRD, Version: f.Version, Path: f.Path,
			Severity: string(f.Severity), Message: f.Message,
		})
	}
}

// writeLintTable prints the findings, then a summary line.
func writeLintTable(w io.Writer, r lintOutput) error {
	if len(r.Findings) > 0 {
		t := newTable(w)
		t.row("SOURCE", "CRD", "VERSION", "PATH", "SEVERITY", "MESSAGE")
		for _, f := range r.Findings {
			source := f.File
			if source == "" {
				source = "cluster"
			}
			t.row(source, f.CRD, f.Version, f.Path, f.Severity, f.Message)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%s checked: %s, %s\n",
		plural(r.CRDs, "CRD", "CRDs"), plural(r.Errors, "error", "errors"), plural(r.Warnings, "warning", "warnings"))
	return nil
}

// plural renders a count with its noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
