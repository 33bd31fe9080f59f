package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/ownership"
)

// noManagedFieldsNote explains an object without managedFields. Saying
// "nobody owns anything" would be wrong: the server simply recorded nothing,
// and its first apply will attribute every existing field to
// before-first-apply.
const noManagedFieldsNote = "no managedFields: the API server recorded no field ownership for this object " +
	"(written without tracking, or cleared), so who owns its status is unknown, which is not the same as owned by nobody; " +
	"the first apply attributes every existing field to " + ownership.BeforeFirstApplyManager +
	" (migrate seeds that and hands the fields over)"

const ownersLong = `For each object, show which field manager owns which status condition type
and which other status fields, with the operation (Apply for server-side
apply, Update for create, update and patches) and subresource of each
managedFields entry.

Legacy writers (an Update on the status subresource, or the API server's
before-first-apply attribution) are marked: their fields are what
"migrate" hands to apply managers. Fields owned by more than one manager are
marked as shared, conditions by type. Objects are read from the API server,
never from a cache, and an object without managedFields is reported as such.`

const ownersExample = `  statusapply owners widget/w1 -n shop
  statusapply owners widgets -A -o json
  kubectl statusapply owners widgets.demo.statusapply.io -l app=web`

// ownersOutput is the JSON document of the owners command.
type ownersOutput struct {
	Objects []objectOwnersView `json:"objects"`
	Errors  []objectErrorView  `json:"errors,omitempty"`
}

// objectOwnersView is one object in the owners output.
type objectOwnersView struct {
	objectRefView
	// ManagedFields is false for an object that carries none; Note then
	// explains what that means.
	ManagedFields bool   `json:"managedFields"`
	Note          string `json:"note,omitempty"`
	ownershipView
}

// objectErrorView is an object the command could not handle.
type objectErrorView struct {
	Object string `json:"object"`
	Error  string `json:"error"`
}

// newOwnersCommand returns the owners command.
func newOwnersCommand(cluster *clusterAccess) *cobra.Command {
	var (
		sel         selectionFlags
		out         outputFormat
		allManagers bool
	)
	cmd := &cobra.Command{
		Use:     "owners TYPE[/NAME] [NAME...]",
		Short:   "Show who owns which status condition type and field of objects",
		Long:    ownersLong,
		Example: ownersExample,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sel.resolve(cluster, args)
			if err != nil {
				return err
			}
			objs, readErrs := readObjects(cmd.Context(), s)
			result, errs := inspectAll(objs, readErrs)
			if out == outputJSON {
				if err := writeJSON(cmd.OutOrStdout(), result); err != nil {
					return err
				}
			} else {
				if len(result.Objects) == 0 && len(result.Errors) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), s.scope.describe(s.mapping))
				}
				if err := writeOwnersTable(cmd.OutOrStdout(), result, allManagers); err != nil {
					return err
				}
			}
			return errors.Join(errs...)
		},
	}
	sel.addFlags(cmd)
	addOutputFlag(cmd, &out)
	cmd.Flags().BoolVar(&allManagers, "all-managers", false,
		"also list managedFields entries that own no status field (table output; JSON always lists all)")
	return cmd
}

// readObjects reads the named objects one by one, recording a failure per
// object, or lists the type when no names are given.
func readObjects(ctx context.Context, s *selection) ([]*unstructured.Unstructured, []error) {
	if len(s.target.Names) == 0 {
		objs, err := list(ctx, s.client, s.mapping, s.scope)
		if err != nil {
			return nil, []error{err}
		}
		return objs, nil
	}
	var (
		objs []*unstructured.Unstructured
		errs []error
	)
	for _, name := range s.target.Names {
		u := stub(s.mapping, s.scope, name)
		ref := ownership.RefOf(u)
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			errs = append(errs, &ownership.ObjectError{Object: ref, Op: "reading", Err: err})
			continue
		}
		objs = append(objs, u)
	}
	return objs, errs
}

// inspectAll decodes every object's managedFields. An object without any is
// reported with a note, not as an error. Read and decode failures become
// error entries of the output and are returned, for the exit code.
func inspectAll(objs []*unstructured.Unstructured, readErrs []error) (ownersOutput, []error) {
	result := ownersOutput{Objects: []objectOwnersView{}}
	errs := slices.Clone(readErrs)
	for _, u := range objs {
		ref := ownership.RefOf(u)
		o, err := ownership.Inspect(u)
		switch {
		case errors.Is(err, ownership.ErrNoManagedFields):
			result.Objects = append(result.Objects, objectOwnersView{
				objectRefView: refView(ref), Note: noManagedFieldsNote, ownershipView: viewOf(nil),
			})
		case err != nil:
			errs = append(errs, err)
		default:
			result.Objects = append(result.Objects, objectOwnersView{
				objectRefView: refView(ref), ManagedFields: true, ownershipView: viewOf(o),
			})
		}
	}
	for _, err := range errs {
		result.Errors = append(result.Errors, errorView(err))
	}
	return result, errs
}

// errorView names the object of an *ownership.ObjectError when there is one.
func errorView(err error) objectErrorView {
	var oe *ownership.ObjectError
	if errors.As(err, &oe) {
		return objectErrorView{Object: oe.Object.String(), Error: err.Error()}
	}
	return objectErrorView{Error: err.Error()}
}

// writeOwnersTable prints one block per object: its name, then its
// ownership table or the note explaining why there is none.
func writeOwnersTable(w io.Writer, result ownersOutput, allManagers bool) error {
	for i, obj := range result.Objects {
		if i > 0 {
			fmt.Fprintln(w)
		}
		ref := ownership.ObjectRef{Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name}
		if !obj.ManagedFields {
			fmt.Fprintf(w, "%s\n  %s\n", ref, obj.Note)
			continue
		}
		fmt.Fprintln(w, ref)
		hidden, err := ownershipTable{indent: "  ", all: allManagers}.write(w, obj.ownershipView)
		if err != nil {
			return err
		}
		if hidden > 0 {
			fmt.Fprintf(w, "  (%s no status field; --all-managers lists them)\n",
				plural(hidden, "more managedFields entry owns", "more managedFields entries own"))
		}
	}
	return nil
}
