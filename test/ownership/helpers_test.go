package ownership

import (
	"context"
	"maps"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
)

// legacyManager is the merge-patch writer the specs migrate away from.
const legacyManager = "legacy"

// createWidget creates an empty Widget and returns its key.
func createWidget(ctx context.Context, ns, name string) client.ObjectKey {
	GinkgoHelper()
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	Expect(env.Client.Create(ctx, w)).To(Succeed())
	return client.ObjectKeyFromObject(w)
}

// legacyWrite sets conditions (type -> status) and the phase the way the
// controllers being migrated do: GET, change, JSON merge patch of /status.
func legacyWrite(ctx context.Context, key client.ObjectKey, phase string, conds map[string]metav1.ConditionStatus) {
	GinkgoHelper()
	w := &v1alpha1.Widget{}
	Expect(env.Client.Get(ctx, key, w)).To(Succeed())
	base := w.DeepCopy()
	for _, t := range slices.Sorted(maps.Keys(conds)) {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type: t, Status: conds[t], Reason: "Legacy", Message: "set by the legacy writer",
		})
	}
	if phase != "" {
		w.Status.Phase = phase
	}
	Expect(env.Client.Status().Patch(ctx, w, client.MergeFrom(base), client.FieldOwner(legacyManager))).To(Succeed())
}

// applyConditions applies exactly the given conditions (type -> status) as
// manager, never forcing: a type left out is given up.
func applyConditions(ctx context.Context, key client.ObjectKey, manager string, conds map[string]metav1.ConditionStatus) error {
	status := acv1alpha1.WidgetStatus()
	for _, t := range slices.Sorted(maps.Keys(conds)) {
		status.WithConditions(metav1ac.Condition().WithType(t).WithStatus(conds[t]).
			WithReason("Applied").WithMessage("set by " + manager).WithLastTransitionTime(metav1.Now()))
	}
	return env.Client.Status().Apply(ctx, acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(status), client.FieldOwner(manager))
}

// applyPhase applies the phase as manager, never forcing.
func applyPhase(ctx context.Context, key client.ObjectKey, manager, phase string) error {
	return env.Client.Status().Apply(ctx,
		acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithPhase(phase)),
		client.FieldOwner(manager))
}

// conditions returns the object's conditions as type -> status.
func conditions(ctx context.Context, key client.ObjectKey) map[string]metav1.ConditionStatus {
	GinkgoHelper()
	w := getWidget(ctx, key)
	out := map[string]metav1.ConditionStatus{}
	for _, c := range w.Status.Conditions {
		out[c.Type] = c.Status
	}
	return out
}

// getWidget reads the Widget from the API server.
func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w := &v1alpha1.Widget{}
	Expect(env.Client.Get(ctx, key, w)).To(Succeed())
	return w
}

// inspect reads the Widget and decodes its managedFields.
func inspect(ctx context.Context, key client.ObjectKey) *ownership.Ownership {
	GinkgoHelper()
	o, err := ownership.Inspect(getWidget(ctx, key))
	Expect(err).NotTo(HaveOccurred())
	return o
}

// clearManagedFields makes the object look like one that was never tracked
// (created before managedFields existed, or cleared): a single empty entry
// is the API server's spelling of "reset".
func clearManagedFields(ctx context.Context, key client.ObjectKey) {
	GinkgoHelper()
	w := getWidget(ctx, key)
	Expect(env.Client.Patch(ctx, w, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`)))).To(Succeed())
	Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())
}

// cs builds a type -> status map from pairs, for readable specs.
func cs(pairs ...string) map[string]metav1.ConditionStatus {
	out := map[string]metav1.ConditionStatus{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = metav1.ConditionStatus(pairs[i+1])
	}
	return out
}

// metaOf is the object metadata naming key, for objects Migrate reads again.
func metaOf(key client.ObjectKey) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
}

// applyExisting applies the object's condition of the given type verbatim as
// manager, which shares its ownership with the current owners instead of
// conflicting.
func applyExisting(ctx context.Context, key client.ObjectKey, manager, condType string) error {
	GinkgoHelper()
	c := meta.FindStatusCondition(getWidget(ctx, key).Status.Conditions, condType)
	Expect(c).NotTo(BeNil())
	status := acv1alpha1.WidgetStatus().WithConditions(metav1ac.Condition().WithType(c.Type).WithStatus(c.Status).
		WithReason(c.Reason).WithMessage(c.Message).WithLastTransitionTime(c.LastTransitionTime))
	return env.Client.Status().Apply(ctx, acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(status), client.FieldOwner(manager))
}
