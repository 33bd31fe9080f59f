package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// selectionFlags are the flags that pick objects of a type, shared by the
// commands that take TYPE[/NAME] arguments.
type selectionFlags struct {
	allNamespaces bool
	selector      string
}

// addFlags registers -A/--all-namespaces and -l/--selector on cmd.
func (f *selectionFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false,
		"list the objects in every namespace (when no NAME is given)")
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "",
		"label selector for lists, such as app=web,tier!=db")
}

// selection is what a command resolved from its arguments and flags.
type selection struct {
	client  client.Client
	mapping *meta.RESTMapping
	target  target
	scope   scope
}

// resolve parses args, connects, and maps the resource type through discovery.
func (f *selectionFlags) resolve(cluster *clusterAccess, args []string) (*selection, error) {
	t, err := parseTarget(args)
	if err != nil {
		return nil, err
	}
	s := scope{AllNamespaces: f.allNamespaces}
	if f.selector != "" {
		if len(t.Names) > 0 {
			return nil, fmt.Errorf("--selector applies to lists: give a TYPE without names")
		}
		if s.Selector, err = labels.Parse(f.selector); err != nil {
			return nil, fmt.Errorf("--selector %q: %w", f.selector, err)
		}
	}
	if err := s.validate(t); err != nil {
		return nil, err
	}
	if s.Namespace, err = cluster.namespace(); err != nil {
		return nil, err
	}
	c, err := cluster.client()
	if err != nil {
		return nil, err
	}
	mapper, err := cluster.flags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("discovering the API: %w", err)
	}
	m, err := resolveResource(mapper, t.Resource)
	if err != nil {
		return nil, err
	}
	return &selection{client: c, mapping: m, target: t, scope: s}, nil
}
