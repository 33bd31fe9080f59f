package statuswrite

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.com/api/v1"
)

func update(ctx context.Context, c client.Client, w *v1.Widget) error {
	w.Status.Phase = "Ready"
	return c.Status().Update(ctx, w) // want `Status\(\)\.Update of \*v1\.Widget replaces the whole status; status\.conditions is a map list \(\+listType=map\); instead, queue the status function with batcher\.EditStatus`
}

func updateSubResource(ctx context.Context, c client.Client, g *v1.Gadget) error {
	return c.SubResource("status").Update(ctx, g) // want `Status\(\)\.Update of \*v1\.Gadget replaces the whole status; status\.conditions is not marked \+listType=map: make it a map list`
}

func mergeFromLock(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	w.Status.Phase = "Ready"
	return c.Status().Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})) // want `a merge patch \(client\.MergeFrom\) of the status of \*v1\.Widget replaces every list it sends whole`
}

func mergeFromVariable(ctx context.Context, c client.Client, p *v1.Plain) error {
	patch := client.MergeFrom(p.DeepCopyObject())
	p.Status.Ready = true
	sw := c.Status()
	return sw.Patch(ctx, p, patch) // want `merge patch \(client\.MergeFrom\) of the status of \*v1\.Plain replaces every list it sends whole, status\.conditions included; no status\.conditions field`
}

func raw(ctx context.Context, c client.Client, w *v1.Widget) error {
	if err := c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{}`))); err != nil { // want `a raw merge patch of the status of \*v1\.Widget replaces every list`
		return err
	}
	return c.Status().Patch(ctx, w, client.Merge) // want `a raw merge patch of the status of \*v1\.Widget replaces every list`
}

// A helper's Patch is reported when the object's status or conditions are
// touched between the helper's creation and the Patch (in the whole function
// when the helper comes from elsewhere).

func capi(ctx context.Context, h *patch.Helper, w *v1.Widget, p *v1.Plain) error {
	p.Status.Ready = true
	if err := h.Patch(ctx, p); err != nil { // no conditions: not reported
		return err
	}
	w.Status.Phase = "Ready"
	return h.Patch(ctx, w) // want `Cluster API's patch helper writes the status of \*v1\.Widget with merge patches`
}

func capiConditionsSetter(ctx context.Context, c client.Client, w *v1.Widget) error {
	h, err := patch.NewHelper(w, c)
	if err != nil {
		return err
	}
	conditions.Set(w, metav1.Condition{Type: "Ready"})
	return h.Patch(ctx, w) // want `Cluster API's patch helper writes the status of \*v1\.Widget`
}

func capiSetStatusCondition(ctx context.Context, c client.Client, w *v1.Widget) error {
	h, _ := patch.NewHelper(w, c)
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready"})
	return h.Patch(ctx, w) // want `Cluster API's patch helper writes the status of \*v1\.Widget`
}

func capiSetConditions(ctx context.Context, c client.Client, w *v1.Widget) error {
	h, _ := patch.NewHelper(w, c)
	w.SetConditions(nil)
	return h.Patch(ctx, w) // want `Cluster API's patch helper writes the status of \*v1\.Widget`
}

// The Patch is deferred: what the rest of the function does is sent.
func capiDeferred(ctx context.Context, c client.Client, w *v1.Widget) (reterr error) {
	h, err := patch.NewHelper(w, c)
	if err != nil {
		return err
	}
	defer func() {
		if err := h.Patch(ctx, w); err != nil { // want `Cluster API's patch helper writes the status of \*v1\.Widget`
			reterr = err
		}
	}()
	conditions.MarkTrue(w, "Ready")
	return nil
}

type option func(*v1.Widget)

// Options applied to the object: what they change is not known.
func capiFuncValue(ctx context.Context, c client.Client, w *v1.Widget, opts ...option) error {
	h, _ := patch.NewHelper(w, c)
	for _, opt := range opts {
		opt(w)
	}
	return h.Patch(ctx, w) // want `Cluster API's patch helper writes the status of \*v1\.Widget`
}

// An option naming the conditions the Patch owns says it writes them.
func capiConditionsOption(ctx context.Context, h *patch.Helper, w *v1.Widget) error {
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: []string{"Ready"}}}
	return h.Patch(ctx, w, opts...) // want `Cluster API's patch helper writes the status of \*v1\.Widget`
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
	return r.helper.Patch(ctx, s.widget) // want `Cluster API's patch helper writes the status of \*v1\.Widget`
}

func (r *reconciler) removeFinalizer(w *v1.Widget) {}

// The look-alikes: nothing below is reported.

func specMergePatch(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	w.Spec.Replicas = 3
	return c.Patch(ctx, w, client.MergeFrom(base))
}

func apply(ctx context.Context, c client.Client, w *v1.Widget) error {
	if err := c.Status().Patch(ctx, w, client.Apply); err != nil {
		return err
	}
	return c.Status().Patch(ctx, w, client.RawPatch(types.ApplyPatchType, nil))
}

func otherSubResource(ctx context.Context, c client.Client, w *v1.Widget) error {
	return c.SubResource("scale").Update(ctx, w)
}

func specUpdate(ctx context.Context, c client.Client, w *v1.Widget) error {
	return c.Update(ctx, w)
}

func updateAny(ctx context.Context, c client.Client, obj client.Object) error {
	return c.Status().Update(ctx, obj) // want `Status\(\)\.Update of client\.Object replaces the whole status; status\.conditions: not known from the Go type`
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
func capiOtherStatus(ctx context.Context, c client.Client, w, other *v1.Widget) error {
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
