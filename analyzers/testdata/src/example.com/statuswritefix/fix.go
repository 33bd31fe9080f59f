package statuswritefix

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.com/api/v1"
)

func ifInit(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	w.Status.Phase = "Ready"
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == "" {
			continue
		}
		w.Status.Conditions[i].Status = "True"
	}
	if err := c.Status().Patch(ctx, w, client.MergeFrom(base)); err != nil { // want `merge patch \(client\.MergeFrom\) of the status`
		return err
	}
	return nil
}

func returned(ctx context.Context, c client.Client, w *v1.Widget) error {
	orig := w.DeepCopy()
	w.Status.Phase = "Failed"
	return c.Status().Patch(ctx, w, client.MergeFrom(orig)) // want `merge patch \(client\.MergeFrom\) of the status`
}

// Not mechanical: no fix.

func usedAfter(ctx context.Context, c client.Client, w *v1.Widget) (string, error) {
	base := w.DeepCopy()
	w.Status.Phase = "Ready"
	err := c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `merge patch \(client\.MergeFrom\) of the status`
	return w.Status.Phase, err
}

func returnsEarly(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	if w.Status.Phase == "Ready" {
		return nil
	}
	w.Status.Phase = "Ready"
	return c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `merge patch \(client\.MergeFrom\) of the status`
}

func declares(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	phase := "Ready"
	w.Status.Phase = phase
	return c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `merge patch \(client\.MergeFrom\) of the status`
}
