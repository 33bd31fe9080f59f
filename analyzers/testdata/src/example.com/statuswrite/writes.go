package statuswrite

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
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

func capi(ctx context.Context, h *patch.Helper, w *v1.Widget, p *v1.Plain) error {
	if err := h.Patch(ctx, p); err != nil { // no conditions: not reported
		return err
	}
	return h.Patch(ctx, w) // want `Cluster API's patch helper writes the status of \*v1\.Widget with merge patches`
}

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
