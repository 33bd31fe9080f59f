package cli

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
)

// ownershipTable renders an ownershipView as rows, one per managedFields
// entry, for the ownership before and after a migration.
type ownershipTable struct {
	// indent prefixes every line, to nest the table under an object.
	indent string
	// all includes entries that own nothing in status (metadata and spec
	// writers); they are noise when the question is who writes status.
	all bool
}

// write renders v to w and returns how many entries it left out for owning
// nothing in status.
func (t ownershipTable) write(w io.Writer, v ownershipView) (hidden int, err error) {
	var shown []managerView
	for _, m := range v.Managers {
		if t.all || m.ownsStatus() {
			shown = append(shown, m)
		} else {
			hidden++
		}
	}
	if len(shown) == 0 {
		fmt.Fprintf(w, "%sno manager owns status fields\n", t.indent)
		return hidden, nil
	}
	tw := printers.GetNewTabWriter(w)
	row := func(cells ...string) {
		for i, c := range cells {
			if c == "" {
				cells[i] = none
			}
		}
		fmt.Fprintln(tw, t.indent+strings.Join(cells, "\t"))
	}
	row("MANAGER", "OPERATION", "SUBRESOURCE", "CONDITIONS", "OTHER STATUS FIELDS", "NOTES")
	for _, m := range shown {
		row(m.Manager, m.Operation, m.Subresource, conditionsCell(m),
			strings.Join(m.OtherStatusFields, ","), notes(m, v.SharedStatusFields))
	}
	return hidden, tw.Flush()
}

// conditionsCell lists the condition types, or says that the entry owns an
// atomic conditions list as a whole.
func conditionsCell(m managerView) string {
	if m.WholeConditionsList {
		return "(whole list)"
	}
	return strings.Join(m.Conditions, ",")
}
