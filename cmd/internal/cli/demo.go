package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/statusapply/statusapply/cmd/internal/demo"
)

const demoLong = `demo walks through each claim of statusapply on a real API server and exits
non-zero if a step does not show what it claims. Every step names the file
to read for how it is done.

Without connection flags it starts an embedded kube-apiserver and etcd (built
by 'make envtest'; found through KUBEBUILDER_ASSETS). With --kubeconfig,
--context, --cluster, --user or --server it runs on that cluster instead, in a
namespace it creates and deletes, installing the example CRDs when missing
and removing the ones it installed. KUBECONFIG alone does not count: the demo
never writes to your current cluster unless told to. --embedded insists on
the embedded server.

SIGINT (Ctrl-C) and SIGTERM stop the demo after the current request: the
embedded kube-apiserver and etcd are stopped and their temporary
directories removed before the command exits.`

const demoExample = `  statusapply demo
  statusapply demo --kubeconfig ~/.kube/kind-config --context kind-kind`

func newDemoCommand(cluster *clusterAccess) *cobra.Command {
	var (
		against  string
		embedded bool
	)
	cmd := &cobra.Command{
		Use:     "demo",
		Short:   "Show, on an embedded API server or a cluster, what statusapply changes for objects with several status writers",
		Long:    demoLong,
		Example: demoExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if against != "" {
				if *cluster.flags.KubeConfig != "" && *cluster.flags.KubeConfig != against {
					return withExitCode(exitUsage, errors.New("--against is --kubeconfig: give one of them"))
				}
				*cluster.flags.KubeConfig = against
			}
			if embedded && cluster.given() {
				return withExitCode(exitUsage, errors.New(
					"--embedded runs the demo on its own API server: leave out --kubeconfig, --context, --cluster, --user and --server"))
			}
			if embedded || !cluster.given() {
				return demo.Run(cmd.Context(), cmd.OutOrStdout())
			}
			cfg, err := cluster.restConfig()
			if err != nil {
				return err
			}
			return demo.RunAgainst(cmd.Context(), cmd.OutOrStdout(), cfg)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&embedded, "embedded", false, "run on an embedded kube-apiserver and etcd (the default without connection flags)")
	f.StringVar(&against, "against", "", "kubeconfig of a cluster to run the demo on")
	_ = f.MarkDeprecated("against", "use --kubeconfig (and --context)")
	return cmd
}
