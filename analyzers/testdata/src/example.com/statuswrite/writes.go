package statuswrite

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.com/api/v1"
	"example.com/clientset"
	"example.com/statuswrite/contract"
	"example.com/statuswrite/util"
)

// Whole-list writes: reported.

func update(ctx context.Context, c client.Client, w *v1.Widget) error {
	w.Status.Phase = "Ready"
	return c.Status().Update(ctx, w) // want `^Status\(\)\.Update of \*v1\.Widget: it sends the whole status, and every list in it replaces the stored one; status\.conditions is a map list \(\+listType=map\); instead, queue the status function with batcher\.EditStatus`
}

func updateSubResource(ctx context.Context, c client.Client, g *v1.Gadget) error {
	return c.SubResource("status").Update(ctx, g) // want `Status\(\)\.Update of \*v1\.Gadget: .*status\.conditions is not marked \+listType=map: make it a map list keyed by type first \(statusapply lint\)`
}

func updateAny(ctx context.Context, c client.Client, obj client.Object) error {
	return c.Status().Update(ctx, obj) // want `Status\(\)\.Update of client\.Object: .*; status\.conditions: not known from the Go type`
}

func setStatusCondition(ctx context.Context, c client.Client, w *v1.Widget) error { // want setStatusCondition:"writes lists"
	base := w.DeepCopy()
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready"})
	return c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `^a merge patch \(client\.MergeFrom\) of the status of \*v1\.Widget: it carries a list whole when the list changed since its snapshot, and status\.conditions is handed to SetStatusCondition, which may change its lists \(line 41\); status\.conditions is a map list`
}

func optimisticLock(ctx context.Context, c client.Client, w *v1.Widget) error { // want optimisticLock:"writes lists"
	base := w.DeepCopy()
	w.Status.Addresses = append(w.Status.Addresses, "10.0.0.1")
	return c.Status().Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})) // want `^a merge patch \(client\.MergeFromWithOptions, optimistic lock\) of the status of \*v1\.Widget: .*status\.addresses is assigned \(line 47\)`
}

func conditionsSetter(ctx context.Context, c client.Client, w *v1.Widget) error { // want conditionsSetter:"writes lists"
	patchBase := client.MergeFrom(w.DeepCopy())
	conditions.Set(w, metav1.Condition{Type: "Ready"})
	return c.Status().Patch(ctx, w, patchBase) // want `the object is handed to Set, which may change its lists`
}

func element(ctx context.Context, c client.Client, w *v1.Widget) error { // want element:"writes lists"
	base := w.DeepCopy()
	w.Status.Conditions[0].Status = "True"
	return c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `status\.conditions\[i\]\.status is assigned`
}

func setter(ctx context.Context, c client.Client, w *v1.Widget) error { // want setter:"writes lists"
	base := w.DeepCopy()
	w.SetConditions(nil)
	return c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `SetConditions changes the object`
}

type reconciler struct{ c client.Client }

func (r *reconciler) markFailed(w *v1.Widget) { // want markFailed:"writes lists"
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: "Failed"})
}

// A function of the package, and one of another package (through its fact),
// that change the object's conditions.
func (r *reconciler) functions(ctx context.Context, w *v1.Widget) error { // want functions:"writes lists"
	base := w.DeepCopy()
	r.markFailed(w)
	if err := r.c.Status().Patch(ctx, w, client.MergeFrom(base)); err != nil { // want `the object is handed to markFailed, which may change its lists`
		return err
	}
	base = w.DeepCopy()
	util.MarkReady(w)
	return r.c.Status().Patch(ctx, w, client.MergeFrom(base)) // want `the object is handed to MarkReady`
}

// A patch variable assigned twice: the last assignment is the snapshot.
func reassigned(ctx context.Context, c client.Client, w *v1.Widget) error { // want reassigned:"writes lists"
	p := client.MergeFrom(w.DeepCopy())
	w.Status.Phase = "Provisioning"
	if err := c.Status().Patch(ctx, w, p); err != nil {
		return err
	}
	p = client.MergeFrom(w.DeepCopy())
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready"})
	return c.Status().Patch(ctx, w, p) // want `SetStatusCondition, which may change its lists \(line 96\)`
}

// A patch built by the caller and sent by a function it is handed to.
func (r *reconciler) patchStatus(ctx context.Context, w *v1.Widget, p client.Patch) error { // want patchStatus:"sends a status patch it is handed"
	return r.c.Status().Patch(ctx, w, p)
}

func (r *reconciler) deferred(ctx context.Context, w *v1.Widget) (err error) { // want deferred:"writes lists"
	p := client.MergeFrom(w.DeepCopy())
	defer func() {
		err = r.patchStatus(ctx, w, p) // want `^a merge patch \(client\.MergeFrom\) of the status, sent by patchStatus, of \*v1\.Widget: .*SetStatusCondition, which may change its lists \(line 110\)`
	}()
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready"})
	return nil
}

func (r *reconciler) deferredScalar(ctx context.Context, w *v1.Widget) (err error) {
	p := client.MergeFrom(w.DeepCopy())
	defer func() { err = r.patchStatus(ctx, w, p) }()
	w.Status.Phase = "Ready"
	return nil
}

func merge(ctx context.Context, c client.Client, w *v1.Widget) error {
	return c.Status().Patch(ctx, w, client.Merge) // want `^a merge patch \(client\.Merge\) of the status of \*v1\.Widget: it sends the whole object`
}

func raw(ctx context.Context, c client.Client, w *v1.Widget) error {
	if err := c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"status":{"conditions":[]}}`))); err != nil { // want `^a raw merge patch \(client\.RawPatch\) of the status of \*v1\.Widget: it carries a list in its constant data`
		return err
	}
	data, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": w.Status.Conditions}})
	if err != nil {
		return err
	}
	return c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, data)) // want `it carries the lists of the literal it marshals`
}

func clientsets(ctx context.Context, ws clientset.WidgetInterface, jobs clientset.JobInterface, w *v1.Widget, j *batchv1.Job) error { // want clientsets:"writes lists"
	if _, err := ws.UpdateStatus(ctx, w, metav1.UpdateOptions{}); err != nil { // want `^WidgetInterface\.UpdateStatus of \*v1\.Widget: it sends the whole status`
		return err
	}
	data := []byte(`{"status":{"addresses":["a"]}}`)
	if _, err := ws.Patch(ctx, w.Name, types.MergePatchType, data, metav1.PatchOptions{}, "status"); err != nil { // want `^a raw merge patch \(WidgetInterface\.Patch\) of the status of \*v1\.Widget: it carries a list`
		return err
	}
	_, err := jobs.UpdateStatus(ctx, j, metav1.UpdateOptions{}) // want `^JobInterface\.UpdateStatus of \*v1\.Job: .*; status\.conditions is not a map list in the Kubernetes API: server-side apply replaces it whole too, so give it one writer; instead, apply this writer's fields with batcher\.Status \(the type's apply configuration from k8s\.io/client-go/applyconfigurations\) or batcher\.EditStatus, under its own field manager$`
	return err
}

func dynamicClient(ctx context.Context, d dynamic.ResourceInterface, u *unstructured.Unstructured) error { // want dynamicClient:"writes lists"
	if _, err := d.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil { // want `^the dynamic client's ResourceInterface\.UpdateStatus of \*unstructured\.Unstructured: it sends the whole status`
		return err
	}
	_, err := d.Update(ctx, u, metav1.UpdateOptions{}, "status") // want `^the dynamic client's ResourceInterface\.Update \(subresource status\) of \*unstructured\.Unstructured`
	return err
}

func unstructuredMergeFrom(ctx context.Context, c client.Client, u *unstructured.Unstructured) error { // want unstructuredMergeFrom:"writes lists"
	base := u.DeepCopy()
	_ = unstructured.SetNestedField(u.Object, []any{}, "status", "conditions")
	return c.Status().Patch(ctx, u, client.MergeFrom(base)) // want `status\.conditions: not known from the Go type`
}

// A map variable followed to its literal, which holds a list; one written
// by index, or handed to a function, before it is set is not followed; a
// list set through an accessor of the object's content.
func unstructuredMapVariables(ctx context.Context, c client.Client, u *unstructured.Unstructured) error { // want unstructuredMapVariables:"writes lists"
	withList := map[string]interface{}{
		"ready":     true,
		"addresses": []interface{}{"10.0.0.1"},
	}
	withIndex := map[string]interface{}{"ready": true}
	withIndex["conditions"] = []interface{}{}
	handed := map[string]interface{}{"ready": true}
	fill(handed)

	a := u.DeepCopy()
	_ = unstructured.SetNestedMap(a.Object, withList, "status")
	if err := c.Status().Patch(ctx, a, client.MergeFrom(u)); err != nil { // want `status is set by SetNestedMap to a value that may hold a list`
		return err
	}
	b := u.DeepCopy()
	_ = unstructured.SetNestedMap(b.Object, withIndex, "status")
	if err := c.Status().Patch(ctx, b, client.MergeFrom(u)); err != nil { // want `status is set by SetNestedMap`
		return err
	}
	d := u.DeepCopy()
	_ = unstructured.SetNestedMap(d.Object, handed, "status")
	if err := c.Status().Patch(ctx, d, client.MergeFrom(u)); err != nil { // want `status is set by SetNestedMap`
		return err
	}
	base := u.DeepCopy()
	_ = contract.Addresses().Set(u, []string{"10.0.0.1"})
	return c.Status().Patch(ctx, u, client.MergeFrom(base)) // want `the object is handed to Set, which may change its lists`
}

func fill(m map[string]interface{}) { m["conditions"] = []interface{}{} } // want fill:"writes lists"

// Nothing below is reported.

// A merge patch that changes scalars alone carries no list.
func scalarOnly(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	w.Status.Phase = "Ready"
	if conditions.IsTrue(w, "Ready") && util.IsReady(w) && meta.FindStatusCondition(w.Status.Conditions, "Ready") != nil {
		fmt.Println("ready", w)
	}
	return c.Status().Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// An empty patch, and a list of the spec or the metadata changed: a status
// patch carries neither.
func nothingOfStatus(ctx context.Context, c client.Client, w *v1.Widget) error {
	base := w.DeepCopy()
	if err := c.Status().Patch(ctx, w, client.MergeFrom(base)); err != nil {
		return err
	}
	base = w.DeepCopy()
	w.Spec.Ports = append(w.Spec.Ports, 80)
	w.SetFinalizers(nil)
	w.Finalizers = append(w.Finalizers, "example.com/finalizer")
	w.ObjectMeta.OwnerReferences = nil
	return c.Status().Patch(ctx, w, client.MergeFrom(base))
}

// An unstructured object's scalar set, and its spec's list.
func unstructuredScalar(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	base := u.DeepCopy()
	_ = unstructured.SetNestedField(u.Object, true, "status", "initialization", "provisioned")
	_ = unstructured.SetNestedField(u.Object, []any{"a"}, "spec", "ports")
	return c.Status().Patch(ctx, u, client.MergeFrom(base))
}

// A map variable of booleans set as the status, twice (Cluster API's
// node label test), a boolean set through an accessor, and the object's
// getters, which write nothing.
func unstructuredBooleans(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	trueStatus := map[string]interface{}{
		"interruptible": true,
		"ready":         true,
	}
	falseStatus := map[string]interface{}{
		"interruptible": false,
		"ready":         true,
	}
	trueObj := u.DeepCopy()
	_ = unstructured.SetNestedMap(trueObj.Object, trueStatus, "status")
	if err := c.Status().Patch(ctx, trueObj, client.MergeFrom(u)); err != nil {
		return err
	}
	falseObj := trueObj.DeepCopy()
	_ = unstructured.SetNestedMap(falseObj.Object, falseStatus, "status")
	if err := c.Status().Patch(ctx, falseObj, client.MergeFrom(trueObj)); err != nil {
		return err
	}
	original := u.DeepCopy()
	if err := contract.Provisioned().Set(u, true); err != nil {
		return fmt.Errorf("%s %s: %w", u.GetAPIVersion(), u.GroupVersionKind(), err)
	}
	return c.Status().Patch(ctx, u, client.MergeFrom(original))
}

// A parameter rebound to another object: what the caller handed in is not
// changed.
func latest(w *v1.Widget, ws []*v1.Widget) *v1.Widget {
	for _, x := range ws {
		w = x
	}
	return w
}

// The list changed before the snapshot is in it.
func beforeSnapshot(ctx context.Context, c client.Client, w *v1.Widget) error { // want beforeSnapshot:"writes lists"
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready"})
	base := w.DeepCopy()
	w.Status.Phase = "Ready"
	return c.Status().Patch(ctx, w, client.MergeFrom(base))
}

func rawWithoutLists(ctx context.Context, c client.Client, w *v1.Widget, ws clientset.WidgetInterface) error {
	if err := c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"a":"b"}}}`))); err != nil {
		return err
	}
	data, err := json.Marshal(struct{ Phase string }{"Ready"})
	if err != nil {
		return err
	}
	if _, err := ws.Patch(ctx, w.Name, types.MergePatchType, data, metav1.PatchOptions{}, "status"); err != nil {
		return err
	}
	_, err = ws.Patch(ctx, w.Name, types.JSONPatchType, []byte(`[{"op":"add"}]`), metav1.PatchOptions{}, "status")
	return err
}

func notStatus(ctx context.Context, c client.Client, w *v1.Widget, ws clientset.WidgetInterface, d dynamic.ResourceInterface, u *unstructured.Unstructured) error { // want notStatus:"writes lists"
	base := w.DeepCopy()
	w.Spec.Replicas = 3
	w.Status.Conditions = nil
	if err := c.Patch(ctx, w, client.MergeFrom(base)); err != nil {
		return err
	}
	if err := c.Update(ctx, w); err != nil {
		return err
	}
	if err := c.SubResource("scale").Update(ctx, w); err != nil {
		return err
	}
	if _, err := ws.Update(ctx, w, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if _, err := d.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		return err
	}
	_, err := ws.Patch(ctx, w.Name, types.MergePatchType, []byte(`{"spec":{"ports":[]}}`), metav1.PatchOptions{})
	return err
}

func apply(ctx context.Context, c client.Client, w *v1.Widget) error {
	if err := c.Status().Patch(ctx, w, client.Apply); err != nil {
		return err
	}
	return c.Status().Patch(ctx, w, client.RawPatch(types.ApplyPatchType, nil))
}

// Helper-managed and skipped writes are reported only with their flags.
func helperAndSkipped(ctx context.Context, c client.Client, w *v1.Widget, p client.Patch, data []byte) error { // want helperAndSkipped:"writes lists"
	h, _ := patch.NewHelper(w, c)
	conditions.MarkTrue(w, "Ready")
	if err := h.Patch(ctx, w); err != nil {
		return err
	}
	if err := c.Status().Patch(ctx, w, somePatch(w)); err != nil {
		return err
	}
	return c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, data))
}

func somePatch(w *v1.Widget) client.Patch { return client.MergeFrom(w) }
