package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/ownership"
)

// Progress is reported once per object by MigrateAll and MigrateList.
type Progress struct {
	// Done counts the objects handled so far, this one included.
	Done int
	// Total is the number of objects in the run.
	Total int
	// Object names the object just handled.
	Object ownership.ObjectRef
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
	return MigrateAllConcurrently(ctx, m, objs, 1)
}

// MigrateAllConcurrently is MigrateAll with up to workers objects migrated
// at the same time (a Migrator is safe for concurrent use); workers below 2
// migrate one object after the other, in the calling goroutine.
//
// The report is the same as MigrateAll's, results and errors in input
// order. So is the progress callback: it is called from the calling
// goroutine, never concurrently, once per object and in input order, with
// Done counting the objects reported so far. An object that finishes before
// an earlier one is reported right after it; a slow callback delays the
// reports, not the workers.
func MigrateAllConcurrently[T client.Object](ctx context.Context, m *Migrator, objs []T, workers int) *Report {
	r := &Report{}
	report := func(i int, res *Result, err error) {
		p := Progress{Done: i + 1, Total: len(objs), Result: res, Err: err}
		if err != nil {
			r.Errors = append(r.Errors, err)
			var oe *ownership.ObjectError
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
	if workers < 2 || len(objs) < 2 {
		for i, obj := range objs {
			res, err := migrateOne(ctx, m, obj)
			report(i, res, err)
		}
		return r
	}

	// Workers take indexes in input order and fill their slot; the calling
	// goroutine reports the slots in input order as they are done.
	type outcome struct {
		res  *Result
		err  error
		done chan struct{}
	}
	outcomes := make([]outcome, len(objs))
	for i := range outcomes {
		outcomes[i].done = make(chan struct{})
	}
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range objs {
			next <- i
		}
	}()
	var wg sync.WaitGroup
	for range min(workers, len(objs)) {
		wg.Go(func() {
			for i := range next {
				outcomes[i].res, outcomes[i].err = migrateOne(ctx, m, objs[i])
				close(outcomes[i].done)
			}
		})
	}
	for i := range outcomes {
		<-outcomes[i].done
		report(i, outcomes[i].res, outcomes[i].err)
	}
	wg.Wait()
	return r
}

// migrateOne migrates obj, or records ctx's error once ctx has ended.
func migrateOne(ctx context.Context, m *Migrator, obj client.Object) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, &ownership.ObjectError{Object: ownership.RefOf(obj), Op: "migrating", Err: err}
	}
	return m.Migrate(ctx, obj)
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
