package widgets

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
)

// legacyWrite is a status write the finder reports, with a fix: its merge
// patch carries the conditions, changed since the snapshot, whole.
func legacyWrite(ctx context.Context, c client.Client, w *v1alpha1.Widget) error {
	base := w.DeepCopy()
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Legacy", Status: metav1.ConditionTrue, Reason: "Set"})
	return c.Status().Patch(ctx, w, client.MergeFrom(base))
}

// scalarWrite's merge patch carries the endpoint alone: not reported.
func scalarWrite(ctx context.Context, c client.Client, w *v1alpha1.Widget) error {
	base := w.DeepCopy()
	w.Status.Endpoint = "x"
	return c.Status().Patch(ctx, w, client.MergeFrom(base))
}

// badEdit is a status function statusfunc reports twice.
func badEdit(b *batcher.Batch, c client.Client, w *v1alpha1.Widget) error {
	return batcher.EditStatus(b, w, "", func(w *v1alpha1.Widget) error {
		return c.Get(context.Background(), client.ObjectKeyFromObject(w), w)
	})
}
