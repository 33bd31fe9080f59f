package ownership

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Progress is reported once per object by MigrateAll and MigrateList.
type Progress struct {
	// Done counts the objects handled so far, this one included.
	Done int
	// Total is the number of objects in the run.
	Total int
	// Object names the object just handled.
	Object ObjectRef
	// Result is what happened to it; nil when Err is set.
	Result *Result
	// Err is the object's error, an *ObjectError; nil on success.
	Err error
}

// Report sums up a migration of many objects: every object ends up in
// exactly one of Results and Errors.
type Report struct {
	// Results are the objects migrated (or unchanged, or planned in a dry
	// run), in input order.
	Results []*Result
	// Errors are the objects that failed, each an *ObjectError naming it, in
	// input order.
	Errors []error
}

// Changed counts the objects whose ownership changed (or would, in a dry run).
func (r *Report) Changed() int {
	n := 0
	for _, res := range r.Results {
		if res.Changed {
			n++
		}
	}
	return n
}

// Err joins the per-object errors, nil when every object succeeded. The
// joined error works with errors.Is and errors.As for each object's error.
func (r *Report) Err() error {
	return errors.Join(r.Errors...)
}

// String renders a one-line summary.
func (r *Report) String() string {
	return fmt.Sprintf("%d objects: %d changed, %d unchanged, %d failed",
		len(r.Results)+len(r.Errors), r.Changed(), len(r.Results)-r.Changed(), len(r.Errors))
}

// MigrateAll migrates each object in turn; a failing object is recorded in
// the report and the others still run. When ctx ends, the remaining objects
// are recorded with ctx's error, so every object is accounted for. The
// Migrator's progress callback sees each object as it finishes.
func MigrateAll[T client.Object](ctx context.Context, m *Migrator, objs []T) *Report {
	r := &Report{}
	for i, obj := range objs {
		var (
			res *Result
			err error
		)
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = &ObjectError{Object: RefOf(obj), Op: "migrating", Err: ctxErr}
		} else {
			res, err = m.Migrate(ctx, obj)
		}
		p := Progress{Done: i + 1, Total: len(objs), Result: res, Err: err}
		if err != nil {
			r.Errors = append(r.Errors, err)
			var oe *ObjectError
			if errors.As(err, &oe) {
				p.Object = oe.Object
			}
		} else {
			r.Results = append(r.Results, res)
			p.Object = res.Object
		}
		if m.progress != nil {
			m.progress(p)
		}
	}
	return r
}

// MigrateList migrates every item of list, such as a *WidgetList filled by
// client.List from the API server. Before touching any object it checks the
// plan against the items with CheckPlan, so a plan naming a manager or
// condition type the objects do not have fails as a whole (ErrPlanMismatch)
// instead of reporting every object unchanged; the items must therefore
// carry their managedFields (a cache that strips them makes every object
// look untracked). It fails only for that or when the list's items cannot be
// extracted; per-object errors are in the report.
//
// MigrateAll does not check: it takes objects that may be names only.
func (m *Migrator) MigrateList(ctx context.Context, list client.ObjectList) (*Report, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("migrating list: %w", err)
	}
	objs := make([]client.Object, 0, len(items))
	for i, item := range items {
		obj, ok := item.(client.Object)
		if !ok {
			return nil, fmt.Errorf("migrating list: item %d is a %T, not a client.Object", i, item)
		}
		objs = append(objs, obj)
	}
	if err := CheckPlan(m.plan, objs); err != nil {
		return nil, fmt.Errorf("migrating list: %w", err)
	}
	return MigrateAll(ctx, m, objs), nil
}
