// Package batcher is a stub of statusapply's batcher.
package batcher

import "sigs.k8s.io/controller-runtime/pkg/client"

type Batch struct{}

type ApplyOption interface{}

type Mutator[O client.Object, AC any] func(ac AC, observed O) error

type Edit[O client.Object] func(obj O) error

func Status[O client.Object, AC any](b *Batch, obj O, manager string, mutate Mutator[O, AC], opts ...ApplyOption) error {
	return nil
}

func Object[O client.Object, AC any](b *Batch, obj O, manager string, mutate Mutator[O, AC], opts ...ApplyOption) error {
	return nil
}

func EditStatus[O client.Object](b *Batch, obj O, manager string, edit Edit[O], opts ...ApplyOption) error {
	return nil
}

func EditObject[O client.Object](b *Batch, obj O, manager string, edit Edit[O], opts ...ApplyOption) error {
	return nil
}
