package integration

import (
	"context"
	"errors"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// Input the API server refuses is refused by statusapply before any request,
// with ErrInvalidInput, and without holding back the rest of the batch. Each
// spec has a control that sends the same input raw through the client and
// shows the API server refusing it, so the refusal matches real behaviour.
var _ = Describe("Input the API server would refuse", func() {
	var (
		ns       string
		applier  *ssa.Applier
		requests *apiserver.Requests
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		applier, _, requests = newApplier()
	})

	// expectGoodApplied checks that the valid entry queued beside the refused
	// one was sent and landed.
	expectGoodApplied := func(ctx context.Context, good *v1alpha1.Widget) {
		GinkgoHelper()
		Expect(getWidget(ctx, client.ObjectKeyFromObject(good)).Status.Phase).To(Equal("On"))
	}

	It("refuses field managers with non-printable characters or over 128 bytes when queued", func(ctx context.Context) {
		bad := createWidget(ctx, ns, "bad")
		good := createWidget(ctx, ns, "good")
		managers := []string{"bad\tmanager", "bad\nmanager", "bad\x00manager", strings.Repeat("m", 129)}

		b := batcher.New(applier)
		requests.Reset()
		for _, m := range managers {
			err := batcher.Status(b, bad, m, widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))
			Expect(err).To(MatchError(ssa.ErrInvalidInput))
			Expect(err.Error()).To(ContainSubstring("fieldManager"))
			Expect(err.Error()).To(ContainSubstring(ns + "/bad"))
			GinkgoWriter.Printf("refused: %v\n", err)
		}
		Expect(requests.Total()).To(BeZero(), "requests: %s", requests)
		Expect(batcher.Status(b, good, "m", phase("On"))).To(Succeed())
		Expect(b.Pending()).To(ConsistOf(HaveField("Name", "good")))
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(requests.Count("apply")).To(Equal(1), "requests: %s", requests)
		Expect(requests.Total()).To(Equal(1), "requests: %s", requests)
		expectGoodApplied(ctx, good)

		By("control: the API server refuses the same managers")
		for _, m := range managers {
			ac := acv1alpha1.Widget(bad.Name, ns).WithStatus(acv1alpha1.WidgetStatus().WithPhase("On"))
			err := env.Client.Status().Apply(ctx, ac, client.FieldOwner(m))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "manager %q: %v", m, err)
			Expect(err.Error()).To(ContainSubstring("fieldManager"))
			GinkgoWriter.Printf("API server: %v\n", err)
		}
	})

	// A condition input is queued through one of the ways a condition gets
	// into an intent; raw sends the same input straight through the client.
	type conditionCase struct {
		queue func(b *batcher.Batch, w *v1alpha1.Widget) error
		raw   func(ctx context.Context, w *v1alpha1.Widget) error
		want  []string
	}

	badConditionEdit := func(cond metav1.Condition) func(*v1alpha1.Widget) error {
		return func(o *v1alpha1.Widget) error {
			meta.SetStatusCondition(&o.Status.Conditions, cond)
			return nil
		}
	}
	editCase := func(cond metav1.Condition, want ...string) conditionCase {
		return conditionCase{
			queue: func(b *batcher.Batch, w *v1alpha1.Widget) error {
				return batcher.EditStatus(b, w, "m", badConditionEdit(cond))
			},
			raw: func(ctx context.Context, w *v1alpha1.Widget) error {
				edited := w.DeepCopy()
				_ = badConditionEdit(cond)(edited)
				return env.Client.Status().Patch(ctx, edited, client.MergeFrom(w), client.FieldOwner("m"))
			},
			want: want,
		}
	}
	// Without lastTransitionTime: a hand-built apply configuration, not SetCondition.
	noTransitionTime := func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		widgets.Status(ac).WithConditions(metav1ac.Condition().
			WithType("Ready").WithStatus(metav1.ConditionTrue).WithReason("Up").WithMessage("up"))
		return nil
	}
	badReason := map[string]any{"type": "Ready", "status": "True", "reason": "bad reason!", "message": "",
		"lastTransitionTime": "2026-01-02T03:04:05Z"}
	setBadReason := func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedSlice(u.Object, []any{badReason}, "status", "conditions")
	}

	DescribeTable("refuses invalid conditions at Flush, keeps the entry and sends the rest",
		func(ctx context.Context, c conditionCase) {
			bad := createWidget(ctx, ns, "bad")
			good := createWidget(ctx, ns, "good")
			b := batcher.New(applier)
			Expect(c.queue(b, bad)).To(Succeed())
			Expect(batcher.Status(b, good, "m", phase("On"))).To(Succeed())

			requests.Reset()
			err := b.Flush(ctx)
			Expect(err).To(MatchError(ssa.ErrInvalidInput))
			var applyErr *ssa.Error
			Expect(errors.As(err, &applyErr)).To(BeTrue())
			Expect(applyErr.Target.Name).To(Equal("bad"))
			Expect(applyErr.Attempts).To(BeZero())
			for _, w := range append(c.want, applyErr.Target.String()) {
				Expect(err.Error()).To(ContainSubstring(w))
			}
			GinkgoWriter.Printf("refused: %v\n", err)
			Expect(requests.Count("apply")).To(Equal(1), "only the valid entry is sent; requests: %s", requests)
			Expect(requests.Total()).To(Equal(1), "requests: %s", requests)
			Expect(b.Pending()).To(ConsistOf(applyErr.Target))
			expectGoodApplied(ctx, good)
			Expect(getWidget(ctx, client.ObjectKeyFromObject(bad)).Status.Conditions).To(BeEmpty())

			By("control: the API server refuses the same input")
			rawErr := c.raw(ctx, getWidget(ctx, client.ObjectKeyFromObject(bad)))
			Expect(apierrors.IsInvalid(rawErr)).To(BeTrue(), "%v", rawErr)
			GinkgoWriter.Printf("API server: %v\n", rawErr)
		},
		Entry("an Edit through meta.SetStatusCondition with a bad type",
			editCase(metav1.Condition{Type: "bad type!", Status: metav1.ConditionTrue, Reason: "Up", Message: "up"},
				`condition "bad type!"`, "status.conditions[bad type!].type: Invalid value")),
		Entry("an Edit through meta.SetStatusCondition with status Maybe",
			editCase(metav1.Condition{Type: "Ready", Status: "Maybe", Reason: "Up", Message: "up"},
				`condition "Ready"`, `status.conditions[Ready].status: Unsupported value: "Maybe"`)),
		Entry("an Edit through meta.SetStatusCondition with a bad reason",
			editCase(metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "bad reason!", Message: "up"},
				`condition "Ready"`, "status.conditions[Ready].reason: Invalid value")),
		Entry("a Mutator writing the apply configuration without lastTransitionTime", conditionCase{
			queue: func(b *batcher.Batch, w *v1alpha1.Widget) error { return batcher.Status(b, w, "m", noTransitionTime) },
			raw: func(ctx context.Context, w *v1alpha1.Widget) error {
				ac := acv1alpha1.Widget(w.Name, w.Namespace)
				_ = noTransitionTime(ac, w)
				return env.Client.Status().Apply(ctx, ac, client.FieldOwner("m"))
			},
			want: []string{`condition "Ready"`, "status.conditions[Ready].lastTransitionTime: Required value"},
		}),
		Entry("an unstructured Mutator with a bad reason", conditionCase{
			queue: func(b *batcher.Batch, w *v1alpha1.Widget) error {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(w), u); err != nil {
					return err
				}
				return batcher.Status(b, u, "m", func(ac, _ *unstructured.Unstructured) error { return setBadReason(ac) })
			},
			raw: func(ctx context.Context, w *v1alpha1.Widget) error {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
				u.SetNamespace(w.Namespace)
				u.SetName(w.Name)
				if err := setBadReason(u); err != nil {
					return err
				}
				return env.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("m"))
			},
			want: []string{`condition "Ready"`, "status.conditions[Ready].reason: Invalid value"},
		}),
	)

	It("refuses an unstructured object of a kind nothing knows when queued", func(ctx context.Context) {
		good := createWidget(ctx, ns, "good")
		sprockets := schema.GroupVersionResource{Group: "nope.example.com", Version: "v1", Resource: "sprockets"}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(sprockets.GroupVersion().WithKind("Sprocket"))
		u.SetNamespace(ns)
		u.SetName("s1")
		setPhaseOn := func(ac, _ *unstructured.Unstructured) error {
			return unstructured.SetNestedField(ac.Object, "On", "status", "phase")
		}

		b := batcher.New(applier)
		requests.Reset()
		err := batcher.Status(b, u, "m", setPhaseOn)
		Expect(err).To(MatchError(ssa.ErrInvalidInput))
		Expect(err.Error()).To(And(ContainSubstring("unknown kind"), ContainSubstring(ns+"/s1"),
			ContainSubstring("install its CRD"), ContainSubstring("WithTypeConverter")))
		GinkgoWriter.Printf("refused: %v (discovery requests: %d)\n", err, requests.Count("discovery"))
		Expect(requests.Total()).To(BeZero(), "only discovery may be asked; requests: %s", requests)
		Expect(b.Pending()).To(BeEmpty())

		Expect(batcher.Status(b, good, "m", phase("On"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(requests.Count("apply")).To(Equal(1), "requests: %s", requests)
		Expect(requests.Total()).To(Equal(1), "requests: %s", requests)
		expectGoodApplied(ctx, good)

		By("control: the client finds no such resource, and the API server answers 404 at its path")
		intent := u.DeepCopy()
		Expect(setPhaseOn(intent, nil)).To(Succeed())
		err = env.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(intent), client.FieldOwner("m"))
		Expect(meta.IsNoMatchError(err)).To(BeTrue(), "%v", err)
		GinkgoWriter.Printf("client: %v\n", err)
		dyn, err := dynamic.NewForConfig(env.Config)
		Expect(err).NotTo(HaveOccurred())
		_, err = dyn.Resource(sprockets).Namespace(ns).ApplyStatus(ctx, "s1", intent, metav1.ApplyOptions{FieldManager: "m"})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		GinkgoWriter.Printf("API server: %v\n", err)
	})
})

// phase is a Mutator setting the status phase.
func phase(p string) widgets.Mutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		widgets.Status(ac).WithPhase(p)
		return nil
	}
}
