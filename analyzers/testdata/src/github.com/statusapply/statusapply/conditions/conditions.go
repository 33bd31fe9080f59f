// Package conditions is a stub of statusapply's conditions package.
package conditions

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/batcher"
)

type Object interface {
	client.Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

func Set(obj Object, c metav1.Condition) bool { return true }

func Edit[O Object](conds ...metav1.Condition) batcher.Edit[O] { return nil }

func Status[O Object](b *batcher.Batch, obj O, manager string, conds ...metav1.Condition) error {
	return nil
}
