package widgets

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// setUpStatus is a test's status write: reported unless -skiptests.
func setUpStatus(ctx context.Context, c client.Client, w *v1alpha1.Widget) error {
	return c.Status().Update(ctx, w)
}
