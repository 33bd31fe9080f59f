package faults

import (
	"context"
	"strings"
	"sync"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// Taking fields back from before-first-apply rewrites managedFields, which
// only a patch of the object itself can do: a writer allowed to patch its
// status alone goes on as before, and says why.
var _ = Describe("a least-privilege status writer whose managedFields were lost", func() {
	const user = "status-writer-recovering"

	It("writes as before when it may not patch the object, and logs that it could not take its fields back", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		w := newStatusWriter(ctx, ns, user)
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		Eventually(func(ctx context.Context) error {
			return w.client.Get(ctx, key, &v1alpha1.Widget{})
		}).WithContext(ctx).Should(Succeed())
		setReady := func(ctx context.Context, b *batcher.Batch) error {
			if err := batcher.Status(b, getWidget(ctx, key), "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up")); err != nil {
				return err
			}
			return b.Flush(ctx)
		}
		Expect(setReady(ctx, batcher.New(newApplier(env.Client)))).To(Succeed())
		Expect(widgets.ClearManagedFields(ctx, env.Client, key)).To(Succeed())

		var (
			mu    sync.Mutex
			lines []string
		)
		ctx = log.IntoContext(ctx, funcr.New(func(_, args string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, args)
		}, funcr.Options{}))
		w.reset()
		Expect(setReady(ctx, batcher.New(w.applier))).To(Succeed())
		Expect(w.responses.Succeeded("apply")).To(Equal(1), "%s", w.responses)
		Expect(w.responses.Count("patch", 403)).To(Equal(1), "the managedFields rewrite was refused: %s", w.responses)

		got := getWidget(ctx, key)
		Expect(widgets.Conditions(got)).To(Equal(widgets.CS("Ready", "True")))
		Expect(ownsCondition(got, "readiness", "Ready")).To(BeTrue())
		o, err := ownership.Inspect(got)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.ConditionTypes()[ownership.BeforeFirstApplyManager]).To(Equal([]string{"Ready"}), "shared, as before")
		mu.Lock()
		logged := strings.Join(lines, "\n")
		mu.Unlock()
		Expect(logged).To(ContainSubstring("patching the object is forbidden"))

		By("after another loss, a change conflicts with before-first-apply alone: it cannot be taken back, the policy fails it")
		Expect(widgets.ClearManagedFields(ctx, env.Client, key)).To(Succeed())
		w.reset()
		b := batcher.New(w.applier)
		Expect(batcher.Status(b, getWidget(ctx, key), "readiness", widgets.SetCondition("Ready", metav1.ConditionFalse, "Down"))).To(Succeed())
		err = b.Flush(ctx)
		cerr, ok := conflicts.FromError(err, "readiness", ownership.ObjectRef{})
		Expect(ok).To(BeTrue(), "a conflict: %v", err)
		Expect(cerr.Conflicts).NotTo(BeEmpty())
		for _, c := range cerr.Conflicts {
			Expect(c.Manager).To(Equal(ownership.BeforeFirstApplyManager))
		}
		Expect(w.responses.Count("apply", 409)).To(Equal(2), "the first apply and the one after the attribution: %s", w.responses)
		Expect(w.responses.Succeeded("apply")).To(Equal(1), "the apply claiming nothing: %s", w.responses)
		Expect(w.responses.Count("patch", 403)).To(Equal(1), "%s", w.responses)
		got = getWidget(ctx, key)
		Expect(widgets.Conditions(got)).To(Equal(widgets.CS("Ready", "True")))
		o, err = ownership.Inspect(got)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.ConditionTypes()[ownership.BeforeFirstApplyManager]).To(Equal([]string{"Ready"}), "the attribution is stored")
		Expect(b.Pending()).To(HaveLen(1))

		By("after another loss, a removal cannot take Ready back either: refused, naming before-first-apply, Ready stays")
		Expect(widgets.ClearManagedFields(ctx, env.Client, key)).To(Succeed())
		w.reset()
		b = batcher.New(w.applier)
		Expect(batcher.RemoveCondition(b, getWidget(ctx, key), "readiness", "Ready")).To(Succeed())
		err = b.Flush(ctx)
		Expect(err).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(err.Error()).To(ContainSubstring(ownership.BeforeFirstApplyManager))
		Expect(w.responses.Succeeded("apply")).To(Equal(1), "the apply claiming nothing: %s", w.responses)
		Expect(w.responses.Count("patch", 403)).To(Equal(1), "%s", w.responses)
		got = getWidget(ctx, key)
		Expect(widgets.Conditions(got)).To(Equal(widgets.CS("Ready", "True")))
		o, err = ownership.Inspect(got)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.ConditionTypes()[ownership.BeforeFirstApplyManager]).To(Equal([]string{"Ready"}), "the attribution is stored")
		Expect(b.Pending()).To(HaveLen(1))
	})
})
