package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// oneResourceType checks the arguments of a command that takes exactly one
// resource type (audit), with a one-line usage error that says what to
// give instead of cobra's "accepts 1 arg(s), received 2".
func oneResourceType(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		return nil
	case 0:
		return withExitCode(exitUsage, fmt.Errorf("%s needs a resource type, such as widgets (see '%s --help')",
			cmd.Name(), cmd.CommandPath()))
	}
	return withExitCode(exitUsage, fmt.Errorf("%s takes one resource type, not %d arguments (%s): "+
		"it audits every object of the type; narrow it with -n or -l (see '%s --help')",
		cmd.Name(), len(args), strings.Join(args, " "), cmd.CommandPath()))
}

// resourceArgs checks the arguments of a command that selects objects as
// kubectl get does (owners, migrate): at least a resource type.
func resourceArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return withExitCode(exitUsage, fmt.Errorf("%s needs a resource type, such as widgets or widget/w1 (see '%s --help')",
			cmd.Name(), cmd.CommandPath()))
	}
	return nil
}
