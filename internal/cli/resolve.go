package cli

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// resolveResource maps a resource argument to its kind and REST resource the
// way kubectl does: first as a resource (plural, singular or short name,
// optionally qualified as resource.version.group or resource.group), then as a
// kind (Widget, Widget.v1alpha1.demo.statusapply.io).
func resolveResource(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	fullySpecified, groupResource := schema.ParseResourceArg(arg)
	var gvk schema.GroupVersionKind
	if fullySpecified != nil {
		if k, err := mapper.KindFor(*fullySpecified); err == nil {
			gvk = k
		}
	}
	var resourceErr error
	if gvk.Empty() {
		gvk, resourceErr = mapper.KindFor(groupResource.WithVersion(""))
	}
	if resourceErr == nil && !gvk.Empty() {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("resource type %q: %w", arg, err)
		}
		return m, nil
	}
	fullKind, groupKind := schema.ParseKindArg(arg)
	if fullKind != nil {
		if m, err := mapper.RESTMapping(fullKind.GroupKind(), fullKind.Version); err == nil {
			return m, nil
		}
	}
	if m, err := mapper.RESTMapping(groupKind); err == nil {
		return m, nil
	}
	if resourceErr == nil || meta.IsNoMatchError(resourceErr) {
		return nil, fmt.Errorf("the server does not have a resource type %q", arg)
	}
	return nil, fmt.Errorf("resolving resource type %q: %w", arg, resourceErr)
}

// scope says where to look for objects of a namespaced type.
type scope struct {
	// Namespace is used unless AllNamespaces is set.
	Namespace string
	// AllNamespaces lists across namespaces (-A).
	AllNamespaces bool
	// Selector filters lists (-l); nil or empty selects everything.
	Selector labels.Selector
}

// validate rejects -A with object names, which kubectl rejects too: a name
// is only unique within a namespace.
func (s scope) validate(t target) error {
	if s.AllNamespaces && len(t.Names) > 0 {
		return errors.New("objects cannot be named across all namespaces (-A); give -n NAMESPACE instead")
	}
	return nil
}

// stub returns an unstructured object carrying only the kind, namespace and
// name, for reading or migrating the named object.
func stub(m *meta.RESTMapping, s scope, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(m.GroupVersionKind)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		u.SetNamespace(s.Namespace)
	}
	u.SetName(name)
	return u
}

// list reads every object of the mapping's kind in the scope, with
// managedFields, from the API server.
func list(ctx context.Context, c client.Client, m *meta.RESTMapping, s scope) ([]*unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(m.GroupVersionKind.GroupVersion().WithKind(m.GroupVersionKind.Kind + "List"))
	var opts []client.ListOption
	if m.Scope.Name() == meta.RESTScopeNameNamespace && !s.AllNamespaces {
		opts = append(opts, client.InNamespace(s.Namespace))
	}
	if s.Selector != nil && !s.Selector.Empty() {
		opts = append(opts, client.MatchingLabelsSelector{Selector: s.Selector})
	}
	if err := c.List(ctx, l, opts...); err != nil {
		return nil, fmt.Errorf("listing %s: %w", m.Resource.GroupResource(), err)
	}
	out := make([]*unstructured.Unstructured, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out, nil
}

// describe names where objects were looked for, for "no objects" messages.
func (s scope) describe(m *meta.RESTMapping) string {
	where := ""
	switch {
	case m.Scope.Name() != meta.RESTScopeNameNamespace:
	case s.AllNamespaces:
		where = " in any namespace"
	default:
		where = " in namespace " + s.Namespace
	}
	if s.Selector != nil && !s.Selector.Empty() {
		where += " matching " + s.Selector.String()
	}
	return fmt.Sprintf("no %s found%s", m.Resource.GroupResource(), where)
}
