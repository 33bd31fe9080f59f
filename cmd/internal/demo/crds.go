package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/config/crd"
)

// installCRDs creates the example CRDs that the cluster lacks, waits until the
// API server serves Widgets, and returns the CRDs it created.
func installCRDs(ctx context.Context, c client.Client) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	var created []*apiextensionsv1.CustomResourceDefinition
	for _, obj := range crds {
		switch err := c.Create(ctx, obj); {
		case err == nil:
			created = append(created, obj)
		case apierrors.IsAlreadyExists(err):
		default:
			return created, fmt.Errorf("installing CRD %s: %w", obj.Name, err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.List(ctx, &v1alpha1.WidgetList{}, client.Limit(1)) == nil, nil
	})
	if err != nil {
		return created, fmt.Errorf("waiting for the example CRDs to be served: %w", err)
	}
	return created, nil
}

// removeCRDs deletes the CRDs installCRDs created.
func removeCRDs(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition) error {
	var errs []error
	for _, obj := range crds {
		errs = append(errs, client.IgnoreNotFound(c.Delete(ctx, obj)))
	}
	return errors.Join(errs...)
}
