// Package legacy writes status the way the plugin reports, for the test that
// builds golangci-lint with it.
package legacy

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// UpdateStatus replaces the Widget's whole status.
func UpdateStatus(ctx context.Context, c client.Client, w *v1alpha1.Widget) error {
	w.Status.Endpoint = "x"
	return c.Status().Update(ctx, w)
}
