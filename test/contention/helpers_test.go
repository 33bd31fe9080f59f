package contention

import (
	"context"
	"errors"
	"fmt"
	"sync"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

const (
	// writerCount is how many status writers share the object.
	writerCount = 4
	// changes is how many changes each writer makes.
	changes = 10
	// lockedAttempts bounds the optimistic-lock control's retries of one change.
	lockedAttempts = 50
)

// writer is one status writer, a separate process in spirit: its own client,
// field manager and Applier. It owns one condition type and one key of
// status.attributes, and nothing else.
type writer struct {
	manager   string
	condType  string
	attrKey   string
	client    client.Client
	requests  *apiserver.Requests
	responses *apiserver.Responses
	applier   *ssa.Applier
}

// newWriters returns writerCount writers, writer i talking to cfgs[i%len(cfgs)],
// so that writers can be spread over several API servers.
func newWriters(cfgs ...*rest.Config) []*writer {
	var out []*writer
	for i := range writerCount {
		cfg, responses := apiserver.WithResponses(cfgs[i%len(cfgs)])
		c, requests, err := env.CountingClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		a, err := widgets.NewApplier(c)
		Expect(err).NotTo(HaveOccurred())
		out = append(out, &writer{
			manager:   fmt.Sprintf("writer-%d", i),
			condType:  fmt.Sprintf("Writer%dSynced", i),
			attrKey:   fmt.Sprintf("writer-%d", i),
			client:    c,
			requests:  requests,
			responses: responses,
			applier:   a,
		})
	}
	return out
}

// resetCounters forgets what the writers' set-up (discovery, creating the
// object) sent, so that counts are about the changes.
func resetCounters(ws []*writer) {
	for _, w := range ws {
		w.requests.Reset()
		w.responses.Reset()
	}
}

// condition is what a writer states in change n. The status flips every
// change and the reason names the change, so that any older value is told
// apart from the latest one.
func (w *writer) condition(n int) metav1.Condition {
	st := metav1.ConditionTrue
	if n%2 == 1 {
		st = metav1.ConditionFalse
	}
	return metav1.Condition{Type: w.condType, Status: st, Reason: fmt.Sprintf("Change%d", n), Message: "set by " + w.manager}
}

func (w *writer) attribute(n int) string { return fmt.Sprintf("change-%d", n) }

// holds reports whether obj carries the writer's intent of change n.
func (w *writer) holds(obj *v1alpha1.Widget, n int) bool {
	want := w.condition(n)
	c := meta.FindStatusCondition(obj.Status.Conditions, w.condType)
	return c != nil && c.Status == want.Status && c.Reason == want.Reason && obj.Status.Attributes[w.attrKey] == w.attribute(n)
}

// observe is the writer's observation: a GET, as a reconcile reads its object.
func (w *writer) observe(ctx context.Context, key client.ObjectKey) (*v1alpha1.Widget, error) {
	obj := &v1alpha1.Widget{}
	return obj, w.client.Get(ctx, key, obj)
}

// changeFunc makes change n of w from the observation obj.
type changeFunc func(ctx context.Context, w *writer, obj *v1alpha1.Widget, n int) error

// applyChange is statusapply's way: queue the change's mutators (one per
// field, as separate reconcile steps would) in a batch and flush it, which
// sends them as one apply.
func applyChange(ctx context.Context, w *writer, obj *v1alpha1.Widget, n int) error {
	b := batcher.New(w.applier)
	if err := batcher.Status(b, obj, w.manager, widgets.PutCondition(w.condition(n))); err != nil {
		return err
	}
	if err := batcher.Status(b, obj, w.manager, func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		widgets.Status(ac).WithAttributes(map[string]string{w.attrKey: w.attribute(n)})
		return nil
	}); err != nil {
		return err
	}
	return b.Flush(ctx)
}

// edit is the merge-patch writer's change: set its condition and its key on
// its copy of the object.
func (w *writer) edit(obj *v1alpha1.Widget, n int) {
	meta.SetStatusCondition(&obj.Status.Conditions, w.condition(n))
	if obj.Status.Attributes == nil {
		obj.Status.Attributes = map[string]string{}
	}
	obj.Status.Attributes[w.attrKey] = w.attribute(n)
}

// mergePatchChange is the unsafe control: a JSON merge patch computed from the
// writer's snapshot. The conditions list is sent whole, as the snapshot had it.
func mergePatchChange(ctx context.Context, w *writer, obj *v1alpha1.Widget, n int) error {
	base := obj.DeepCopy()
	w.edit(obj, n)
	return w.client.Status().Patch(ctx, obj, client.MergeFrom(base), client.FieldOwner(w.manager))
}

// lockedMergePatchChange is the safe-but-costly control: the merge patch
// carries the snapshot's resourceVersion; on a 409 the writer reads the object
// again and redoes its change, a bounded number of times.
func lockedMergePatchChange(ctx context.Context, w *writer, obj *v1alpha1.Widget, n int) error {
	var err error
	for range lockedAttempts {
		base := obj.DeepCopy()
		w.edit(obj, n)
		err = w.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
			client.FieldOwner(w.manager))
		if !apierrors.IsConflict(err) {
			return err
		}
		if obj, err = w.observe(ctx, client.ObjectKeyFromObject(obj)); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: change %d still conflicted after %d attempts: %w", w.manager, n, lockedAttempts, err)
}

// inParallel runs f for every writer in its own goroutine and waits for all of
// them; it returns their errors joined.
func inParallel(ws []*writer, f func(i int, w *writer) error) error {
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() { errs[i] = f(i, w) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runInRounds makes every writer's changes 1..changes in rounds. In each round
// all writers observe the object before any of them writes (as reconciles
// running at the same time do), then all write at once. After each round it
// reads the object through check and counts the writers whose change of that
// round is not on it: updates lost.
func runInRounds(ctx context.Context, ws []*writer, key client.ObjectKey, check client.Client, change changeFunc) (lost int, err error) {
	for n := 1; n <= changes; n++ {
		snapshots := make([]*v1alpha1.Widget, len(ws))
		if err := inParallel(ws, func(i int, w *writer) (err error) {
			snapshots[i], err = w.observe(ctx, key)
			return err
		}); err != nil {
			return lost, err
		}
		if err := inParallel(ws, func(i int, w *writer) error { return change(ctx, w, snapshots[i], n) }); err != nil {
			return lost, err
		}
		obj := &v1alpha1.Widget{}
		if err := check.Get(ctx, key, obj); err != nil {
			return lost, err
		}
		for _, w := range ws {
			if !w.holds(obj, n) {
				lost++
			}
		}
	}
	return lost, nil
}

// runFreely has every writer make its changes in its own goroutine, each
// change a GET and a write, with no coordination between writers.
func runFreely(ctx context.Context, ws []*writer, key client.ObjectKey, change changeFunc) error {
	return inParallel(ws, func(_ int, w *writer) error {
		for n := 1; n <= changes; n++ {
			obj, err := w.observe(ctx, key)
			if err != nil {
				return err
			}
			if err := change(ctx, w, obj, n); err != nil {
				return fmt.Errorf("%s change %d: %w", w.manager, n, err)
			}
		}
		return nil
	})
}

// createWidget creates the shared object through c and returns its key.
func createWidget(ctx context.Context, c client.Client, ns, name string) client.ObjectKey {
	w, err := widgets.Create(ctx, c, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return client.ObjectKeyFromObject(w)
}

// ownedBy returns the status fields manager's Apply entry owns on obj, or nil.
func ownedBy(obj *v1alpha1.Widget, manager string) *fieldpath.Set {
	owners, err := ownership.Inspect(obj)
	Expect(err).NotTo(HaveOccurred())
	for _, e := range owners.Managers(manager) {
		if e.Subresource == ownership.StatusSubresource && e.Operation == metav1.ManagedFieldsOperationApply {
			return e.Fields
		}
	}
	return nil
}

// expectStatusapplyOutcome checks what statusapply promises after every writer
// made its changes: each writer's last intent is on the object and owned by
// it alone, and no request was refused or repeated.
func expectStatusapplyOutcome(ctx context.Context, ws []*writer, key client.ObjectKey) {
	obj := &v1alpha1.Widget{}
	Expect(env.Client.Get(ctx, key, obj)).To(Succeed())
	for _, w := range ws {
		Expect(w.holds(obj, changes)).To(BeTrue(), "%s's last change is on the object: %+v", w.manager, obj.Status)
		owned := ownedBy(obj, w.manager)
		Expect(owned).NotTo(BeNil(), "%s has an apply entry", w.manager)
		for _, other := range ws {
			cond := fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", other.condType))
			attr := fieldpath.MakePathOrDie("status", "attributes", other.attrKey)
			Expect(owned.Has(cond)).To(Equal(other == w), "%s owns %s", w.manager, cond)
			Expect(owned.Has(attr)).To(Equal(other == w), "%s owns %s", w.manager, attr)
		}
		Expect(w.responses.Count("apply", 409)).To(BeZero(), "%s: no field-manager conflict and no stale write: %s", w.manager, w.responses)
		Expect(w.responses.Succeeded("apply")).To(Equal(changes), "%s: one apply per change", w.manager)
		Expect(w.requests.Count("apply")).To(Equal(changes), "%s: no retried apply: %s", w.manager, w.requests)
		Expect(w.requests.Count("get")).To(Equal(changes), "%s: the observations only, no re-read: %s", w.manager, w.requests)
	}
}
