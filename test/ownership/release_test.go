package ownership

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// releasePopulation is how many objects the population spec migrates while
// the legacy writer keeps writing.
const releasePopulation = 200

var _ = Describe("no migration leaves a live condition without an owner", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	// untrackedLegacy creates a Widget whose status was only ever merge-patched
	// (so the API server attributes it to before-first-apply when seeded):
	// conditions conds and phase Running.
	untrackedLegacy := func(ctx context.Context, name string, conds map[string]metav1.ConditionStatus) client.ObjectKey {
		GinkgoHelper()
		key := createWidget(ctx, ns, name)
		clearManagedFields(ctx, key)
		legacyWrite(ctx, key, "Running", conds)
		Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())
		return key
	}

	migrate := func(ctx context.Context, key client.ObjectKey, plan fleet.Plan) {
		GinkgoHelper()
		m, err := fleet.NewMigrator(env.Client, plan, fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())
		res, err := m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Changed).To(BeTrue())
	}

	plan := fleet.Plan{Conditions: map[string]string{"A": "wa"}, ReleaseShared: true}

	It("keeps the legacy writer's condition when an apply manager changes and removes its own", func(ctx context.Context) {
		key := untrackedLegacy(ctx, "w", widgets.CS("A", "True", "L", "True"))
		migrate(ctx, key, plan)
		expectEveryStatusFieldOwned(ctx, key)
		Expect(inspect(ctx, key).ConditionTypes()).To(Equal(map[string][]string{
			"wa": {"A"}, ownership.BeforeFirstApplyManager: {"L"},
		}), "before-first-apply keeps what nobody else owns")

		By("wa changes A, then removes it")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "wa", widgets.CS("A", "False"))).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "False", "L", "True")))
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "wa", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("L", "True")), "L outlives wa's removal of its last condition")
		Expect(getWidget(ctx, key).Status.Phase).To(Equal("Running"))
		expectEveryStatusFieldOwned(ctx, key)

		By("a second migration changes nothing")
		m, err := fleet.NewMigrator(env.Client, plan, fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())
		res, err := m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Changed).To(BeFalse())

		By("the legacy writer still changes L; migrating again hands before-first-apply's share to it, never to nobody")
		legacyWrite(ctx, key, "", widgets.CS("L", "False"))
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("L", "False")))
		_, err = m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(inspect(ctx, key).ConditionTypes()).To(HaveKeyWithValue(legacyManager, []string{"L"}))
		expectEveryStatusFieldOwned(ctx, key)

		By("wa can come back with a new A beside L")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "wa", widgets.CS("A", "True"))).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "True", "L", "False")))
	})

	It("loses the condition when the legacy fields are left unowned (the control)", func(ctx context.Context) {
		key := untrackedLegacy(ctx, "control", widgets.CS("A", "True", "L", "True"))
		migrate(ctx, key, fleet.Plan{Conditions: map[string]string{"A": "wa"}})

		// What releasing every legacy field did: before-first-apply's
		// entry is gone, L and the phase stay on the object unowned.
		var kept []metav1.ManagedFieldsEntry
		for _, mf := range getWidget(ctx, key).ManagedFields {
			if mf.Manager != ownership.BeforeFirstApplyManager {
				kept = append(kept, mf)
			}
		}
		Expect(widgets.SetManagedFields(ctx, env.Client, key, kept)).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "True", "L", "True")), "nothing is lost right after")

		Expect(widgets.ApplyConditions(ctx, env.Client, key, "wa", widgets.CS("A", "False"))).To(Succeed())
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "wa", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(BeEmpty(), "the API server deleted the whole list, unowned L included")
	})

	It("loses nothing over a population migrated while the legacy writer keeps writing", func(ctx context.Context) {
		keys := make([]client.ObjectKey, releasePopulation)
		parallel(releasePopulation, func(i int) error {
			key, err := widgets.CreateEmpty(ctx, env.Client, ns, fmt.Sprintf("p%03d", i))
			if err != nil {
				return err
			}
			keys[i] = key
			if err := widgets.ClearManagedFields(ctx, env.Client, key); err != nil {
				return err
			}
			return widgets.LegacyWrite(ctx, env.Client, key, legacyManager, "Running",
				widgets.CS("A", "True", "B", "True", "C", "True", "L", "True"))
		})

		By("the legacy writer keeps rewriting L on the first half while the migration and the apply writers run")
		stop, writes := liveLegacyWriter(keys[:releasePopulation/2])

		list := &v1alpha1.WidgetList{}
		Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		m, err := fleet.NewMigrator(env.Client,
			fleet.Plan{Conditions: map[string]string{"A": "wa", "B": "wb", "C": "wc"}, ReleaseShared: true},
			fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())
		report, err := m.MigrateList(ctx, list)
		Expect(err).NotTo(HaveOccurred())
		Expect(report.Err()).NotTo(HaveOccurred())
		Expect(report.Changed()).To(Equal(releasePopulation))

		By("each apply writer changes, then removes, its own condition on every object")
		parallel(releasePopulation, func(i int) error {
			for _, w := range []struct{ manager, condType string }{{"wa", "A"}, {"wb", "B"}, {"wc", "C"}} {
				if err := widgets.ApplyConditions(ctx, env.Client, keys[i], w.manager, widgets.CS(w.condType, "False")); err != nil {
					return err
				}
			}
			for _, manager := range []string{"wa", "wb", "wc"} {
				if err := widgets.ApplyConditions(ctx, env.Client, keys[i], manager, widgets.CS()); err != nil {
					return err
				}
			}
			return nil
		})
		Expect(stop()).To(Succeed())
		Expect(*writes).To(BeNumerically(">", 0), "the legacy writer wrote during the run")
		GinkgoWriter.Printf("legacy writes during the run: %d\n", *writes)

		lost := 0
		for _, key := range keys {
			c := conditions(ctx, key)
			if _, ok := c["L"]; !ok {
				lost++
				continue
			}
			Expect(c).To(HaveLen(1), "%s: only L is left", key)
			expectEveryStatusFieldOwned(ctx, key)
		}
		Expect(lost).To(BeZero(), "objects that lost L")
	})
})

// expectEveryStatusFieldOwned asserts that every condition and the phase on
// the object have an owner in managedFields.
func expectEveryStatusFieldOwned(ctx context.Context, key client.ObjectKey) {
	GinkgoHelper()
	w := getWidget(ctx, key)
	o := inspect(ctx, key)
	for _, c := range w.Status.Conditions {
		Expect(o.ConditionOwners(c.Type)).NotTo(BeEmpty(), "%s: condition %s has no owner", key, c.Type)
	}
	if w.Status.Phase != "" {
		Expect(o.Owners(fieldpath.MakePathOrDie("status", "phase"))).NotTo(BeEmpty(), "%s: the phase has no owner", key)
	}
}

// parallel runs fn for 0..n-1 on a few goroutines and fails the spec with
// the first error.
func parallel(n int, fn func(i int) error) {
	GinkgoHelper()
	const workers = 8
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("item %d: %w", i, err)
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	Expect(first).NotTo(HaveOccurred())
}

// liveLegacyWriter rewrites condition L on keys, round robin, as the legacy
// merge-patch writer (with an optimistic lock, as the migration guide asks of
// writers still running during a migration), until stop is called. stop
// returns the writer's first error.
func liveLegacyWriter(keys []client.ObjectKey) (stop func() error, writes *int64) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var n int64
	go func() {
		defer GinkgoRecover()
		status := []metav1.ConditionStatus{"False", "True"}
		for i := 0; ; i++ {
			if ctx.Err() != nil {
				done <- nil
				return
			}
			key := keys[i%len(keys)]
			err := widgets.LegacyWriteLocked(ctx, env.Client, key, legacyManager,
				map[string]metav1.ConditionStatus{"L": status[(i/len(keys))%2]})
			if err != nil && ctx.Err() == nil {
				done <- fmt.Errorf("legacy write to %s: %w", key, err)
				return
			}
			atomic.AddInt64(&n, 1)
		}
	}()
	return func() error { cancel(); return <-done }, &n
}
