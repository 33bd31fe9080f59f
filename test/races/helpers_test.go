package races

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// planner is the field manager of the controller that creates plans. Both
// racing reconciles are that controller, so they apply as the same manager.
const planner = "planner"

// reconciler is one of the two racing reconciles, in its own process in
// spirit: its own client and Applier, so that nothing in this process
// serialises it with the other one.
type reconciler struct {
	client    client.Client
	requests  *apiserver.Requests
	responses *apiserver.Responses
	applier   *ssa.Applier
}

func newReconciler() *reconciler {
	cfg, responses := apiserver.WithResponses(env.Config)
	c, requests, err := env.CountingClientFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	a, err := widgets.NewApplier(c)
	Expect(err).NotTo(HaveOccurred())
	return &reconciler{client: c, requests: requests, responses: responses, applier: a}
}

func (r *reconciler) reset() {
	r.requests.Reset()
	r.responses.Reset()
}

// observe reads the object, as a reconcile does before deciding.
func (r *reconciler) observe(ctx context.Context, key client.ObjectKey) (*v1alpha1.Widget, error) {
	obj := &v1alpha1.Widget{}
	return obj, r.client.Get(ctx, key, obj)
}

// decide queues the reconcile's plan decision on observed and flushes it.
// Guarded sends the observed resourceVersion; without it the apply is blind.
func (r *reconciler) decide(ctx context.Context, observed *v1alpha1.Widget, planID string, guarded bool) error {
	var opts []ssa.ApplyOption
	if guarded {
		opts = append(opts, ssa.Guarded)
	}
	b := batcher.New(r.applier)
	if err := batcher.Status(b, observed, planner, widgets.PlanFor(planID, "provision", "configure"), opts...); err != nil {
		return err
	}
	if err := b.Flush(ctx); err != nil {
		return err
	}
	if n := len(b.Pending()); n != 0 {
		return errUnflushed
	}
	return nil
}

// errUnflushed says a Flush returned no error yet left its entry queued.
var errUnflushed = errors.New("the entry is still queued after a Flush without error")

// planWatch records, from a watch on a namespace's Widgets, every plan each
// object ever showed: a plan overwritten between two reads is still seen.
type planWatch struct {
	mu     sync.Mutex
	plans  map[string][]string // object name -> plan IDs, in the order they appeared
	lastRV map[string]string   // object name -> resourceVersion of the last event
}

// watchPlans starts a watch on ns and stops and joins it when the spec ends.
// The watch outlives the node that starts it (a BeforeEach's context ends
// with the BeforeEach), so it has a context of its own.
func watchPlans(ns string) *planWatch {
	GinkgoHelper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	w, err := wc.Watch(ctx, &v1alpha1.WidgetList{}, client.InNamespace(ns))
	Expect(err).NotTo(HaveOccurred())
	pw := &planWatch{plans: map[string][]string{}, lastRV: map[string]string{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(*v1alpha1.Widget); ok {
				pw.record(obj)
			}
		}
	}()
	DeferCleanup(func() {
		w.Stop()
		<-done
	})
	return pw
}

func (pw *planWatch) record(obj *v1alpha1.Widget) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.lastRV[obj.Name] = obj.ResourceVersion
	if obj.Status.Plan == nil {
		return
	}
	seen := pw.plans[obj.Name]
	if len(seen) == 0 || seen[len(seen)-1] != obj.Status.Plan.ID {
		pw.plans[obj.Name] = append(seen, obj.Status.Plan.ID)
	}
}

// plansOf waits until the watch has caught up with the object's current
// state, then returns every plan it showed, and the current object.
func (pw *planWatch) plansOf(ctx context.Context, key client.ObjectKey) ([]string, *v1alpha1.Widget) {
	GinkgoHelper()
	obj := &v1alpha1.Widget{}
	Expect(env.Client.Get(ctx, key, obj)).To(Succeed())
	Eventually(func() string {
		pw.mu.Lock()
		defer pw.mu.Unlock()
		return pw.lastRV[key.Name]
	}).WithTimeout(10*time.Second).Should(Equal(obj.ResourceVersion), "the watch sees the last write")
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return slices.Clone(pw.plans[key.Name]), obj
}

func createWidget(ctx context.Context, ns, name string) client.ObjectKey {
	GinkgoHelper()
	w, err := widgets.Create(ctx, env.Client, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return client.ObjectKeyFromObject(w)
}

// raceOutcome is what one concurrent race of the two reconciles did.
type raceOutcome struct {
	// bothSawNone is true when both reconciles observed no plan: the race
	// really happened.
	bothSawNone bool
	// plans are the plan IDs the object showed, in order.
	plans []string
	final *v1alpha1.Widget
}

// race runs both reconciles of one new object at once: two goroutines,
// released together by closing a channel, each observing and then deciding.
func race(ctx context.Context, pw *planWatch, rs [2]*reconciler, ns, name string, guarded bool) raceOutcome {
	GinkgoHelper()
	key := createWidget(ctx, ns, name)
	for _, r := range rs {
		r.reset()
	}
	release := make(chan struct{})
	var (
		wg       sync.WaitGroup
		sawNone  [2]bool
		errs     [2]error
		planIDs  = [2]string{name + "-reconcile-1", name + "-reconcile-2"}
		observed [2]*v1alpha1.Widget
	)
	for i, r := range rs {
		wg.Go(func() {
			<-release
			if observed[i], errs[i] = r.observe(ctx, key); errs[i] != nil {
				return
			}
			sawNone[i] = observed[i].Status.Plan == nil
			errs[i] = r.decide(ctx, observed[i], planIDs[i], guarded)
		})
	}
	close(release)
	wg.Wait()
	Expect(errors.Join(errs[:]...)).NotTo(HaveOccurred())
	plans, final := pw.plansOf(ctx, key)
	return raceOutcome{bothSawNone: sawNone[0] && sawNone[1], plans: plans, final: final}
}
