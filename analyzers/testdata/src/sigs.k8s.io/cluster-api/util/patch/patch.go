// Package patch is a stub of Cluster API's util/patch.
package patch

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

type Helper struct{}

func NewHelper(obj client.Object, c client.Client) (*Helper, error) { return &Helper{}, nil }

func (h *Helper) Patch(ctx context.Context, obj client.Object) error { return nil }
