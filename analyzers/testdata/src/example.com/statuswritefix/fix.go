package statuswritefix

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.com/api/v1"
)

func ifInit(ctx context.Context, c client.Client, w *v1.Widget) error { // want ifInit:"writes lists"
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

func returned(ctx context.Context, c client.Client, w *v1.Widget) error { // want returned:"writes lists"
	orig := w.DeepCopy()
	w.Status.Addresses = nil
	return c.Status().Patch(ctx, w, client.MergeFrom(orig)) // want `merge patch \(client\.MergeFrom\) of the status`
}

// Not mechanical: no fix.

func usedAfter(ctx context.Context, c client.Client, w *v1.Widget) ([]string, error) { // want usedAfter:"writes lists"
	base := w.DeepCopy()
	w.Status.Addresses = append(w.Status.Addresses, "a")
	err := c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `merge patch \(client\.MergeFrom\) of the status`
	return w.Status.Addresses, err
}

func returnsEarly(ctx context.Context, c client.Client, w *v1.Widget) error { // want returnsEarly:"writes lists"
	base := w.DeepCopy()
	if w.Status.Phase == "Ready" {
		return nil
	}
	w.Status.Addresses = nil
	return c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `merge patch \(client\.MergeFrom\) of the status`
}

func declares(ctx context.Context, c client.Client, w *v1.Widget) error { // want declares:"writes lists"
	base := w.DeepCopy()
	addresses := []string{"a"}
	w.Status.Addresses = addresses
	return c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `merge patch \(client\.MergeFrom\) of the status`
}
