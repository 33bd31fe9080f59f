// Package patch is a stub of Flux's runtime/patch.
package patch

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

type Option interface{}

type Helper struct{}

func NewHelper(obj client.Object, c client.Client) (*Helper, error) { return &Helper{}, nil }

func (h *Helper) Patch(ctx context.Context, obj client.Object, opts ...Option) error { return nil }

type SerialPatcher struct{}

func NewSerialPatcher(obj client.Object, c client.Client) *SerialPatcher { return &SerialPatcher{} }

func (p *SerialPatcher) Patch(ctx context.Context, obj client.Object, opts ...Option) error {
	return nil
}
