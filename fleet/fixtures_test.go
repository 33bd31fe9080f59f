package fleet

import "sigs.k8s.io/structured-merge-diff/v6/fieldpath"

// mustPath builds a fieldpath.Path or panics; for fixtures only.
func mustPath(parts ...any) fieldpath.Path {
	return fieldpath.MakePathOrDie(parts...)
}
