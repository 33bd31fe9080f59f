// Package patch is a stub of Cluster API's deprecated util/deprecated/v1beta1/patch.
package patch

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

type Helper struct{}

type Option interface{}

func NewHelper(obj client.Object, c client.Client) (*Helper, error) { return &Helper{}, nil }

func (h *Helper) Patch(ctx context.Context, obj client.Object, opts ...Option) error { return nil }
