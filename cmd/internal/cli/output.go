package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// DocumentGroupVersion is the apiVersion of the documents that -o json,
// yaml, jsonpath and go-template print. Its kinds are List-shaped (items,
// plus a few fields of their own): StatusOwnershipList, LintFindingList,
// MigrationList; and Version. Fields are only ever added within a version.
const DocumentGroupVersion = "cli.statusapply.io/v1alpha1"

// typeMeta is the apiVersion and kind of a printed document or item.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// documentType returns the typeMeta of kind in DocumentGroupVersion.
func documentType(kind string) typeMeta {
	return typeMeta{APIVersion: DocumentGroupVersion, Kind: kind}
}

// none is what an empty table cell shows, as in kubectl.
const none = "<none>"

// outputMode is what -o asks for.
type outputMode int

const (
	// modeTable is the default: aligned columns for people.
	modeTable outputMode = iota
	// modeWide is -o wide: the table with more columns, or per-object lines.
	modeWide
	// modeName is -o name: TYPE/NAME of the objects, one a line.
	modeName
	// modeDocument is -o json, yaml, kyaml, jsonpath=..., go-template=...
	// and their -file variants: one document printed by cli-runtime.
	modeDocument
)

// outputFlags are -o/--output with cli-runtime's printer flags (--template,
// --allow-missing-template-keys) and --no-headers.
type outputFlags struct {
	print     *genericclioptions.PrintFlags
	noHeaders bool
	// noNames leaves -o name out of the formats offered, for commands that
	// print a summary rather than objects; set it before addFlags.
	noNames bool
}

// newOutputFlags returns unbound flags; addFlags binds them.
func newOutputFlags() *outputFlags {
	return &outputFlags{print: genericclioptions.NewPrintFlags("")}
}

// formats lists the -o values besides the default table.
func (o *outputFlags) formats() []string {
	out := append([]string{"wide"}, o.print.AllowedFormats()...)
	if o.noNames {
		out = slices.DeleteFunc(out, func(f string) bool { return f == "name" })
	}
	return out
}

// addFlags registers the output flags on cmd.
func (o *outputFlags) addFlags(cmd *cobra.Command) {
	o.addDocumentFlags(cmd, "a table by default, or one of "+strings.Join(o.formats(), ", "))
	cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "print tables without the header line")
}

// addDocumentFlags registers -o and the template flags, for a command whose
// default output is not a table.
func (o *outputFlags) addDocumentFlags(cmd *cobra.Command, formats string) {
	o.print.AddFlags(cmd)
	f := cmd.Flags()
	f.Lookup("output").Usage = "output format: " + formats +
		" (TEMPLATE after = for jsonpath and go-template, FILE for the -file variants)"
	// The documents carry no managedFields of their own to hide or show.
	_ = f.MarkHidden("show-managed-fields")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return o.formats(), cobra.ShellCompDirectiveNoFileComp
	})
}

// mode is what the flags ask for; --template without -o means go-template,
// as in kubectl.
func (o *outputFlags) mode() outputMode {
	format := strings.ToLower(*o.print.OutputFormat)
	template := o.print.TemplatePrinterFlags.TemplateArgument
	if template != nil && *template != "" && (o.print.OutputFlagSpecified == nil || !o.print.OutputFlagSpecified()) {
		return modeDocument
	}
	switch format {
	case "":
		return modeTable
	case "wide":
		return modeWide
	case "name":
		return modeName
	}
	return modeDocument
}

// check refuses an unknown format or a broken template before anything is
// read, as a usage error.
func (o *outputFlags) check() error {
	if o.mode() != modeDocument {
		return nil
	}
	if _, err := o.print.ToPrinter(); err != nil {
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			err = fmt.Errorf("unknown output format %q: use %s, or leave -o out for a table",
				*o.print.OutputFormat, strings.Join(o.formats(), ", "))
		}
		return withExitCode(exitUsage, err)
	}
	return nil
}

// printDocument prints doc, a struct with apiVersion and kind, through
// cli-runtime's printer for the format.
func (o *outputFlags) printDocument(w io.Writer, doc any) error {
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding the output: %w", err)
	}
	var content map[string]any
	if err := utiljson.Unmarshal(data, &content); err != nil { // integers stay int64
		return fmt.Errorf("encoding the output: %w", err)
	}
	p, err := o.print.ToPrinter()
	if err != nil {
		return withExitCode(exitUsage, err)
	}
	return p.PrintObj(&unstructured.Unstructured{Object: content}, w)
}

// printNames prints TYPE/NAME of each object, as kubectl's -o name does.
func printNames(w io.Writer, objs []runtime.Object) error {
	p := &printers.NamePrinter{}
	for _, obj := range objs {
		if err := p.PrintObj(obj, w); err != nil {
			return err
		}
	}
	return nil
}

// table is a kubectl-style table of one kind of object: rows keep the object
// they describe so that cli-runtime's printer can add NAMESPACE (under -A)
// and prefix names with the kind (when a command prints several kinds).
type table struct {
	kind schema.GroupKind
	t    metav1.Table
}

// newTable starts a table with the given columns; a column with priority 1
// shows only with -o wide. The column named "Name" holds object names.
func newTable(kind schema.GroupKind, columns ...metav1.TableColumnDefinition) *table {
	for i := range columns {
		columns[i].Type = "string"
		if columns[i].Name == "Name" {
			columns[i].Format = "name"
		}
	}
	return &table{kind: kind, t: metav1.Table{ColumnDefinitions: columns}}
}

// column is a table column; wide ones have priority 1.
func column(name string, wide bool, description string) metav1.TableColumnDefinition {
	c := metav1.TableColumnDefinition{Name: name, Description: description}
	if wide {
		c.Priority = 1
	}
	return c
}

// row adds a row about obj; empty cells print as <none>.
func (t *table) row(obj runtime.Object, cells ...string) {
	r := metav1.TableRow{Object: runtime.RawExtension{Object: obj}}
	for _, c := range cells {
		if c == "" {
			c = none
		}
		r.Cells = append(r.Cells, c)
	}
	t.t.Rows = append(t.t.Rows, r)
}

// tableOptions say how tables print.
type tableOptions struct {
	// withNamespace adds the NAMESPACE column (-A).
	withNamespace bool
	// withKind prefixes names with the kind, when several kinds print.
	withKind bool
}

// printTables prints tables one after the other, a blank line between
// them, through cli-runtime's table printer (aligned by
// printers.GetNewTabWriter, three spaces between columns). Tables without
// rows print nothing.
func (o *outputFlags) printTables(w io.Writer, opts tableOptions, tables ...*table) error {
	first := true
	for _, t := range tables {
		if len(t.t.Rows) == 0 {
			continue
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		p := printers.NewTablePrinter(printers.PrintOptions{
			NoHeaders:     o.noHeaders,
			Wide:          o.mode() == modeWide,
			WithNamespace: opts.withNamespace,
			WithKind:      opts.withKind,
			Kind:          t.kind,
		})
		if err := p.PrintObj(&t.t, w); err != nil {
			return err
		}
	}
	return nil
}

// tablesByKind keeps one table per kind in the order kinds first appear.
type tablesByKind struct {
	columns []metav1.TableColumnDefinition
	order   []*table
	byKind  map[schema.GroupKind]*table
}

// newTablesByKind returns tables with the given columns.
func newTablesByKind(columns ...metav1.TableColumnDefinition) *tablesByKind {
	return &tablesByKind{columns: columns, byKind: map[schema.GroupKind]*table{}}
}

// of returns the table for obj's kind.
func (ts *tablesByKind) of(obj runtime.Object) *table {
	gk := obj.GetObjectKind().GroupVersionKind().GroupKind()
	t, ok := ts.byKind[gk]
	if !ok {
		t = newTable(gk, append([]metav1.TableColumnDefinition(nil), ts.columns...)...)
		ts.byKind[gk] = t
		ts.order = append(ts.order, t)
	}
	return t
}

// print prints every table, names prefixed with their kind when there are
// several kinds.
func (ts *tablesByKind) print(w io.Writer, o *outputFlags, withNamespace bool) error {
	return o.printTables(w, tableOptions{withNamespace: withNamespace, withKind: len(ts.order) > 1}, ts.order...)
}
