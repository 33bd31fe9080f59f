package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/fleet"
)

// permission is one request a migration sends: a verb on a resource (or
// its subresource) in a namespace ("" for a cluster-scoped resource).
type permission struct {
	verb        string
	resource    schema.GroupResource
	subresource string
	namespace   string
}

// String spells the permission as a Role rule reads: "patch
// widgets.demo.statusapply.io/status in namespace shop".
func (p permission) String() string {
	s := p.verb + " " + p.resource.String()
	if p.subresource != "" {
		s += "/" + p.subresource
	}
	if p.namespace != "" {
		s += " in namespace " + p.namespace
	}
	return s
}

// need is a permission and what needs it.
type need struct {
	permission
	// why says what needs it, such as "objects there would change".
	why string
}

// migrationNeeds lists, in a fixed order, the permissions --apply needs on
// objs (as listed, with their managedFields, as the Migrator is given them):
// patch on the resource in each namespace where the plan changes an
// object's ownership (managedFields are only writable through the main
// resource), and patch on the status subresource (the seeding apply) and the
// resource where an object has no managedFields. The objects are rewritten
// in memory as the Migrator rewrites them, with their kind's versions
// (fleet.WithVersions), without a request, and only until one in the
// namespace changes: a permission is per namespace, and a fleet's rewrite
// costs as much as the migration's own.
func migrationNeeds(mapper meta.RESTMapper, plan fleet.Plan, versions map[schema.GroupKind]*fleet.Versions,
	objs []client.Object) ([]need, error) {
	byPerm := map[permission]*need{}
	add := func(p permission, why string) {
		if byPerm[p] == nil {
			byPerm[p] = &need{permission: p, why: why}
		}
	}
	resources := map[schema.GroupVersionKind]schema.GroupResource{}
	now := time.Now()
	for _, obj := range objs {
		if obj.GetResourceVersion() == "" {
			continue // not read: it fails on its own, whatever the permissions
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		gr, ok := resources[gvk]
		if !ok {
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return nil, fmt.Errorf("finding the resource of %s: %w", gvk.Kind, err)
			}
			gr = m.Resource.GroupResource()
			resources[gvk] = gr
		}
		ns := obj.GetNamespace()
		patch := permission{verb: "patch", resource: gr, namespace: ns}
		if len(obj.GetManagedFields()) == 0 {
			add(permission{verb: "patch", resource: gr, subresource: "status", namespace: ns}, "objects there have no managedFields")
			add(patch, "objects there would change")
			continue
		}
		if byPerm[patch] != nil {
			continue
		}
		kindPlan := plan
		if kindPlan.Versions == nil {
			kindPlan.Versions = versions[gvk.GroupKind()]
		}
		if _, changed, err := kindPlan.Rewrite(obj, now); err == nil && changed {
			add(patch, "objects there would change")
		} // an error is reported with the object by the migration
	}
	out := make([]need, 0, len(byPerm))
	for _, n := range byPerm {
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b need) int {
		return strings.Compare(a.resource.String()+"/"+a.subresource+" "+a.namespace, b.resource.String()+"/"+b.subresource+" "+b.namespace)
	})
	return out, nil
}

// missingPermissions asks the API server (SelfSubjectAccessReview) whether
// the user of c may do what needs lists, and returns those it may not. A
// permission granted in every namespace answers for each namespace, so a
// cluster-wide grant costs one review per verb and resource.
func missingPermissions(ctx context.Context, c client.Client, needs []need) ([]need, error) {
	clusterWide := map[permission]bool{}
	var missing []need
	for _, n := range needs {
		if n.namespace != "" {
			all := n.permission
			all.namespace = ""
			allowed, seen := clusterWide[all]
			if !seen {
				var err error
				if allowed, err = allowedTo(ctx, c, all); err != nil {
					return nil, err
				}
				clusterWide[all] = allowed
			}
			if allowed {
				continue
			}
		}
		allowed, err := allowedTo(ctx, c, n.permission)
		if err != nil {
			return nil, err
		}
		if !allowed {
			missing = append(missing, n)
		}
	}
	return missing, nil
}

// allowedTo asks the API server whether the user may do p.
func allowedTo(ctx context.Context, c client.Client, p permission) (bool, error) {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: p.verb, Group: p.resource.Group, Resource: p.resource.Resource, Subresource: p.subresource, Namespace: p.namespace,
		},
	}}
	if err := c.Create(ctx, review); err != nil {
		return false, fmt.Errorf("checking whether the user may %s: %w", p, err)
	}
	return review.Status.Allowed, nil
}

// permissionsMessage says which permissions are missing and why, in one
// line.
func permissionsMessage(missing []need) string {
	parts := make([]string, 0, len(missing))
	for _, n := range missing {
		parts = append(parts, fmt.Sprintf("%s (%s)", n.permission, n.why))
	}
	return "the user may not " + strings.Join(parts, "; nor ")
}
