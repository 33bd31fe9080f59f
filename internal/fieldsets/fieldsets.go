// Package fieldsets holds what the module's packages share about managed
// field sets beyond structured-merge-diff's fieldpath: cutting the part of a
// set below a path, and the one encoding of sets the API server writes.
package fieldsets

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// FieldsV1Type is the one fieldsType the API server writes, and the one the
// module reads.
const FieldsV1Type = "FieldsV1"

// Subtree returns the members of s that are prefix itself or lie below it,
// with their full paths; ancestors of prefix are not included even when they
// are members. It never modifies s.
func Subtree(s *fieldpath.Set, prefix fieldpath.Path) *fieldpath.Set {
	out := fieldpath.NewSet()
	if s == nil || len(prefix) == 0 {
		return out
	}
	cur := s
	for _, pe := range prefix[:len(prefix)-1] {
		child, ok := cur.Children.Get(pe)
		if !ok {
			return out
		}
		cur = child
	}
	last := prefix[len(prefix)-1]
	if cur.Members.Has(last) {
		out.Insert(prefix.Copy())
	}
	if child, ok := cur.Children.Get(last); ok {
		child.Iterate(func(p fieldpath.Path) {
			full := append(prefix.Copy(), p...)
			out.Insert(full)
		})
	}
	return out
}
