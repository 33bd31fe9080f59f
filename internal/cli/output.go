package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// outputFormat is the value of -o/--output.
type outputFormat string

const (
	// outputTable is for people: aligned columns.
	outputTable outputFormat = "table"
	// outputJSON is for scripts: one JSON document on stdout.
	outputJSON outputFormat = "json"
)

// String implements pflag.Value.
func (o *outputFormat) String() string { return string(*o) }

// Set implements pflag.Value, rejecting unknown formats while flags are
// parsed so that a typo fails before anything is read or written.
func (o *outputFormat) Set(v string) error {
	switch outputFormat(v) {
	case outputTable, outputJSON:
		*o = outputFormat(v)
		return nil
	}
	return fmt.Errorf("unknown output format %q: use table or json", v)
}

// Type implements pflag.Value.
func (o *outputFormat) Type() string { return "format" }

// addOutputFlag registers -o/--output on cmd, defaulting to a table.
func addOutputFlag(cmd *cobra.Command, o *outputFormat) {
	*o = outputTable
	cmd.Flags().VarP(o, "output", "o", "output format: table or json")
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// table collects tab-separated rows and aligns them on flush.
type table struct {
	tw *tabwriter.Writer
}

// newTable returns a table writing to w.
func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

// row adds one row; empty cells print as "-" so columns stay readable.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// flush writes the aligned rows.
func (t *table) flush() error {
	return t.tw.Flush()
}
