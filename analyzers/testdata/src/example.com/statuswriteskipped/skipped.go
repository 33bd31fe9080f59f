package statuswriteskipped

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.com/api/v1"
	"example.com/clientset"
)

func somePatch(w *v1.Widget) client.Patch { return client.MergeFrom(w) }

// Writes whose patch or data cannot be followed: reported as skipped.

func builtElsewhere(ctx context.Context, c client.Client, w *v1.Widget) error {
	return c.Status().Patch(ctx, w, somePatch(w)) // want `^not analyzed: a status patch of \*v1\.Widget: its patch is built where it cannot be followed$`
}

func rawData(ctx context.Context, c client.Client, w *v1.Widget, data []byte) error {
	return c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, data)) // want `^not analyzed: a raw merge patch \(client\.RawPatch\) of the status of \*v1\.Widget: its data is built where it cannot be followed$`
}

func patchType(ctx context.Context, ws clientset.WidgetInterface, pt types.PatchType) error {
	_, err := ws.Patch(ctx, "w", pt, nil, metav1.PatchOptions{}, "status") // want `^not analyzed: a WidgetInterface\.Patch of the status of \*v1\.Widget: its patch type is not a constant$`
	return err
}

// Analyzed, so not skipped: a merge patch of scalars, and a patch handed
// in, whose callers are classified.

func scalar(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	w.Status.Phase = "Ready"
	return c.Status().Patch(ctx, w, client.MergeFrom(base))
}

func handedIn(ctx context.Context, c client.Client, w *v1.Widget, p client.Patch) error { // want handedIn:"sends a status patch it is handed"
	return c.Status().Patch(ctx, w, p)
}
