package main

import (
	"github.com/spf13/cobra"

	"github.com/statusapply/statusapply/internal/demo"
)

func newDemoCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Show, on an embedded API server, what statusapply changes for objects with several status writers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return demo.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
}
