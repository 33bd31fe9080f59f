package statuswritetestsall

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.com/api/v1"
)

// Without -skiptests, a test's status write is reported.
func setUp(ctx context.Context, c client.Client, w *v1.Widget) error {
	return c.Status().Update(ctx, w) // want `Status\(\)\.Update of \*v1\.Widget`
}
