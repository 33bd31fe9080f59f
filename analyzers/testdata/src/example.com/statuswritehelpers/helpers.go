package statuswritehelpers

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/util/conditions"
	v1beta1patch "sigs.k8s.io/cluster-api/util/deprecated/v1beta1/patch"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fluxpatch "github.com/fluxcd/pkg/runtime/patch"

	v1 "example.com/api/v1"
)

// A helper's Patch is reported when the object's status or conditions are
// touched between the helper's creation and the Patch (in the whole function
// when the helper comes from elsewhere).

func capi(ctx context.Context, h *patch.Helper, w *v1.Widget, p *v1.Plain) error {
	p.Status.Ready = true
	if err := h.Patch(ctx, p); err != nil { // no conditions: not reported
		return err
	}
	w.Status.Phase = "Ready"
	return h.Patch(ctx, w) // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type but tracks no owner per writer \(helper-managed: a migration candidate\); status\.conditions is a map list \(\+listType=map\); to migrate, set each writer's conditions with conditions\.Status`
}

func capiConditionsSetter(ctx context.Context, c client.Client, w *v1.Widget) error { // want capiConditionsSetter:"writes lists"
	h, err := patch.NewHelper(w, c)
	if err != nil {
		return err
	}
	conditions.Set(w, metav1.Condition{Type: "Ready"})
	return h.Patch(ctx, w) // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
}

func capiSetStatusCondition(ctx context.Context, c client.Client, w *v1.Widget) error { // want capiSetStatusCondition:"writes lists"
	h, _ := patch.NewHelper(w, c)
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready"})
	return h.Patch(ctx, w) // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
}

func capiSetConditions(ctx context.Context, c client.Client, w *v1.Widget) error { // want capiSetConditions:"writes lists"
	h, _ := patch.NewHelper(w, c)
	w.SetConditions(nil)
	return h.Patch(ctx, w) // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
}

// The Patch is deferred: what the rest of the function does is sent.
func capiDeferred(ctx context.Context, c client.Client, w *v1.Widget) (reterr error) { // want capiDeferred:"writes lists"
	h, err := patch.NewHelper(w, c)
	if err != nil {
		return err
	}
	defer func() {
		if err := h.Patch(ctx, w); err != nil { // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
			reterr = err
		}
	}()
	conditions.MarkTrue(w, "Ready")
	return nil
}

type option func(*v1.Widget)

// Options applied to the object: what they change is not known.
func capiFuncValue(ctx context.Context, c client.Client, w *v1.Widget, opts ...option) error { // want capiFuncValue:"writes lists"
	h, _ := patch.NewHelper(w, c)
	for _, opt := range opts {
		opt(w)
	}
	return h.Patch(ctx, w) // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
}

// An option naming the conditions the Patch owns says it writes them.
func capiConditionsOption(ctx context.Context, h *patch.Helper, w *v1.Widget) error {
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: []string{"Ready"}}}
	return h.Patch(ctx, w, opts...) // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
}

type scope struct{ widget *v1.Widget }

type reconciler struct {
	c      client.Client
	helper *patch.Helper
}

func (r *reconciler) updateStatus(s *scope) {}

// A helper held in a field, and a status function given what the object is
// reached through.
func (r *reconciler) capiStatusFunction(ctx context.Context, s *scope) error {
	r.updateStatus(s)
	return r.helper.Patch(ctx, s.widget) // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
}

func (r *reconciler) removeFinalizer(w *v1.Widget) {}

// The look-alikes: nothing below is reported.

// The deprecated helper, and Flux's helper and serial patcher.
func capiDeprecated(ctx context.Context, c client.Client, w *v1.Widget) error { // want capiDeprecated:"writes lists"
	h, _ := v1beta1patch.NewHelper(w, c)
	conditions.MarkTrue(w, "Ready")
	return h.Patch(ctx, w) // want `^Cluster API's deprecated v1beta1 patch\.Helper\.Patch of \*v1\.Widget merges conditions per type but tracks no owner per writer \(helper-managed: a migration candidate\)`
}

func flux(ctx context.Context, c client.Client, w *v1.Widget) error { // want flux:"writes lists"
	h, _ := fluxpatch.NewHelper(w, c)
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready"})
	if err := h.Patch(ctx, w); err != nil { // want `^Flux's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
		return err
	}
	sp := fluxpatch.NewSerialPatcher(w, c)
	w.Status.Phase = "Ready"
	return sp.Patch(ctx, w) // want `^Flux's patch\.SerialPatcher\.Patch of \*v1\.Widget`
}

// The object handed by address, as a value: its status is seen through &
// (cluster-api-provider-aws's paused condition in a test).
func capiAddress(ctx context.Context, c client.Client, w v1.Widget) error {
	h, _ := patch.NewHelper(&w, c)
	w.Status.Phase = "Paused"
	return h.Patch(ctx, &w) // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Widget merges conditions per type`
}

// Not reported: a helper's Patch of an object without conditions whose
// status lists did not change.
func capiPlain(ctx context.Context, h *patch.Helper, p *v1.Plain) error {
	p.Status.Ready = true
	return h.Patch(ctx, p)
}

// A helper's Patch of an object without conditions (a Node in Cluster API's
// tests, an unstructured infrastructure machine) is a merge patch of the
// status from the helper's copy: whole-list when a list changed since the
// helper was made, reported without -helpers; not reported for scalars, or
// for a list changed before the helper was made.
func capiNoConditions(ctx context.Context, c client.Client, j *batchv1.Job, u *unstructured.Unstructured) error { // want capiNoConditions:"writes lists"
	jh, _ := patch.NewHelper(j, c)
	j.Status.Conditions = []batchv1.JobCondition{{Type: "Complete", Status: "True"}}
	if err := jh.Patch(ctx, j); err != nil { // want `^Cluster API's patch\.Helper\.Patch of \*v1\.Job: without conditions to merge per type, it sends a merge patch of the status from the copy the helper took, which carries a list whole when the list changed since, and status\.conditions is assigned \(line \d+\); status\.conditions is not a map list in the Kubernetes API`
		return err
	}
	uh, _ := v1beta1patch.NewHelper(u, c)
	_ = unstructured.SetNestedField(u.Object, []interface{}{map[string]interface{}{"type": "InternalIP"}}, "status", "addresses")
	if err := uh.Patch(ctx, u); err != nil { // want `^Cluster API's deprecated v1beta1 patch\.Helper\.Patch of \*unstructured\.Unstructured: .*status\.addresses is set by SetNestedField`
		return err
	}
	fh := fluxpatch.NewSerialPatcher(j, c)
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: "Failed"})
	return fh.Patch(ctx, j) // want `^Flux's patch\.SerialPatcher\.Patch of \*v1\.Job: without conditions to merge per type`
}

func capiNoConditionsScalars(ctx context.Context, c client.Client, j *batchv1.Job, u *unstructured.Unstructured) error { // want capiNoConditionsScalars:"writes lists"
	j.Status.Conditions = nil
	jh, _ := patch.NewHelper(j, c)
	j.Status.Active = 1
	if err := jh.Patch(ctx, j); err != nil {
		return err
	}
	uh, _ := patch.NewHelper(u, c)
	_ = unstructured.SetNestedField(u.Object, true, "status", "initialization", "provisioned")
	if err := uh.Patch(ctx, u, patch.WithStatusObservedGeneration{}); err != nil {
		return err
	}
	// Metadata lists, promoted from the embedded ObjectMeta, are not status.
	jh, _ = patch.NewHelper(j, c)
	j.OwnerReferences = append(j.OwnerReferences, metav1.OwnerReference{Kind: "Cluster", Name: "c"})
	j.Finalizers = []string{"example.com/finalizer"}
	return jh.Patch(ctx, j)
}

// Not reported either: Flux's serial patcher after a spec change alone.
func fluxSpecOnly(ctx context.Context, c client.Client, w *v1.Widget) error {
	sp := fluxpatch.NewSerialPatcher(w, c)
	w.Spec.Replicas = 3
	return sp.Patch(ctx, w)
}

// A helper's Patch after a change of the spec or finalizers alone sends no
// status patch.
func capiSpecOnly(ctx context.Context, c client.Client, w *v1.Widget) error {
	h, err := patch.NewHelper(w, c)
	if err != nil {
		return err
	}
	w.Spec.Replicas = 3
	return h.Patch(ctx, w)
}

// Deferred, with the finalizer removed and the conditions only read.
func (r *reconciler) capiDeferredSpecOnly(ctx context.Context, w *v1.Widget) (reterr error) {
	h, err := patch.NewHelper(w, r.c)
	if err != nil {
		return err
	}
	defer func() {
		if err := h.Patch(ctx, w); err != nil {
			reterr = err
		}
	}()
	if conditions.IsTrue(w, "Ready") {
		r.removeFinalizer(w)
	}
	return nil
}

// The status set before the helper is made is in the helper's base: the
// helper sends only the spec change.
func capiStatusBeforeHelper(ctx context.Context, c client.Client, w *v1.Widget) error {
	w.Status.Phase = "Ready"
	h, _ := patch.NewHelper(w, c)
	w.Spec.Replicas = 3
	return h.Patch(ctx, w)
}

// A helper from elsewhere, and nothing in the function touches the status.
func capiSpecOnlyGivenHelper(ctx context.Context, h *patch.Helper, w *v1.Widget) error {
	w.Spec.Replicas = 3
	return h.Patch(ctx, w)
}

// Another object's status is set.
func capiOtherStatus(ctx context.Context, c client.Client, w, other *v1.Widget) error { // want capiOtherStatus:"writes lists"
	h, _ := patch.NewHelper(w, c)
	other.Status.Phase = "Ready"
	conditions.Set(other, metav1.Condition{Type: "Ready"})
	return h.Patch(ctx, w)
}

// The observed generation alone, after a spec change: the generation the
// object carries is the one its status already observed.
func capiObservedGenerationOnly(ctx context.Context, c client.Client, w *v1.Widget) error {
	h, _ := patch.NewHelper(w, c)
	w.Spec.Replicas = 3
	return h.Patch(ctx, w, patch.WithStatusObservedGeneration{})
}
