package inspect

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

func TestEntriesNamesTheObjectAndKeepsOrder(t *testing.T) {
	ref := ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w"}
	mfs := []metav1.ManagedFieldsEntry{
		ownershiptest.Entry("b", ownershiptest.Apply, "status", ownershiptest.ApplyB),
		ownershiptest.Entry("r", ownershiptest.Apply, "status", ownershiptest.ApplyR),
	}
	o, err := Entries(ref, mfs)
	if err != nil {
		t.Fatal(err)
	}
	if o.Object != ref || len(o.Entries) != 2 || o.Entries[0].Manager != "b" || o.Entries[1].Manager != "r" {
		t.Fatalf("Entries = %v", o)
	}
	bare := ownership.ObjectRef{Name: "w"}
	_, err = Entries(bare, nil)
	var oe *ownership.ObjectError
	if !errors.Is(err, ownership.ErrNoManagedFields) || !errors.As(err, &oe) || oe.Object != bare {
		t.Fatalf("no managedFields: %v, want an *ObjectError naming %v wrapping ErrNoManagedFields", err, bare)
	}
}

func TestDecode(t *testing.T) {
	if es, err := Decode(nil); es != nil || err != nil {
		t.Fatalf("Decode(nil) = %v, %v", es, err)
	}
	mfs := []metav1.ManagedFieldsEntry{
		ownershiptest.Entry("b", ownershiptest.Apply, "status", ownershiptest.ApplyB),
		{Manager: "odd", FieldsType: "FieldsV2"},
	}
	es, err := Decode(mfs[:1])
	if err != nil || len(es) != 1 || es[0].Manager != "b" || es[0].Fields.Empty() {
		t.Fatalf("Decode = %v, %v", es, err)
	}
	var oe *ownership.ObjectError
	if _, err := Decode(mfs); !errors.Is(err, ownership.ErrBadManagedFields) || errors.As(err, &oe) {
		t.Fatalf("bad entry: %v, want ErrBadManagedFields without an object", err)
	}
}
