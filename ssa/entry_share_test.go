package ssa

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// The states of one manager on many objects share one copy of an entry once
// an equal one was decoded, and that copy is the Applier's own: changing the
// bytes it came from changes no state. The control is a state remembered
// before any equal entry was decoded, which keeps a copy of its own.
func TestRememberedEntriesAreShared(t *testing.T) {
	h := newHarness(t)
	entry := `{"f:status":{"f:phase":{}}}`
	remember := func(uid string) *ownedState {
		raw := []byte(`{"metadata":{"uid":"` + uid + `","resourceVersion":"5","managedFields":[{"manager":"m","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":` + entry + `}]}}`)
		a := &answer{raw: raw}
		if err := readMeta(raw, &a.meta); err != nil {
			t.Fatal(err)
		}
		h.a.remember(h.t, a, sentContent(t, map[string]any{"status": map[string]any{"phase": "On"}}))
		return h.a.owned.get(ownedKey{uid: types.UID(uid), manager: "m", sub: MainResource})
	}
	before := remember("u0")
	decoded := []byte(entry)
	if _, err := h.a.entries.fields(decoded); err != nil {
		t.Fatal(err)
	}
	copy(decoded, "XXXX")
	a, b := remember("u1"), remember("u2")
	if string(a.entry) != entry || &a.entry[0] != &b.entry[0] {
		t.Fatalf("entries %s at %p and %p, want %s shared", a.entry, &a.entry[0], &b.entry[0], entry)
	}
	if string(before.entry) != entry || &before.entry[0] == &a.entry[0] {
		t.Fatalf("the control expects the first state to keep a copy of its own: %s", before.entry)
	}
}
