package ssa

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/jsonvalue"
	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
)

// The fuzz targets of this file check every input the package validates or
// reads against an oracle: the API server's own checks (the function it runs
// on an apply's options, the Widget CRD's schema validation) or a plain
// restatement of the documented rule. `make fuzz` runs each; their seed
// corpora (below and under testdata/fuzz) run with the unit tests.

// FuzzValidateFieldManager: ValidateFieldManager accepts exactly the names
// the API server accepts as an apply's fieldManager
// (metav1validation.ValidatePatchOptions for an apply patch, which also
// requires a name), and every refusal wraps ErrInvalidInput.
func FuzzValidateFieldManager(f *testing.F) {
	for _, s := range []string{"readiness", strings.Repeat("m", 128), strings.Repeat("m", 129), "contrôleur/état-✓",
		"", "bad\tmanager", "bad\nmanager", "bad\x00manager", "\xff", strings.Repeat("é", 64), strings.Repeat("é", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, manager string) {
		err := ValidateFieldManager(manager)
		if err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("ValidateFieldManager(%q) = %v, which does not wrap ErrInvalidInput", manager, err)
		}
		serverErrs := metav1validation.ValidatePatchOptions(&metav1.PatchOptions{FieldManager: manager}, types.ApplyYAMLPatchType)
		if (err == nil) != (len(serverErrs) == 0) {
			t.Fatalf("ValidateFieldManager(%q) = %v, but the API server says %v", manager, err, serverErrs)
		}
	})
}

// FuzzSetCondition builds a condition from pieces (repeated, so that the
// fuzzer reaches the length limits: 316 bytes for a type, 63 for its name
// part, 1024 for a reason, 32768 for a message) and sets it with
// SetCondition. Properties:
//
//   - a refusal wraps ErrInvalidInput and leaves the list alone;
//   - an accepted condition, as the apply configuration encodes it, passes the
//     Widget CRD's validation (what the API server runs), decodes into a
//     metav1.Condition (what a typed reader does) and passes Apply's own
//     check of unstructured conditions, so that SetCondition never lets
//     through what Apply or the API server refuses;
//   - a refused condition, as the API server reads it, is refused by
//     metav1validation.ValidateCondition or by the Widget CRD's validation,
//     or cannot be encoded as JSON the API server reads: the check accepts
//     what both accept.
func FuzzSetCondition(f *testing.F) {
	f.Add("", uint8(0), "Ready", uint8(1), "True", "Up", uint8(1), "up", uint16(1), int64(3), int64(1767323045))
	f.Add("example.com", uint8(1), "Synced", uint8(1), "False", "NotYet", uint8(1), "", uint16(0), int64(0), int64(0))
	f.Add("a", uint8(253), "b", uint8(63), "Unknown", "R", uint8(1), "é", uint16(16385), int64(1), int64(1))
	f.Add("", uint8(0), "bad type!", uint8(1), "Maybe", "bad reason!", uint8(1), "x", uint16(32769), int64(-1), int64(-62135596801))
	f.Add("", uint8(0), "T", uint8(64), "True", "R", uint8(255), "m", uint16(1), int64(0), int64(253402300800))
	server := newCRDValidator(f)
	f.Fuzz(func(t *testing.T, prefix string, prefixRepeat uint8, name string, nameRepeat uint8, status, reason string,
		reasonRepeat uint8, message string, messageRepeat uint16, generation, lastTransition int64) {
		condType := strings.Repeat(name, int(nameRepeat))
		if prefix != "" {
			condType = strings.Repeat(prefix, int(prefixRepeat)) + "/" + condType
		}
		cond := metav1.Condition{
			Type: condType, Status: metav1.ConditionStatus(status),
			Reason:  strings.Repeat(reason, int(reasonRepeat)),
			Message: strings.Repeat(message, int(messageRepeat)),
		}
		if lastTransition != 0 {
			cond.LastTransitionTime = metav1.NewTime(time.Unix(lastTransition, 0))
		}
		if generation%2 == 0 {
			// Half the inputs let SetCondition default observedGeneration.
			cond.ObservedGeneration = generation / 2
		}
		other := *metav1ac.Condition().WithType("Other").WithStatus(metav1.ConditionTrue).WithReason("R").
			WithMessage("").WithLastTransitionTime(metav1.NewTime(time.Unix(1767323045, 0)))
		conds := []metav1ac.ConditionApplyConfiguration{other}
		err := SetCondition(&conds, nil, generation, cond)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("SetCondition(%+v) = %v, which does not wrap ErrInvalidInput", cond, err)
			}
			if len(conds) != 1 || conds[0].Type == nil || *conds[0].Type != "Other" {
				t.Fatalf("a refused condition changed the list: %+v", conds)
			}
			if cond.LastTransitionTime.IsZero() {
				cond.LastTransitionTime = metav1.Now()
			}
			if cond.ObservedGeneration == 0 {
				cond.ObservedGeneration = generation
			}
			if read, ok := readBack(cond); ok && len(metav1validation.ValidateCondition(read, field.NewPath("c"))) == 0 &&
				len(server.validateConditions(unstructuredConditions(t, []metav1.Condition{cond}))) == 0 {
				t.Fatalf("SetCondition refused %+v (%v), which ValidateCondition and the API server accept", cond, err)
			}
			return
		}
		raw, mErr := json.Marshal(conds)
		if mErr != nil {
			t.Fatalf("encoding %+v: %v", conds, mErr)
		}
		var items []any
		if uErr := utiljson.Unmarshal(raw, &items); uErr != nil {
			t.Fatalf("decoding %s: %v", raw, uErr)
		}
		if errs := server.validateConditions(items); len(errs) > 0 {
			t.Fatalf("SetCondition accepted %+v, which the API server refuses: %v", cond, errs)
		}
		var typed []metav1.Condition
		if uErr := json.Unmarshal(raw, &typed); uErr != nil {
			t.Fatalf("SetCondition accepted %+v, which a typed reader cannot decode: %v", cond, uErr)
		}
		if vErr := validateConditionItems(items, nil); vErr != nil {
			t.Fatalf("SetCondition accepted %+v, which Apply refuses: %v", cond, vErr)
		}
	})
}

// unstructuredConditions encodes conds as a typed client sends them and
// decodes them as the API server reads a custom resource.
func unstructuredConditions(t *testing.T, conds []metav1.Condition) []any {
	t.Helper()
	raw, err := json.Marshal(conds)
	if err != nil {
		t.Fatalf("encoding %+v: %v", conds, err)
	}
	var items []any
	if err := utiljson.Unmarshal(raw, &items); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return items
}

// readBack returns c as the API server reads it from JSON (invalid UTF-8 as
// U+FFFD), and false when c does not survive its encoding (metav1.Time prints
// RFC 3339, which has four-digit years only).
func readBack(c metav1.Condition) (metav1.Condition, bool) {
	var back metav1.Condition
	raw, err := json.Marshal(c)
	return back, err == nil && json.Unmarshal(raw, &back) == nil
}

// FuzzConditionItems reads arbitrary JSON as an intent's status.conditions,
// the way Apply checks conditions however they were written. Properties:
//
//   - the check never panics, and a refusal wraps ErrInvalidInput;
//   - the memo of valid names changes nothing: the verdict through one memo
//     shared by every input equals the verdict without it;
//   - what the check accepts, the API server accepts (the Widget CRD's
//     validation), and a typed reader decodes into metav1.Condition values
//     that metav1validation.ValidateConditions accepts;
//   - conversely, conditions that the API server accepts and that pass
//     ValidateConditions (stricter than the CRD's schema for a type's name
//     part and a message's length in bytes; the CRD's is stricter for a
//     type's whole length) are accepted.
func FuzzConditionItems(f *testing.F) {
	for _, items := range [][]any{
		{condition("Ready", nil), condition("example.com/Synced", nil)},
		{},
		{condition("Ready", map[string]any{"message": ""})},
		{condition("Ready", map[string]any{"observedGeneration": nil})},
		{condition("Ready", map[string]any{"observedGeneration": 4.0})},
		{condition("Ready", map[string]any{"lastTransitionTime": "2026-01-02T03:04:05.5+02:00"})},
		{condition("bad type!", nil)},
		{condition("Ready", map[string]any{"type": nil})},
		{condition("Ready", map[string]any{"reason": "bad reason!"})},
		{condition("Ready", map[string]any{"status": "Maybe"})},
		{condition("Ready", map[string]any{"lastTransitionTime": nil})},
		{condition("Ready", map[string]any{"lastTransitionTime": "yesterday"})},
		{condition("Ready", map[string]any{"lastTransitionTime": int64(5)})},
		{condition("Ready", map[string]any{"observedGeneration": int64(-1)})},
		{condition("Ready", map[string]any{"observedGeneration": 1.5})},
		{condition("Ready", map[string]any{"observedGeneration": "3"})},
		{condition("Ready", map[string]any{"reason": true})},
		{condition("Ready", map[string]any{"message": nil})},
		{condition("Ready", nil), condition("Ready", map[string]any{"status": "False"})},
		{"Ready"},
		{condition("Ready", map[string]any{"unknown": "pruned"})},
		{condition(strings.Repeat("a", 253)+"/"+strings.Repeat("b", 63), nil)},
		{condition(strings.Repeat("b", 64), nil)},
		{condition("Ready", map[string]any{"message": strings.Repeat("é", 16385)})},
		{condition("Ready", map[string]any{"lastTransitionTime": "2026-01-02t03:04:05z"})},
	} {
		raw, err := json.Marshal(items)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(raw))
	}
	f.Add(`{"Ready":"True"}`)
	server := newCRDValidator(f)
	f.Fuzz(func(t *testing.T, doc string) {
		var items any
		if utiljson.Unmarshal([]byte(doc), &items) != nil {
			return
		}
		err := validateConditionItems(items, nil)
		if err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s: %v does not wrap ErrInvalidInput", doc, err)
		}
		serverErrs := server.validateConditions(items)
		typed, decodeErr := typedConditions(items)
		var ruleErrs field.ErrorList
		if decodeErr == nil {
			ruleErrs = metav1validation.ValidateConditions(typed, conditionsPath)
		}
		if err == nil {
			switch {
			case len(serverErrs) > 0:
				t.Fatalf("%s: accepted, but the API server refuses it: %v", doc, serverErrs)
			case decodeErr != nil:
				t.Fatalf("%s: accepted, but a typed reader cannot decode it: %v", doc, decodeErr)
			case len(ruleErrs) > 0:
				t.Fatalf("%s: accepted, but ValidateConditions refuses it: %v", doc, ruleErrs)
			}
			return
		}
		if len(serverErrs) == 0 && decodeErr == nil && len(ruleErrs) == 0 {
			t.Fatalf("%s: refused (%v), but the API server and ValidateConditions accept it", doc, err)
		}
	})
}

// typedConditions decodes items as a typed client does: from JSON into
// metav1.Condition values.
func typedConditions(items any) ([]metav1.Condition, error) {
	raw, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	var out []metav1.Condition
	// Case-sensitive, as the API server decodes: a key spelled otherwise is
	// not the field.
	return out, utiljson.Unmarshal(raw, &out)
}

// FuzzUnchanged compares two arbitrary JSON objects as an intent and the
// owned content. Unchanged must be reflexive and symmetric, must hold for
// values jsonvalue.Equal finds equal, and must agree with sameState, a plain
// restatement of its contract: identity left out, an object holding nothing
// the same as an absent one, numbers by exact value.
func FuzzUnchanged(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"apiVersion":"demo.statusapply.io/v1alpha1","kind":"Widget","metadata":{"name":"w1","namespace":"ns"}}`, `{}`},
		{`{"metadata":{"name":"w1","resourceVersion":"7","uid":"u"}}`, `{}`},
		{`{"status":{"phase":"On"}}`, `{"status":{"phase":"On"}}`},
		{`{"status":{"readyReplicas":3}}`, `{"status":{"readyReplicas":3.0}}`},
		{`{"status":{"plan":{}}}`, `{}`},
		{`{"status":{"phase":"Off"}}`, `{"status":{"phase":"On"}}`},
		{`{"metadata":{"name":"w1","labels":{"a":"b"}}}`, `{}`},
		{`{"status":{"conditions":[{"type":"A"},{"type":"B"}]}}`, `{"status":{"conditions":[{"type":"B"},{"type":"A"}]}}`},
		{`{"status":{"conditions":[{}]}}`, `{"status":{"conditions":[null]}}`},
		{`{"metadata":"x"}`, `{"metadata":null}`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		var x, y map[string]any
		if utiljson.Unmarshal([]byte(a), &x) != nil || utiljson.Unmarshal([]byte(b), &y) != nil || x == nil || y == nil {
			return
		}
		if !unchangedIntent(x, x) || !unchangedIntent(y, y) {
			t.Fatalf("Unchanged is not reflexive on %s or %s", a, b)
		}
		got := unchangedIntent(x, y)
		if got != unchangedIntent(y, x) {
			t.Fatalf("unchangedIntent(%s, %s) is not symmetric", a, b)
		}
		if want := sameState(x, y); got != want {
			t.Fatalf("unchangedIntent(%s, %s) = %v, want %v", a, b, got, want)
		}
		if jsonvalue.Equal(x, y) && !got {
			t.Fatalf("unchangedIntent(%s, %s) is false for equal values", a, b)
		}
	})
}

// sameState is the oracle of FuzzUnchanged: both sides with identity
// removed and empty objects dropped, compared exactly.
func sameState(a, b map[string]any) bool {
	strip := func(m map[string]any) any {
		out := map[string]any{}
		for k, v := range m {
			if k == "apiVersion" || k == "kind" {
				continue
			}
			if md, ok := v.(map[string]any); ok && k == "metadata" {
				rest := map[string]any{}
				for mk, mv := range md {
					if mk != "name" && mk != "namespace" && mk != "resourceVersion" && mk != "uid" && mk != "generateName" {
						rest[mk] = mv
					}
				}
				v = rest
			}
			out[k] = v
		}
		return dropEmpty(out)
	}
	// jsonvalue.Equal is itself held to exact rational comparison of numbers
	// by jsonvalue's FuzzEqual; only the empty-is-absent rule is restated here.
	return jsonvalue.Equal(strip(a), strip(b))
}

// dropEmpty removes nulls and objects that hold nothing from maps, and makes
// such an object inside a list null.
func dropEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, child := range x {
			if c := dropEmpty(child); c != nil {
				out[k] = c
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = dropEmpty(x[i])
		}
		return out
	}
	return v
}

// FuzzOwned reads two arbitrary objects carrying one arbitrary Apply entry
// (fieldsV1) of a manager, as Widgets: the object a manager's state was
// extracted from, and a later observation of it. Properties:
//
//   - Owned never panics; its errors wrap ErrInvalidInput, and when the
//     entry itself does not decode, ownership.ErrBadManagedFields too;
//   - Owned finds the entry exactly when ownership.AppliedFields does, and
//     fails whenever AppliedFields cannot decode it;
//   - the remembered state is sound: when the extraction is complete (it
//     holds every field of the entry, the condition for reuse) and valuesMatch
//     says the later object still holds the extracted values (so that the
//     state serves again without extracting), extracting from the later
//     object gives the same content;
//   - what Owned extracts is on the object: valuesMatch holds between the two,
//     unless the entry names fields the schema does not have (the API server
//     never writes such an entry; extraction then yields nulls, and the miss
//     only costs an extraction);
//   - extracting again, from an object made of the extracted content with
//     the same entry, gives the same content (idempotence).
func FuzzOwned(f *testing.F) {
	const readyEntry = `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{},"f:reason":{}}},"f:phase":{}}}`
	const running = `{"status":{"phase":"Running"}}`
	for _, seed := range [][4]string{
		{`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","reason":"Up","message":"m"},{"type":"B","status":"False"}]}}`,
			`{"status":{"phase":"Running","conditions":[{"type":"B","status":"True"},{"type":"Ready","status":"True","reason":"Up","message":"changed"}]}}`, readyEntry, "readiness"},
		{`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","reason":"Up"}]}}`,
			`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False","reason":"Up"}]}}`, readyEntry, "readiness"},
		{running, `{"status":{"phase":"Done"}}`, `{"f:status":{"f:phase":{}}}`, "readiness"},
		{running, running, `{}`, "readiness"},
		{`{"status":{"phase":7}}`, running, `{"f:status":{"f:phase":{}}}`, "readiness"},
		{`{"status":{"attributes":{"zone":"a"},"plan":{"id":"p","steps":["a","b"]}}}`,
			`{"status":{"attributes":{"zone":"a","rack":"1"},"plan":{"id":"q","steps":["b","a"]}}}`, `{"f:status":{"f:attributes":{"f:zone":{}},"f:plan":{"f:steps":{}}}}`, "m"},
		{running, running, `{"f:status":{"k:{\"type\":\"Ready\"}":{}}}`, "readiness"},
		{running, running, `"not a field set"`, "readiness"},
		{running, running, `{"x:status":{}}`, "readiness"},
		{`{"status":{"observedGeneration":10000000000000001}}`, `{"status":{"observedGeneration":1e16}}`, `{"f:status":{"f:observedGeneration":{}}}`, "m"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	tc := widgetConverter(f)
	ks := widgetSchema(f, tc)
	f.Fuzz(func(t *testing.T, doc, laterDoc, fields, manager string) {
		var content, later map[string]any
		var set any
		if utiljson.Unmarshal([]byte(doc), &content) != nil || content == nil ||
			utiljson.Unmarshal([]byte(laterDoc), &later) != nil || later == nil ||
			utiljson.Unmarshal([]byte(fields), &set) != nil {
			return
		}
		observed := widgetWithEntry(content, set, manager)
		owned, found, err := extractOwned(tc, observed, manager, StatusSubresource)
		_, appliedFound, appliedErr := ownership.AppliedFields(observed, manager, string(StatusSubresource))
		if err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("Owned: %v does not wrap ErrInvalidInput", err)
		}
		if appliedErr != nil {
			if !errors.Is(appliedErr, ownership.ErrBadManagedFields) {
				t.Fatalf("AppliedFields: %v does not wrap ownership.ErrBadManagedFields", appliedErr)
			}
			if !errors.Is(err, ownership.ErrBadManagedFields) {
				t.Fatalf("AppliedFields cannot decode the entry (%v), but Owned says %v", appliedErr, err)
			}
			return
		}
		if found != appliedFound && err == nil {
			t.Fatalf("Owned found %v, AppliedFields %v", found, appliedFound)
		}
		if err != nil || !found {
			return
		}
		if !unchangedIntent(owned, owned) {
			t.Fatalf("Unchanged is false for %v and itself", owned)
		}
		if !ownsItemKeys(fields) {
			// The API server's entries own a keyed item's key fields with it;
			// without them the extracted item cannot be told from another.
			return
		}
		if bare := objects.WithoutManagedFields(observed).Object; !valuesMatch(ks.Schema, ks.TypeRef, owned, bare) && !holdsNull(owned) {
			t.Fatalf("the extracted %v does not match the object it came from %v", owned, bare)
		}
		if holdsNull(owned) {
			// An entry naming only fields the schema lacks extracts as a null
			// list item, which no object can hold: nothing to extract again.
			return
		}
		again, found, err := extractOwned(tc, widgetWithEntry(runtime.DeepCopyJSON(owned), set, manager), manager, StatusSubresource)
		if err != nil || !found {
			t.Fatalf("extracting %v again: found %v, %v", owned, found, err)
		}
		if !unchangedIntent(again, owned) {
			t.Fatalf("extracting again gave %v, not %v", again, owned)
		}
		raw, err := json.Marshal(set)
		if err != nil {
			t.Fatal(err)
		}
		if _, complete, err := extractFrom(tc, objects.WithoutManagedFields(observed), raw); err != nil || !complete {
			return // the state is not reused at another resourceVersion
		}
		laterObj := widgetWithEntry(later, set, manager)
		if !valuesMatch(ks.Schema, ks.TypeRef, owned, objects.WithoutManagedFields(laterObj).Object) {
			return
		}
		fresh, found, err := extractOwned(tc, laterObj, manager, StatusSubresource)
		if err != nil || !found {
			return // the later object does not type: the state is not used (Apply fails first)
		}
		if !unchangedIntent(fresh, owned) {
			t.Fatalf("valuesMatch holds, so the remembered %v would serve, but the later object holds %v", owned, fresh)
		}
	})
}

// holdsNull reports whether v holds a null anywhere.
func holdsNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, c := range x {
			if holdsNull(c) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if holdsNull(c) {
				return true
			}
		}
	}
	return false
}

// widgetWithEntry returns content as a Widget whose managedFields hold an
// Apply entry of manager on the status subresource with fieldsV1 set, and an
// Update entry of another manager.
func widgetWithEntry(content map[string]any, set any, manager string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: content}
	if _, ok := content["metadata"].(map[string]any); !ok {
		content["metadata"] = map[string]any{}
	}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	md := content["metadata"].(map[string]any)
	md["name"], md["namespace"] = "w", "ns"
	md["managedFields"] = []any{
		map[string]any{"manager": "other", "operation": "Update", "subresource": "status", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:status": map[string]any{"f:phase": map[string]any{}}}},
		map[string]any{"manager": manager, "operation": "Apply", "subresource": "status", "fieldsType": "FieldsV1", "fieldsV1": set},
	}
	return u
}

// FuzzReadMeta: readMeta, which decodes only the metadata's resourceVersion,
// uid and managedFields out of a response, reads on valid JSON what
// sigs.k8s.io/json (the decoder apimachinery's serializer uses: keys are
// case-sensitive) reads into the same struct, refuses what that decoder
// refuses, and never panics on malformed input.
func FuzzReadMeta(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"K","metadata":{"name":"n","uid":"u","resourceVersion":"7","managedFields":[{"manager":"m","operation":"Apply","subresource":"status","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{}}}}},"time":"2026-01-01T00:00:00Z"}]},"status":{}}`,
		`{"metadata":{"uid":"a\"\u00e9\ud83d\ude00","managedFields":null}}`,
		`{"metadata":null}`,
		`{"metadata":{"resourceVersion":7}}`,
		`{"metadata":{"ResourceVersion":"7"}}`,
		`{"x":[1,2.5e-3,true,false,null,{}],"metadata":{"managedFields":[{"fieldsV1":[1,{"a":"b"}]}]}}`,
		`[]`, `null`, `{"metadata":{"uid":"` + "\xff" + `"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got answerMeta
		err := readMeta(raw, &got)
		if !json.Valid(raw) || bytes.Count(raw, []byte(`"metadata"`)) > 1 || bytes.Count(raw, []byte(`"managedFields"`)) > 1 {
			return // malformed (readMeta reads no further than the metadata) or a repeated key: no panic is all
		}
		var top map[string]json.RawMessage
		if kjson.UnmarshalCaseSensitivePreserveInts(raw, &top) != nil || top["metadata"] == nil {
			if err == nil {
				t.Fatalf("readMeta(%s) = %+v, want an error: not an object with metadata", raw, got)
			}
			return
		}
		// The reference decodes the same fields by their JSON names, the
		// fields of each entry left as written.
		var ref struct {
			ResourceVersion string `json:"resourceVersion"`
			UID             string `json:"uid"`
			ManagedFields   []struct {
				Manager     string          `json:"manager"`
				Operation   string          `json:"operation"`
				Subresource string          `json:"subresource"`
				FieldsType  string          `json:"fieldsType"`
				FieldsV1    json.RawMessage `json:"fieldsV1"`
			} `json:"managedFields"`
		}
		wantErr := kjson.UnmarshalCaseSensitivePreserveInts(top["metadata"], &ref)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("readMeta(%s): err %v, the reference's %v", raw, err, wantErr)
		}
		if err != nil {
			return
		}
		want := answerMeta{ResourceVersion: ref.ResourceVersion, UID: types.UID(ref.UID)}
		for _, e := range ref.ManagedFields {
			mf := metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: metav1.ManagedFieldsOperationType(e.Operation),
				Subresource: e.Subresource, FieldsType: e.FieldsType}
			if len(e.FieldsV1) > 0 && string(e.FieldsV1) != "null" { // null is no fields, as metav1.FieldsV1 decodes it
				mf.FieldsV1 = metav1.NewFieldsV1(string(e.FieldsV1))
			}
			want.ManagedFields = append(want.ManagedFields, mf)
		}
		if len(got.ManagedFields) == 0 && len(want.ManagedFields) == 0 {
			got.ManagedFields, want.ManagedFields = nil, nil // [] and null say the same
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("readMeta(%s) = %+v, want %+v", raw, got, want)
		}
	})
}

// ownsItemKeys reports whether the field set fields (JSON), wherever it names
// an item of a map list by its keys, also names those key fields, as every
// entry the API server writes does.
func ownsItemKeys(fields string) bool {
	set := &fieldpath.Set{}
	if err := set.FromJSON(strings.NewReader(fields)); err != nil {
		return true // not a field set: the other properties judge it
	}
	ok := true
	set.Iterate(func(p fieldpath.Path) {
		for i, pe := range p {
			if pe.Key == nil {
				continue
			}
			for _, k := range *pe.Key {
				name := k.Name
				if !set.Has(append(p[:i+1:i+1], fieldpath.PathElement{FieldName: &name})) {
					ok = false
				}
			}
		}
	})
	return ok
}

func TestOwnsItemKeys(t *testing.T) {
	for _, tc := range []struct {
		fields string
		want   bool
	}{
		{`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:status":{}}}}}`, true},
		{`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:tyfe":{},"f:status":{}}}}}`, false},
		{`{"f:status":{"f:phase":{}}}`, true},
	} {
		if got := ownsItemKeys(tc.fields); got != tc.want {
			t.Errorf("ownsItemKeys(%s) = %v, want %v", tc.fields, got, tc.want)
		}
	}
}
