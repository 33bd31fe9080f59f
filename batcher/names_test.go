package batcher_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// appliedName names the object an apply configuration is for, whether the
// configuration spells its name as a string (unstructured) or as a pointer
// (generated and pre-encoded configurations).
func appliedName(obj runtime.ApplyConfiguration) string {
	switch named := obj.(type) {
	case interface{ GetName() string }:
		return named.GetName()
	case interface{ GetName() *string }:
		if n := named.GetName(); n != nil {
			return *n
		}
	}
	return fmt.Sprint(obj)
}
