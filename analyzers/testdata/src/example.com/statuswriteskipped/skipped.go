package statuswriteskipped

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util/patch"
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

// A helper made elsewhere (a scope's, as cluster-api-provider-aws's
// PatchObject methods use), whose Patch sends what the callers changed,
// with conditions or without.
type scope struct {
	helper, jobHelper *patch.Helper
	widget            *v1.Widget
	job               *batchv1.Job
}

func (s *scope) PatchObject(ctx context.Context) error {
	if err := s.jobHelper.Patch(ctx, s.job); err != nil { // want `^not analyzed: Cluster API's patch\.Helper\.Patch of \*v1\.Job: its helper is made elsewhere and the status changes it sends are its callers', which are not followed$`
		return err
	}
	return s.helper.Patch(ctx, s.widget) // want `^not analyzed: Cluster API's patch\.Helper\.Patch of \*v1\.Widget: its helper is made elsewhere`
}

// Analyzed, so not skipped: a merge patch of scalars, a patch handed in,
// whose callers are classified, and helpers made where they patch.

func localHelpers(ctx context.Context, c client.Client, w *v1.Widget, j *batchv1.Job) error {
	h, _ := patch.NewHelper(w, c)
	w.Spec.Ports = append(w.Spec.Ports, 80)
	if err := h.Patch(ctx, w); err != nil {
		return err
	}
	jh, _ := patch.NewHelper(j, c)
	j.Status.Active = 1
	if err := jh.Patch(ctx, j); err != nil {
		return err
	}
	// Made from the object, patching a copy of it (Cluster API's topology
	// test).
	h, _ = patch.NewHelper(w, c)
	changed := w.DeepCopy()
	changed.Spec.Ports = append(changed.Spec.Ports, 443)
	return h.Patch(ctx, changed)
}

func scalar(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	w.Status.Phase = "Ready"
	return c.Status().Patch(ctx, w, client.MergeFrom(base))
}

func handedIn(ctx context.Context, c client.Client, w *v1.Widget, p client.Patch) error { // want handedIn:"sends a status patch it is handed"
	return c.Status().Patch(ctx, w, p)
}
