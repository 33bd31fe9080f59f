package ssa

import (
	"bytes"
	"testing"
)

// The entry an Applier remembers from a response whose decoding was deferred
// has bytes of its own: readMeta slices its entries out of the response, and
// a remembered slice would keep the whole response alive (and change with
// it). The control is readMeta's own entry, which is such a slice.
func TestAnswerEntryDoesNotAliasTheResponse(t *testing.T) {
	raw := []byte(`{"metadata":{"uid":"u1","resourceVersion":"5","managedFields":[{"manager":"m","operation":"Apply","subresource":"status","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:phase":{}}}}]}}`)
	a := &answer{raw: raw}
	if err := readMeta(raw, &a.meta); err != nil {
		t.Fatal(err)
	}
	got, found, err := a.entry("m", StatusSubresource)
	if err != nil || !found || string(got) != `{"f:status":{"f:phase":{}}}` {
		t.Fatalf("entry %s, %v, %v", got, found, err)
	}
	sliced, _, _ := appliedEntryIn(a.meta.ManagedFields, "m", StatusSubresource)
	copy(raw[bytes.Index(raw, []byte("phase")):], "PHASE")
	if string(sliced) == `{"f:status":{"f:phase":{}}}` {
		t.Fatal("the control expects readMeta's entry to be a slice of the response")
	}
	if string(got) != `{"f:status":{"f:phase":{}}}` {
		t.Fatalf("the remembered entry changed with the response: %s", got)
	}
}
