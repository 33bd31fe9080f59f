package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/statusapply/statusapply/internal/demo"
)

func newDemoCommand() *cobra.Command {
	var against string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show, on an embedded API server, what statusapply changes for objects with several status writers",
		Long: `demo starts an embedded kube-apiserver and etcd (built by 'make envtest'), installs the example
CRDs and walks through each claim of statusapply, exiting non-zero if a step does not show
what it claims. With --against it runs the same steps on the cluster of a kubeconfig, in a
namespace it creates and deletes (installing the example CRDs when missing, and removing the
ones it installed).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if against == "" {
				return demo.Run(cmd.Context(), cmd.OutOrStdout())
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", against)
			if err != nil {
				return err
			}
			return demo.RunAgainst(cmd.Context(), cmd.OutOrStdout(), cfg)
		},
	}
	cmd.Flags().StringVar(&against, "against", "", "kubeconfig of a cluster to run the demo on instead of an embedded API server")
	return cmd
}
