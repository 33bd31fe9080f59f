package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// legacyTransition is the lastTransitionTime the legacy writer of the policy
// specs gives Ready: a fixed time, not now.
var legacyTransition = metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))

// events records the reasons of the events it is given.
type events struct {
	mu      sync.Mutex
	reasons []string
	notes   []string
}

func (e *events) Eventf(_ runtime.Object, _ runtime.Object, _, reason, _, note string, args ...interface{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reasons = append(e.reasons, reason)
	e.notes = append(e.notes, fmt.Sprintf(note, args...))
}

var _ = Describe("conflict policies at Flush", func() {
	var (
		ns       string
		key      client.ObjectKey
		recorder *events
		applier  *ssa.Applier
		requests *apiserver.Requests
		results  []ssa.Result
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		recorder = &events{}
		applier, _, requests = newApplier(ssa.WithEventRecorder(recorder))
		results = nil
		w := createWidget(ctx, ns, "w1")
		key = client.ObjectKeyFromObject(w)

		// A legacy writer owns Ready through a merge patch; a control writer
		// owns its own condition and phase through apply. Ready's
		// lastTransitionTime is a fixed time long past, so the writer's Ready,
		// of another status and so stamped now, always changes it: the fields
		// contested do not depend on whether the two writes fall in one second.
		legacy := getWidget(ctx, key)
		base := legacy.DeepCopy()
		meta.SetStatusCondition(&legacy.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Legacy",
			LastTransitionTime: legacyTransition})
		Expect(env.Client.Status().Patch(ctx, legacy, client.MergeFrom(base), client.FieldOwner("legacy"))).To(Succeed())
		b := batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), "control", widgets.SetCondition("Control", metav1.ConditionTrue, "Mine"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
	})

	// flushWriter queues the writer's Ready=True and its own Advice condition.
	flushWriter := func(ctx context.Context, opts ...ssa.ApplyOption) (*batcher.Batch, error) {
		b := batcher.New(applier, batcher.WithResultHook(func(_ ssa.Target, r ssa.Result, _ error) { results = append(results, r) }))
		w := getWidget(ctx, key)
		Expect(batcher.Status(b, w, "writer", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"), opts...)).To(Succeed())
		Expect(batcher.Status(b, w, "writer", widgets.SetCondition("Advice", metav1.ConditionTrue, "Advised"))).To(Succeed())
		return b, b.Flush(ctx)
	}

	controlUntouched := func(ctx context.Context) {
		got := getWidget(ctx, key)
		Expect(meta.FindStatusCondition(got.Status.Conditions, "Control")).To(HaveField("Status", metav1.ConditionTrue))
		owners, err := ownership.Inspect(got)
		Expect(err).NotTo(HaveOccurred())
		Expect(owners.ConditionOwners("Control")).To(ConsistOf(HaveField("Manager", "control")))
	}

	It("fails by default with a typed error naming the owner, keeping the entry queued", func(ctx context.Context) {
		b, err := flushWriter(ctx)
		var cerr *conflicts.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "%v", err)
		Expect(apierrors.IsConflict(err)).To(BeTrue())
		var contested []string
		for _, c := range cerr.Conflicts {
			Expect(c.Owner()).To(Equal("legacy (Update, subresource status)"), "%s", c)
			Expect(c.ConditionType).To(Equal("Ready"), "%s", c)
			contested = append(contested, c.Path.String())
		}
		// Everything legacy set on Ready but its type, which is the key: the
		// writer's message and reason differ, its status too, and its
		// lastTransitionTime is now, not the fixed time legacy wrote.
		Expect(contested).To(ConsistOf(
			`.status.conditions[type="Ready"].lastTransitionTime`,
			`.status.conditions[type="Ready"].message`,
			`.status.conditions[type="Ready"].reason`,
			`.status.conditions[type="Ready"].status`,
		))
		Expect(err.Error()).To(ContainSubstring(`manager writer cannot change 4 fields`))
		Expect(err.Error()).To(ContainSubstring(`.status.conditions[type="Ready"].status: owned by legacy (Update, subresource status)`))
		Expect(b.Pending()).To(HaveLen(1))
		Expect(recorder.reasons).To(Equal([]string{conflicts.ReasonFieldConflict}))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKeyWithValue("Ready", metav1.ConditionFalse))
		controlUntouched(ctx)
	})

	It("yields: the rest lands, the contested condition stays its owner's, and the yield is reported", func(ctx context.Context) {
		requests.Reset()
		b, err := flushWriter(ctx, ssa.OnConflict(conflicts.Yield()))
		Expect(err).NotTo(HaveOccurred())
		Expect(requests.Count("apply")).To(Equal(1), "the conflict was predicted from managedFields: no refused request")
		Expect(b.Pending()).To(BeEmpty())
		got := getWidget(ctx, key)
		Expect(widgets.Conditions(got)).To(HaveKeyWithValue("Advice", metav1.ConditionTrue))
		Expect(widgets.Conditions(got)).To(HaveKeyWithValue("Ready", metav1.ConditionFalse), "the owner's value stays")
		owners, err := ownership.Inspect(got)
		Expect(err).NotTo(HaveOccurred())
		Expect(owners.ConditionOwners("Ready")).To(ConsistOf(HaveField("Manager", "legacy")))
		Expect(results).To(ContainElement(HaveField("Yielded", ContainElement(HaveField("ConditionType", "Ready")))))
		Expect(recorder.reasons).To(Equal([]string{conflicts.ReasonFieldYielded}))
		controlUntouched(ctx)
	})

	It("yields after the API server's 409 when the observed object was stale", func(ctx context.Context) {
		observed := getWidget(ctx, key)
		// After the writer observed, a legacy writer sets the condition the writer is about to set.
		late := getWidget(ctx, key)
		base := late.DeepCopy()
		meta.SetStatusCondition(&late.Status.Conditions, metav1.Condition{Type: "Late", Status: metav1.ConditionFalse, Reason: "Legacy"})
		Expect(env.Client.Status().Patch(ctx, late, client.MergeFrom(base), client.FieldOwner("late"))).To(Succeed())

		b := batcher.New(applier, batcher.WithResultHook(func(_ ssa.Target, r ssa.Result, _ error) { results = append(results, r) }))
		Expect(batcher.Status(b, observed, "writer", widgets.SetCondition("Late", metav1.ConditionTrue, "Up"), ssa.OnConflict(conflicts.Yield()))).To(Succeed())
		Expect(batcher.Status(b, observed, "writer", widgets.SetCondition("Advice", metav1.ConditionTrue, "Advised"))).To(Succeed())
		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(requests.Count("apply")).To(Equal(2), "one refused, one without the contested condition")
		Expect(results).To(ContainElement(HaveField("Yielded", ContainElement(HaveField("ConditionType", "Late")))))
		got := widgets.Conditions(getWidget(ctx, key))
		Expect(got).To(HaveKeyWithValue("Late", metav1.ConditionFalse))
		Expect(got).To(HaveKeyWithValue("Advice", metav1.ConditionTrue))
		controlUntouched(ctx)
	})

	It("takes a declared condition by force and nothing else", func(ctx context.Context) {
		_, err := flushWriter(ctx, ssa.OnConflict(conflicts.TakeDeclared(conflicts.Declaration{ConditionTypes: []string{"Ready"}})))
		Expect(err).NotTo(HaveOccurred())
		got := getWidget(ctx, key)
		Expect(widgets.Conditions(got)).To(HaveKeyWithValue("Ready", metav1.ConditionTrue))
		owners, err := ownership.Inspect(got)
		Expect(err).NotTo(HaveOccurred())
		readyStatus := fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "Ready"), "status")
		Expect(owners.Owners(readyStatus)).To(ConsistOf(HaveField("Manager", "writer")))
		Expect(results).To(ContainElement(HaveField("Taken", ContainElement(HaveField("ConditionType", "Ready")))))
		Expect(recorder.reasons).To(Equal([]string{conflicts.ReasonFieldTaken}))
		controlUntouched(ctx)
	})

	It("never forces an undeclared field, and names it", func(ctx context.Context) {
		b, err := flushWriter(ctx, ssa.OnConflict(conflicts.TakeDeclared(conflicts.Declaration{ConditionTypes: []string{"Other"}})))
		var cerr *conflicts.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "%v", err)
		Expect(cerr.Conflicts).NotTo(BeEmpty())
		for _, c := range cerr.Conflicts {
			Expect(c.ConditionType).To(Equal("Ready"))
		}
		Expect(b.Pending()).To(HaveLen(1))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKeyWithValue("Ready", metav1.ConditionFalse))
		controlUntouched(ctx)
	})

	It("uses the policy set for the manager on the Applier", func(ctx context.Context) {
		applier, _, _ = newApplier(ssa.WithConflictPolicy("writer", conflicts.Yield()))
		_, err := flushWriter(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKeyWithValue("Advice", metav1.ConditionTrue))
	})
})
