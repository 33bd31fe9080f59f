package widgets

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// Create creates a Widget asking for one replica through c and returns it as
// read back from the server, ready to be the observed object of a batch.
func Create(ctx context.Context, c client.Client, ns, name string) (*v1alpha1.Widget, error) {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.WidgetSpec{Replicas: 1}}
	if err := c.Create(ctx, w); err != nil {
		return nil, err
	}
	return Get(ctx, c, client.ObjectKeyFromObject(w))
}

// CreateEmpty creates a Widget with nothing in its spec through c and returns
// its key. It is the starting point of the specs about managedFields: the
// creating client's entry owns no spec field there.
func CreateEmpty(ctx context.Context, c client.Client, ns, name string) (client.ObjectKey, error) {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	return client.ObjectKeyFromObject(w), c.Create(ctx, w)
}

// Get reads the Widget of key through c, managedFields included.
func Get(ctx context.Context, c client.Client, key client.ObjectKey) (*v1alpha1.Widget, error) {
	w := &v1alpha1.Widget{}
	if err := c.Get(ctx, key, w); err != nil {
		return nil, err
	}
	return w, nil
}

// ClearManagedFields makes the object look never tracked, as one created
// before managedFields existed or cleared since: a single empty entry is the
// API server's spelling of "reset".
func ClearManagedFields(ctx context.Context, c client.Client, key client.ObjectKey) error {
	w, err := Get(ctx, c, key)
	if err != nil {
		return err
	}
	return c.Patch(ctx, w, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`)))
}

// SetManagedFields replaces the object's managedFields with mfs as they are,
// guarded by the object's current resourceVersion, for specs that build an ownership the
// library would never write.
func SetManagedFields(ctx context.Context, c client.Client, key client.ObjectKey, mfs []metav1.ManagedFieldsEntry) error {
	w, err := Get(ctx, c, key)
	if err != nil {
		return err
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": mfs},
		{"op": "replace", "path": "/metadata/resourceVersion", "value": w.ResourceVersion},
	})
	if err != nil {
		return err
	}
	return c.Patch(ctx, w, client.RawPatch(types.JSONPatchType, patch))
}
