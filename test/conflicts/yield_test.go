package conflicts

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// The managers of the yield specs: a controller that applies its conditions,
// and a person who changes one of them by hand.
const (
	machine = "machine-controller"
	person  = "human"
)

// machineTransition is the lastTransitionTime the controller gives its
// conditions, every time: what it applies again differs from what it applied
// only where a spec means it to.
var machineTransition = metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))

// otherOwner is how the person takes Ready's status, reason and message.
type otherOwner int

const (
	// byMergePatch: a merge patch of the status subresource, an Update
	// manager. It owns the three fields it changed and not Ready's key.
	byMergePatch otherOwner = iota
	// byApply: a forced apply of Ready's type, status, reason and message,
	// an Apply manager. It owns the three fields and shares Ready's key.
	byApply
)

func (o otherOwner) String() string {
	if o == byApply {
		return "an Apply manager"
	}
	return "an Update manager"
}

// readyPath is a field of the Ready condition; "" for the element itself.
func readyPath(field string) fieldpath.Path {
	p := fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "Ready"))
	if field == "" {
		return p
	}
	return append(p, fieldpath.PathElement{FieldName: &field})
}

var _ = Describe("a yielding writer keeps the conditions it still owns", func() {
	var (
		ns       string
		applier  *ssa.Applier
		requests *apiserver.Requests
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		c, r, err := env.CountingClient()
		Expect(err).NotTo(HaveOccurred())
		applier, err = widgets.NewApplier(c)
		Expect(err).NotTo(HaveOccurred())
		requests = r
	})

	machineReady := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Provisioned", Message: "the machine is up",
		LastTransitionTime: machineTransition}
	machineBootstrap := metav1.Condition{Type: "BootstrapConfigReady", Status: metav1.ConditionTrue, Reason: "DataSecretAvailable",
		Message: "bootstrap data is ready", LastTransitionTime: machineTransition}

	// flushMachine queues conds as the controller's contributions, with
	// opts, on the object as observed now (or on observed, when given), and
	// flushes them. It returns the entries' results and the Flush's error.
	flushMachine := func(ctx context.Context, key client.ObjectKey, observed *v1alpha1.Widget, opts []ssa.ApplyOption,
		conds ...metav1.Condition) ([]ssa.Result, error) {
		GinkgoHelper()
		var results []ssa.Result
		b := batcher.New(applier, batcher.WithResultHook(func(_ ssa.Target, r ssa.Result, _ error) { results = append(results, r) }))
		if observed == nil {
			observed = getWidget(ctx, key)
		}
		for _, c := range conds {
			Expect(batcher.Status(b, observed, machine, widgets.PutCondition(c), opts...)).To(Succeed())
		}
		err := b.Flush(ctx)
		return results, err
	}

	// takeReady has the person set Ready to False, with a reason and
	// message of their own, keeping its lastTransitionTime.
	takeReady := func(ctx context.Context, key client.ObjectKey, owner otherOwner) {
		GinkgoHelper()
		switch owner {
		case byMergePatch:
			w := getWidget(ctx, key)
			base := w.DeepCopy()
			ready := meta.FindStatusCondition(w.Status.Conditions, "Ready")
			Expect(ready).NotTo(BeNil())
			ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "Maintenance", "held for maintenance"
			Expect(env.Client.Status().Patch(ctx, w, client.MergeFrom(base), client.FieldOwner(person))).To(Succeed())
		case byApply:
			ac := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithConditions(
				metav1ac.Condition().WithType("Ready").WithStatus(metav1.ConditionFalse).WithReason("Maintenance").WithMessage("held for maintenance")))
			Expect(env.Client.Status().Apply(ctx, ac, client.FieldOwner(person), client.ForceOwnership)).To(Succeed())
		}
	}

	// setUp creates a Widget on which the controller applied conds and then
	// the person took Ready's status, reason and message: the controller
	// still owns Ready's key and lastTransitionTime.
	setUp := func(ctx context.Context, name string, owner otherOwner, conds ...metav1.Condition) client.ObjectKey {
		GinkgoHelper()
		w, err := widgets.Create(ctx, env.Client, ns, name)
		Expect(err).NotTo(HaveOccurred())
		key := client.ObjectKeyFromObject(w)
		_, err = flushMachine(ctx, key, nil, nil, conds...)
		Expect(err).NotTo(HaveOccurred())
		takeReady(ctx, key, owner)

		o, err := ownership.Inspect(getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(o.Owners(readyPath("type"))).To(ContainElement(HaveField("Manager", machine)), "the controller owns Ready's key")
		Expect(o.Owners(readyPath("lastTransitionTime"))).To(ConsistOf(HaveField("Manager", machine)))
		Expect(o.Owners(readyPath("status"))).To(ConsistOf(HaveField("Manager", person)), "the person owns Ready's status alone")
		if owner == byMergePatch {
			Expect(o.Owners(readyPath("type"))).To(ConsistOf(HaveField("Manager", machine)), "a merge patch does not own the key")
		}
		return key
	}

	// expectPersonsReady checks that Ready holds the person's values and the
	// controller's lastTransitionTime, and that the controller still owns
	// Ready's key and nothing the person took.
	expectPersonsReady := func(ctx context.Context, key client.ObjectKey) {
		GinkgoHelper()
		w := getWidget(ctx, key)
		ready := meta.FindStatusCondition(w.Status.Conditions, "Ready")
		Expect(ready).NotTo(BeNil(), "Ready was deleted")
		Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		Expect(ready.Reason).To(Equal("Maintenance"))
		Expect(ready.Message).To(Equal("held for maintenance"))
		Expect(ready.LastTransitionTime.Equal(&machineTransition)).To(BeTrue(), "lastTransitionTime %v", ready.LastTransitionTime)
		o, err := ownership.Inspect(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.Owners(readyPath("type"))).To(ContainElement(HaveField("Manager", machine)))
		Expect(o.Owners(readyPath("status"))).To(ConsistOf(HaveField("Manager", person)))
		Expect(o.Owners(readyPath("reason"))).To(ConsistOf(HaveField("Manager", person)))
		Expect(o.Owners(readyPath("message"))).To(ConsistOf(HaveField("Manager", person)))
	}

	// yieldedReady checks that results report exactly Ready's status,
	// reason and message as yielded.
	yieldedReady := func(results []ssa.Result) {
		GinkgoHelper()
		Expect(results).To(HaveLen(1))
		var yielded []string
		for _, c := range results[0].Yielded {
			yielded = append(yielded, c.Path.String())
		}
		Expect(yielded).To(ConsistOf(readyPath("status").String(), readyPath("reason").String(), readyPath("message").String()))
	}

	// theControllersReady is the controller's Ready as it queues it again:
	// its own values, which the person changed.
	theControllersReady := machineReady
	// newBootstrap is a change of the controller's other condition.
	newBootstrap := machineBootstrap
	newBootstrap.Reason, newBootstrap.Message = "DataSecretRotated", "bootstrap data was rotated"

	for _, owner := range []otherOwner{byMergePatch, byApply} {
		Context("when "+owner.String()+" took Ready's status, reason and message", func() {
			It("with two conditions: keeps Ready's key in the apply, so the person's Ready stays and the other condition lands", func(ctx context.Context) {
				// CONTROL: the apply the whole-element removal sent, with Ready
				// left out and the other condition changed.
				control := setUp(ctx, "control", owner, machineReady, machineBootstrap)
				err := applyWithout(ctx, control, "Ready", newBootstrap)
				if err != nil {
					AddReportEntry("control: server message", err.Error())
				}
				switch owner {
				case byMergePatch:
					Expect(err).NotTo(HaveOccurred())
					Expect(meta.FindStatusCondition(getWidget(ctx, control).Status.Conditions, "Ready")).To(BeNil(),
						"control: with the key released, the API server deletes the person's Ready")
				case byApply:
					Expect(apierrors.IsInvalid(err)).To(BeTrue(), "control: %v", err)
					Expect(err.Error()).To(ContainSubstring("lastTransitionTime"), "control: Ready is left without the released lastTransitionTime")
				}

				key := setUp(ctx, "w1", owner, machineReady, machineBootstrap)
				requests.Reset()
				results, err := flushMachine(ctx, key, nil, []ssa.ApplyOption{ssa.OnConflict(conflicts.Yield())}, theControllersReady, newBootstrap)
				Expect(err).NotTo(HaveOccurred())
				yieldedReady(results)
				Expect(requests.Count("apply")).To(Equal(1), "the conflict was predicted: one apply, not refused")
				Expect(string(results[0].Intent)).To(ContainSubstring(`{"lastTransitionTime":"2026-03-04T05:06:07Z","observedGeneration":1,"type":"Ready"}`))
				expectPersonsReady(ctx, key)
				bootstrap := meta.FindStatusCondition(getWidget(ctx, key).Status.Conditions, "BootstrapConfigReady")
				Expect(bootstrap).NotTo(BeNil())
				Expect(bootstrap.Reason).To(Equal("DataSecretRotated"))
			})

			It("with two conditions, nothing else changed: yields and sends nothing", func(ctx context.Context) {
				key := setUp(ctx, "w1", owner, machineReady, machineBootstrap)
				requests.Reset()
				results, err := flushMachine(ctx, key, nil, []ssa.ApplyOption{ssa.OnConflict(conflicts.Yield())}, theControllersReady, machineBootstrap)
				Expect(err).NotTo(HaveOccurred())
				yieldedReady(results)
				Expect(requests.Count("apply")).To(Equal(0), "what is left is what the controller owns: %s", requests)
				Expect(results[0].Sent).To(BeFalse())
				expectPersonsReady(ctx, key)
				Expect(meta.FindStatusCondition(getWidget(ctx, key).Status.Conditions, "BootstrapConfigReady")).NotTo(BeNil())
			})

			It("with Ready alone: yields everything and sends nothing", func(ctx context.Context) {
				// CONTROL: the empty apply the whole-element removal sent.
				control := setUp(ctx, "control", owner, machineReady)
				err := applyWithout(ctx, control, "Ready")
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "control: %v", err)
				AddReportEntry("control: server message", err.Error())
				switch owner {
				case byMergePatch:
					Expect(err.Error()).To(ContainSubstring(`status.conditions: Invalid value: "null"`))
				case byApply:
					Expect(err.Error()).To(ContainSubstring("lastTransitionTime"))
				}

				key := setUp(ctx, "w1", owner, machineReady)
				requests.Reset()
				results, err := flushMachine(ctx, key, nil, []ssa.ApplyOption{ssa.OnConflict(conflicts.Yield())}, theControllersReady)
				Expect(err).NotTo(HaveOccurred())
				yieldedReady(results)
				Expect(requests.Count("apply")).To(Equal(0), "nothing but what the controller owns is left: %s", requests)
				expectPersonsReady(ctx, key)
			})

			It("after the API server's 409 on a stale observation: the retry keeps Ready's key", func(ctx context.Context) {
				w, err := widgets.Create(ctx, env.Client, ns, "w1")
				Expect(err).NotTo(HaveOccurred())
				key := client.ObjectKeyFromObject(w)
				_, err = flushMachine(ctx, key, nil, nil, machineReady, machineBootstrap)
				Expect(err).NotTo(HaveOccurred())
				stale := getWidget(ctx, key)
				takeReady(ctx, key, owner)

				// Ready's reason changes too, so that the stale view holds a
				// change of Ready for the controller to send.
				changed := theControllersReady
				changed.Reason = "Running"
				requests.Reset()
				results, err := flushMachine(ctx, key, stale, []ssa.ApplyOption{ssa.OnConflict(conflicts.Yield())}, changed, newBootstrap)
				Expect(err).NotTo(HaveOccurred())
				yieldedReady(results)
				Expect(requests.Count("apply")).To(Equal(2), "one refused, one without the contested fields: %s", requests)
				Expect(string(results[0].Intent)).To(ContainSubstring(`{"lastTransitionTime":"2026-03-04T05:06:07Z","observedGeneration":1,"type":"Ready"}`))
				expectPersonsReady(ctx, key)
				Expect(meta.FindStatusCondition(getWidget(ctx, key).Status.Conditions, "BootstrapConfigReady").Reason).To(Equal("DataSecretRotated"))
			})
		})
	}
})

// applyWithout applies, as the controller, conds and not the condition of
// leftOut: what a whole-element removal of leftOut sent. With no conds it
// is an apply that claims nothing.
func applyWithout(ctx context.Context, key client.ObjectKey, leftOut string, conds ...metav1.Condition) error {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	u.SetName(key.Name)
	u.SetNamespace(key.Namespace)
	var items []any
	for _, c := range conds {
		Expect(c.Type).NotTo(Equal(leftOut))
		item, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
		Expect(err).NotTo(HaveOccurred())
		item["observedGeneration"] = int64(1)
		items = append(items, item)
	}
	if len(items) > 0 {
		Expect(unstructured.SetNestedSlice(u.Object, items, "status", "conditions")).To(Succeed())
	}
	return env.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(machine))
}
