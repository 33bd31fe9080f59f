package cli

import (
	"github.com/spf13/cobra"
)

// allowEmptyHint ends the error of a gate that examined nothing.
const allowEmptyHint = "give --allow-empty if nothing is expected"

// addAllowEmptyFlag registers --allow-empty, the same flag on every command
// that gates: without it, a gate that examined nothing (nothing to check
// is what exits 0) fails, since a CI job pointed at the wrong namespace,
// selector, context or file would otherwise pass for a clean one.
func addAllowEmptyFlag(cmd *cobra.Command, allow *bool, what string) {
	cmd.Flags().BoolVar(allow, "allow-empty", false, "pass when "+what+" (by default a gate that examined nothing fails with exit code 1)")
}
