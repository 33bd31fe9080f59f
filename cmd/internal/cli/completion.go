package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/statusapply/statusapply/internal/components"
	"github.com/statusapply/statusapply/ownership"
)

const completionLong = `completion prints a shell completion script for the statusapply binary.

  bash:  source <(statusapply completion bash)
         (needs the bash-completion package; or write the script to
         /etc/bash_completion.d/statusapply)
  zsh:   statusapply completion zsh > "${fpath[1]}/_statusapply"
         (with "autoload -U compinit; compinit" in ~/.zshrc)
  fish:  statusapply completion fish > ~/.config/fish/completions/statusapply.fish

Resource types, object names and -o formats complete from the cluster of the
kubeconfig flags on the command line.

As a kubectl plugin, "kubectl statusapply <TAB>" completes through kubectl's
own completion, which runs an executable named kubectl_complete-statusapply
found on PATH: install the script of that name from cmd/kubectl-statusapply
next to the kubectl-statusapply binary ("make install-plugin" does both).`

func newCompletionCommand() *cobra.Command {
	shells := []string{"bash", "zsh", "fish"}
	return &cobra.Command{
		Use:                   "completion bash|zsh|fish",
		Short:                 "Print a shell completion script",
		Long:                  completionLong,
		DisableFlagsInUseLine: true,
		ValidArgs:             shells,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(shells, args[0]) {
				return withExitCode(exitUsage, fmt.Errorf("give one shell: %s", strings.Join(shells, ", ")))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, w := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			default:
				return root.GenFishCompletion(w, true)
			}
		},
	}
}

// completeObjects completes TYPE, NAME after a TYPE, and TYPE/NAME from the
// cluster: resource types that can be listed, and the names of the objects
// of a type in the namespace of the flags. Failures complete nothing.
func completeObjects(cluster *clusterAccess) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		noFiles := cobra.ShellCompDirectiveNoFileComp
		switch {
		case len(args) == 0 && !strings.Contains(toComplete, "/"):
			return resourceTypes(cluster), noFiles
		case len(args) == 0:
			kind, _, _ := strings.Cut(toComplete, "/")
			var out []cobra.Completion
			for _, name := range objectNames(cluster, kind) {
				out = append(out, kind+"/"+name)
			}
			return out, noFiles
		case !strings.Contains(args[0], "/"):
			names := slices.DeleteFunc(objectNames(cluster, args[0]), func(n string) bool { return slices.Contains(args[1:], n) })
			return names, noFiles
		}
		return nil, noFiles
	}
}

// completeTypes completes the one TYPE argument of a command that takes a
// resource type only (audit) from the cluster.
func completeTypes(cluster *clusterAccess) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return resourceTypes(cluster), cobra.ShellCompDirectiveNoFileComp
	}
}

// resourceTypes lists the plural names of the types the server can list.
func resourceTypes(cluster *clusterAccess) []string {
	if cluster.check() != nil {
		return nil
	}
	dc, err := cluster.flags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	lists, _ := dc.ServerPreferredResources() // partial results are fine
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// objectNames lists the names of the objects of kind in the flags'
// namespace (cluster-scoped kinds ignore it), listed as the commands list
// them.
func objectNames(cluster *clusterAccess, kind string) []string {
	r, _, err := (&objectFlags{chunkSize: defaultChunkSize}).result(cluster, []string{kind})
	if err != nil {
		return nil
	}
	var names []string
	_ = r.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return nil
		}
		return meta.EachListItem(info.Object, func(o runtime.Object) error {
			if m, err := meta.Accessor(o); err == nil {
				names = append(names, m.GetName())
			}
			return nil
		})
	})
	return names
}

// registerConnectionCompletions completes the kubeconfig flags of root's
// tree: -n/--namespace from the cluster's namespaces, --context, --cluster
// and --user from the kubeconfig. None of them completes file names.
func registerConnectionCompletions(root *cobra.Command, cluster *clusterAccess) {
	fromKubeconfig := func(names func(raw clientcmdapi.Config) []string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			raw, err := cluster.flags.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return sortedNames(names(raw)), cobra.ShellCompDirectiveNoFileComp
		}
	}
	completions := map[string]cobra.CompletionFunc{
		"namespace": func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return objectNames(cluster, "namespaces"), cobra.ShellCompDirectiveNoFileComp
		},
		"context": fromKubeconfig(func(raw clientcmdapi.Config) []string { return slices.Collect(maps.Keys(raw.Contexts)) }),
		"cluster": fromKubeconfig(func(raw clientcmdapi.Config) []string { return slices.Collect(maps.Keys(raw.Clusters)) }),
		"user":    fromKubeconfig(func(raw clientcmdapi.Config) []string { return slices.Collect(maps.Keys(raw.AuthInfos)) }),
	}
	for name, fn := range completions {
		// Only fails for a flag that does not exist or is registered twice.
		_ = root.RegisterFlagCompletionFunc(name, fn)
	}
}

// sortedNames sorts names for completion.
func sortedNames(names []string) []cobra.Completion {
	slices.Sort(names)
	return slices.Compact(names)
}

// completePairs completes a LEFT=RIGHT flag (--from LEGACY=MANAGER,
// --condition TYPE=MANAGER, --writer MANAGER=TYPE) from the objects the
// command's arguments select: left lists the candidates before "=", right
// those after it.
func completePairs(cluster *clusterAccess, sel *objectFlags, left, right func([]*ownership.Ownership) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		owned := selectedOwnership(cluster, sel, args)
		prefix, _, found := strings.Cut(toComplete, "=")
		var out []cobra.Completion
		if !found {
			for _, l := range left(owned) {
				out = append(out, l+"=")
			}
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		for _, r := range right(owned) {
			out = append(out, prefix+"="+r)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeDestinations completes --new-destination with the destinations
// of the --from and --condition flags given so far.
func (pf *planFlags) completeDestinations(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []string
	for _, f := range slices.Concat(pf.from, pf.conditions) {
		if _, to, ok := strings.Cut(f, "="); ok && to != "" {
			out = append(out, to)
		}
	}
	return sortedNames(out), cobra.ShellCompDirectiveNoFileComp
}

// selectedOwnership reads the objects args select and decodes their
// managedFields; failures and objects without any are left out.
func selectedOwnership(cluster *clusterAccess, sel *objectFlags, args []string) []*ownership.Ownership {
	if len(args) == 0 || cluster.check() != nil {
		return nil
	}
	s, err := sel.selectObjects(cluster, args)
	if err != nil {
		return nil
	}
	var out []*ownership.Ownership
	for _, obj := range s.Objects {
		if o, err := ownership.Inspect(obj); err == nil {
			out = append(out, o)
		}
	}
	return out
}

// legacyWriters lists the legacy writers of owned (before-first-apply
// included), for --from.
func legacyWriters(owned []*ownership.Ownership) []string {
	var out []string
	for _, o := range owned {
		for _, e := range o.Legacy() {
			if !components.IsKubernetes(e.Manager) {
				out = append(out, e.Manager)
			}
		}
	}
	return sortedNames(out)
}

// legacyConditionTypes lists the condition types legacy writers hold in
// owned, for --condition.
func legacyConditionTypes(owned []*ownership.Ownership) []string {
	var out []string
	for _, o := range owned {
		for _, e := range o.Legacy() {
			out = append(out, e.ConditionTypes()...)
		}
	}
	return sortedNames(out)
}

// applyManagersOf lists the apply managers of owned.
func applyManagersOf(owned []*ownership.Ownership) []string {
	var out []string
	for _, o := range owned {
		for _, e := range o.Entries {
			if e.Operation == metav1.ManagedFieldsOperationApply {
				out = append(out, e.Manager)
			}
		}
	}
	return sortedNames(out)
}
