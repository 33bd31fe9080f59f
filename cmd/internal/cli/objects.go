package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/statusapply/statusapply/ownership"
)

// defaultChunkSize is how many objects one list request returns, as in
// kubectl.
const defaultChunkSize = 500

// objectFlags are the flags that pick objects, shared by the commands that
// take TYPE[/NAME] arguments.
type objectFlags struct {
	allNamespaces bool
	selector      string
	chunkSize     int64
}

// addFlags registers -A/--all-namespaces, -l/--selector and --chunk-size.
func (f *objectFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false,
		"list the objects in every namespace (not with object names)")
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "",
		"label selector for lists, such as app=web,tier!=db (not with object names)")
	cmd.Flags().Int64Var(&f.chunkSize, "chunk-size", defaultChunkSize,
		"list large sets of objects in chunks of this many rather than all at once; 0 lists all at once")
}

// check refuses, before anything is read, arguments and flags that cannot
// go together, and reports whether the arguments name objects.
func (f *objectFlags) check(args []string) (named bool, err error) {
	if len(args) == 0 {
		return false, errors.New("a resource type is required, such as widgets or widget/w1")
	}
	if slices.Contains(args, "") {
		return false, errors.New("an argument is empty")
	}
	named, err = resource.HasNames(args)
	if err != nil {
		return false, fmt.Errorf("%q: give every argument as TYPE/NAME, or the type once followed by names", strings.Join(args, " "))
	}
	switch {
	case named && f.allNamespaces:
		return false, errors.New("objects cannot be named across all namespaces (-A); give -n NAMESPACE instead")
	case named && f.selector != "":
		return false, errors.New("--selector applies to lists: give a TYPE without names")
	case f.chunkSize < 0:
		return false, fmt.Errorf("--chunk-size %d: must be 0 or more", f.chunkSize)
	}
	if f.selector != "" {
		if _, err := labels.Parse(f.selector); err != nil {
			return false, fmt.Errorf("--selector %q: %w", f.selector, err)
		}
	}
	return named, nil
}

// selection is what the arguments and flags selected.
type selection struct {
	// Objects are the objects read, in argument order for named objects and
	// in server order for lists; every one carries its managedFields.
	Objects []*unstructured.Unstructured
	// Missing are stubs (kind, namespace and name) of named objects that
	// could not be read; Errs has one *ownership.ObjectError for each.
	Missing []*unstructured.Unstructured
	Errs    []error
	// ListErr is why some list failed (several types: the others were still
	// listed); nil when every list succeeded.
	ListErr error
	// Named says the arguments named objects; otherwise they were listed.
	Named bool

	// named are the named objects in argument order, read or stubs.
	named []*unstructured.Unstructured

	lists []*meta.RESTMapping
	// listed counts the objects each of lists yielded.
	listed        map[*meta.RESTMapping]int
	namespace     string
	allNamespaces bool
	selector      string
}

// selectObjects reads the objects that args and the flags select through
// cli-runtime's resource builder: TYPE, TYPE NAME..., TYPE/NAME..., several
// types as TYPE1,TYPE2, with -n, -A and -l, lists in chunks of --chunk-size.
// A named object that cannot be read is recorded and the others are still
// read; an error is returned for what stops the whole selection (an unknown
// type, no cluster, a list that failed with nothing read), and a list that
// failed while others were read is recorded in ListErr.
func (f *objectFlags) selectObjects(cluster *clusterAccess, args []string) (*selection, error) {
	named, err := f.check(args)
	if err != nil {
		return nil, withExitCode(exitUsage, err)
	}
	r, ns, err := f.result(cluster, args)
	if err != nil {
		return nil, err
	}
	s := &selection{Named: named, namespace: ns, allNamespaces: f.allNamespaces, selector: f.selector,
		listed: map[*meta.RESTMapping]int{}}
	err = r.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		if info.Object == nil {
			// A named object: read it here, so that a failure names it.
			if err := info.Get(); err != nil {
				stub := stubOf(info)
				s.named = append(s.named, stub)
				s.Missing = append(s.Missing, stub)
				s.Errs = append(s.Errs, &ownership.ObjectError{Object: ownership.RefOf(stub), Op: "reading", Err: err})
				return nil
			}
			if err := s.add(info.Object); err != nil {
				return err
			}
			s.named = append(s.named, s.Objects[len(s.Objects)-1])
			return nil
		}
		if meta.IsListType(info.Object) {
			if !slices.Contains(s.lists, info.Mapping) {
				s.lists = append(s.lists, info.Mapping)
			}
			return meta.EachListItem(info.Object, func(item runtime.Object) error {
				s.listed[info.Mapping]++
				return s.add(item)
			})
		}
		return s.add(info.Object)
	})
	if err != nil && len(s.Objects) == 0 && len(s.Errs) == 0 {
		return nil, err
	}
	s.ListErr = err
	return s, nil
}

// result builds the cli-runtime resource builder's result for args and
// the flags, after check, and returns it with the namespace it reads from
// (unless -A). Nothing has been read yet: visiting the result lists the
// objects, one --chunk-size page per visit.
func (f *objectFlags) result(cluster *clusterAccess, args []string) (*resource.Result, string, error) {
	b, err := cluster.builder()
	if err != nil {
		return nil, "", err
	}
	ns, err := cluster.namespace()
	if err != nil {
		return nil, "", err
	}
	r := b.NamespaceParam(ns).DefaultNamespace().AllNamespaces(f.allNamespaces).
		LabelSelectorParam(f.selector).
		ResourceTypeOrNameArgs(true, args...).
		RequestChunksOf(f.chunkSize).
		RequireObject(false).
		ContinueOnError().
		Do()
	if err := r.Err(); err != nil {
		return nil, "", err
	}
	return r, ns, nil
}

// add records one object read from the server.
func (s *selection) add(obj runtime.Object) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("read a %T, want an unstructured object", obj)
	}
	s.Objects = append(s.Objects, u)
	return nil
}

// stubOf returns an object carrying only the kind, namespace and name of a
// named object.
func stubOf(info *resource.Info) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(info.Mapping.GroupVersionKind)
	u.SetNamespace(info.Namespace)
	u.SetName(info.Name)
	return u
}

// emptyLists says, one line each, which of several listed types found no
// object (owners widgets,sprockets): the objects of the others would
// otherwise hide that one found nothing. Empty when every type found some,
// or when nothing was found at all (describeEmpty says that).
func (s *selection) emptyLists() []string {
	if len(s.Objects) == 0 {
		return nil
	}
	var out []string
	for _, m := range s.lists {
		if s.listed[m] == 0 {
			out = append(out, s.describeEmptyOf([]*meta.RESTMapping{m}))
		}
	}
	return out
}

// describeEmpty names where objects were looked for, for the message a list
// that found nothing prints on stderr.
func (s *selection) describeEmpty() string { return s.describeEmptyOf(s.lists) }

// describeEmptyOf is describeEmpty for some of the listed types.
func (s *selection) describeEmptyOf(lists []*meta.RESTMapping) string {
	var what []string
	namespaced := false
	for _, m := range lists {
		what = append(what, m.Resource.GroupResource().String())
		namespaced = namespaced || m.Scope.Name() == meta.RESTScopeNameNamespace
	}
	if len(what) == 0 {
		what = []string{"objects"}
	}
	where := ""
	switch {
	case !namespaced:
	case s.allNamespaces:
		where = " in any namespace"
	default:
		where = " in namespace " + s.namespace
	}
	if s.selector != "" {
		where += " matching " + s.selector
	}
	return fmt.Sprintf("no %s found%s", strings.Join(what, " or "), where)
}
