package fieldsets

import (
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func TestSubtreeEdges(t *testing.T) {
	status := fieldpath.MakePathOrDie("status")
	phase := fieldpath.MakePathOrDie("status", "phase")
	set := fieldpath.NewSet(status, phase, fieldpath.MakePathOrDie("spec", "x"))
	if got := Subtree(set, fieldpath.Path{}); !got.Empty() {
		t.Errorf("Subtree of the empty path = %v", got)
	}
	got := Subtree(set, status)
	if !got.Has(status) || !got.Has(phase) || got.Size() != 2 {
		t.Errorf("Subtree(.status) = %v, want .status and .status.phase", got)
	}
	if got := Subtree(set, phase); got.Size() != 1 {
		t.Errorf("Subtree(.status.phase) = %v, want the leaf alone", got)
	}
	if got := Subtree(set, fieldpath.MakePathOrDie("metadata", "labels")); !got.Empty() {
		t.Errorf("Subtree of a missing parent = %v", got)
	}
}
