// Package client is a stub of controller-runtime's client package.
package client

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

type Object interface{ GetName() string }

type ObjectList interface{}

type Patch interface{ Type() types.PatchType }

type Reader interface {
	Get(ctx context.Context, key string, obj Object) error
	List(ctx context.Context, list ObjectList) error
}

type Writer interface {
	Create(ctx context.Context, obj Object) error
	Update(ctx context.Context, obj Object) error
	Patch(ctx context.Context, obj Object, patch Patch) error
	Delete(ctx context.Context, obj Object) error
}

type SubResourceWriter interface {
	Update(ctx context.Context, obj Object) error
	Patch(ctx context.Context, obj Object, patch Patch) error
}

type StatusWriter = SubResourceWriter

type SubResourceClient interface {
	Get(ctx context.Context, obj, sub Object) error
	SubResourceWriter
}

type StatusClient interface{ Status() SubResourceWriter }

type Client interface {
	Reader
	Writer
	StatusClient
	SubResource(name string) SubResourceClient
}

type patch struct{ t types.PatchType }

func (p patch) Type() types.PatchType { return p.t }

var (
	Apply Patch = patch{types.ApplyPatchType}
	Merge Patch = patch{types.MergePatchType}
)

type MergeFromOption interface{}

type MergeFromWithOptimisticLock struct{}

func MergeFrom(obj Object) Patch { return patch{types.MergePatchType} }
func MergeFromWithOptions(obj Object, opts ...MergeFromOption) Patch {
	return patch{types.MergePatchType}
}
func RawPatch(t types.PatchType, data []byte) Patch { return patch{t} }

// Scheme stands for any non-constant string a client returns.
func Scheme(c Client) string { return "" }
