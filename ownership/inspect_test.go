package ownership

import (
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/fieldsets"
	"github.com/statusapply/statusapply/internal/ownershiptest"
)

func TestInspectNoManagedFields(t *testing.T) {
	for name, mfs := range map[string][]metav1.ManagedFieldsEntry{"nil": nil, "empty": {}} {
		t.Run(name, func(t *testing.T) {
			_, err := Inspect(ownershiptest.Widget(mfs...))
			if !errors.Is(err, ErrNoManagedFields) {
				t.Fatalf("err = %v, want ErrNoManagedFields", err)
			}
			var oe *ObjectError
			if !errors.As(err, &oe) || oe.Object != (ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w"}) {
				t.Fatalf("err = %#v, want an ObjectError naming Widget ns/w", err)
			}
		})
	}
}

func TestInspectBadFields(t *testing.T) {
	bad := ownershiptest.Entry("x", ownershiptest.Update, "status", `{"f:status":`)
	wrongType := ownershiptest.Entry("y", ownershiptest.Update, "status", ownershiptest.LegacyAB)
	wrongType.FieldsType = "FieldsV2"
	for name, mf := range map[string]metav1.ManagedFieldsEntry{"undecodable": bad, "fieldsType": wrongType} {
		t.Run(name, func(t *testing.T) {
			_, err := Inspect(ownershiptest.Widget(mf))
			if !errors.Is(err, ErrBadManagedFields) {
				t.Fatalf("err = %v, want one wrapping ErrBadManagedFields", err)
			}
			var oe *ObjectError
			if !errors.As(err, &oe) || oe.Object != (ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w"}) {
				t.Fatalf("err = %#v, want an ObjectError naming Widget ns/w", err)
			}
		})
	}
}

// An unstructured object whose managedFields hold an entry that does not
// decode is not an object without managedFields (found by FuzzInspect's
// properties: Unstructured.GetManagedFields drops the whole list then), and
// AppliedFields reports what Inspect reports.
func TestInspectUnreadableUnstructuredEntries(t *testing.T) {
	withEntries := func(mfs ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "ns", "managedFields": mfs},
		}}
	}
	good := map[string]any{"manager": "b", "operation": "Apply", "subresource": "status", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:status": map[string]any{"f:phase": map[string]any{}}}}
	for _, tc := range []struct {
		name    string
		obj     *unstructured.Unstructured
		inspect error // nil: Inspect succeeds
		applied error // what AppliedFields(obj, "b", "status") wraps
	}{
		{"operation of the wrong type", withEntries(good, map[string]any{"manager": "c", "operation": int64(7)}), ErrBadManagedFields, nil},
		{"an item that is not an entry", withEntries("not an entry", good), ErrBadManagedFields, nil},
		{"fieldsType FieldsV2", withEntries(map[string]any{"manager": "b", "operation": "Apply", "subresource": "status",
			"fieldsType": "FieldsV2", "fieldsV1": map[string]any{}}), ErrBadManagedFields, ErrBadManagedFields},
		{"no entries", withEntries(), ErrNoManagedFields, nil},
		{"readable", withEntries(good), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Inspect(tc.obj)
			if tc.inspect == nil && err != nil || tc.inspect != nil && !errors.Is(err, tc.inspect) {
				t.Fatalf("Inspect: %v, want %v", err, tc.inspect)
			}
			if errors.Is(tc.inspect, ErrBadManagedFields) && errors.Is(err, ErrNoManagedFields) {
				t.Fatalf("Inspect: %v also says there are no managedFields", err)
			}
			_, _, err = AppliedFields(tc.obj, "b", "status")
			if tc.applied == nil && err != nil || tc.applied != nil && !errors.Is(err, tc.applied) {
				t.Fatalf("AppliedFields: %v, want %v", err, tc.applied)
			}
		})
	}
	// The control: the accessor Inspect used before says "none".
	if mfs := withEntries(good, "not an entry").GetManagedFields(); mfs != nil {
		t.Fatalf("Unstructured.GetManagedFields decoded %v; the control expects it to give up", mfs)
	}
}

func TestInspect(t *testing.T) {
	statusOf := func(condType string) fieldpath.Path {
		return fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", condType), "status")
	}
	tests := []struct {
		name       string
		mfs        []metav1.ManagedFieldsEntry
		conditions map[string][]string
		legacy     []string
		owners     map[string][]string // path string -> managers
		shared     map[string][]string
	}{
		{
			name:       "legacy merge-patch writer",
			mfs:        []metav1.ManagedFieldsEntry{ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec), ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)},
			conditions: map[string][]string{"legacy": {"A", "B"}},
			legacy:     []string{"legacy"},
			owners: map[string][]string{
				statusOf("A").String():                               {"legacy"},
				fieldpath.MakePathOrDie("status", "phase").String():  {"legacy"},
				fieldpath.MakePathOrDie("spec", "replicas").String(): {"creator"},
			},
			shared: map[string][]string{},
		},
		{
			name: "legacy and apply managers sharing a condition",
			mfs: []metav1.ManagedFieldsEntry{
				ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("networking", ownershiptest.Apply, "status", ownershiptest.ApplyB),
				ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR),
			},
			conditions: map[string][]string{"legacy": {"A", "B"}, "networking": {"B"}, "readiness": {"R"}},
			legacy:     []string{"legacy"},
			owners: map[string][]string{
				statusOf("B").String():       {"legacy", "networking"},
				statusOf("R").String():       {"readiness"},
				ConditionPath("B").String():  {"legacy", "networking"},
				ConditionsPath().String():    {"legacy"},
				statusOf("Missing").String(): nil,
				StatusPath().String():        {"legacy"},
			},
			shared: map[string][]string{
				ConditionPath("B").String():                         {"legacy", "networking"},
				statusOf("B").String():                              {"legacy", "networking"},
				ConditionPath("B").String() + ".lastTransitionTime": {"legacy", "networking"},
				ConditionPath("B").String() + ".message":            {"legacy", "networking"},
				ConditionPath("B").String() + ".reason":             {"legacy", "networking"},
				ConditionPath("B").String() + ".type":               {"legacy", "networking"},
			},
		},
		{
			name: "before-first-apply is legacy whatever its subresource",
			mfs: []metav1.ManagedFieldsEntry{
				ownershiptest.Entry(BeforeFirstApplyManager, ownershiptest.Update, "", ownershiptest.CreateSpec), ownershiptest.Entry(BeforeFirstApplyManager, ownershiptest.Update, "status", ownershiptest.LegacyAB),
				ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR), ownershiptest.Entry("kubectl", ownershiptest.Update, "", ownershiptest.CreateSpec),
			},
			conditions: map[string][]string{BeforeFirstApplyManager: {"A", "B"}, "readiness": {"R"}},
			legacy:     []string{BeforeFirstApplyManager, BeforeFirstApplyManager},
			owners: map[string][]string{
				fieldpath.MakePathOrDie("spec", "replicas").String(): {BeforeFirstApplyManager, "kubectl"},
			},
			shared: map[string][]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustInspect(t, ownershiptest.Widget(tt.mfs...))
			if got := o.ConditionTypes(); !reflect.DeepEqual(got, tt.conditions) {
				t.Errorf("ConditionTypes() = %v, want %v", got, tt.conditions)
			}
			if got := managerNames(o.Legacy()); !reflect.DeepEqual(got, tt.legacy) {
				t.Errorf("Legacy() = %v, want %v", got, tt.legacy)
			}
			for _, e := range o.Entries {
				if e.Time.IsZero() || e.APIVersion == "" {
					t.Errorf("entry %s lost its time or API version", e)
				}
			}
			for p, want := range tt.owners {
				path := pathFromString(t, o, p)
				if path == nil {
					if want != nil {
						t.Errorf("no entry has path %s", p)
					}
					continue
				}
				if got := managerNames(o.Owners(path)); !reflect.DeepEqual(got, want) {
					t.Errorf("Owners(%s) = %v, want %v", p, got, want)
				}
			}
			got := map[string][]string{}
			for _, sf := range o.SharedStatusFields() {
				got[sf.Path.String()] = sf.Managers
			}
			if !reflect.DeepEqual(got, tt.shared) {
				t.Errorf("SharedStatusFields() = %v, want %v", got, tt.shared)
			}
		})
	}
}

// pathFromString finds the path printed as p among the fields any entry
// owns, so tables can name paths as the API server prints them.
func pathFromString(t *testing.T, o *Ownership, p string) fieldpath.Path {
	t.Helper()
	for _, e := range o.Entries {
		var found fieldpath.Path
		e.Fields.Iterate(func(q fieldpath.Path) {
			if q.String() == p {
				found = q.Copy()
			}
		})
		if found != nil {
			return found
		}
	}
	return nil
}

// managerNames lists the entries' manager names in order.
func managerNames(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Manager)
	}
	return out
}

func TestInspectUnstructuredMatchesTyped(t *testing.T) {
	w := ownershiptest.Widget(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR))
	w.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	typed, untyped := mustInspect(t, w), func() *Ownership {
		o, err := Inspect(u)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}()
	if typed.Object != untyped.Object {
		t.Errorf("objects differ: %v vs %v", typed.Object, untyped.Object)
	}
	if !reflect.DeepEqual(typed.ConditionTypes(), untyped.ConditionTypes()) {
		t.Errorf("condition types differ: %v vs %v", typed.ConditionTypes(), untyped.ConditionTypes())
	}
	if typed.String() != untyped.String() {
		t.Errorf("renderings differ:\n%s\n%s", typed, untyped)
	}
}

func TestRefOf(t *testing.T) {
	if got := RefOf(ownershiptest.Widget()); got != (ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w"}) {
		t.Errorf("typed without kind: %v", got)
	}
	u := &unstructured.Unstructured{}
	u.SetKind("Gadget")
	u.SetName("g")
	if got := RefOf(u); got.String() != "Gadget g" {
		t.Errorf("unstructured cluster-scoped: %q", got)
	}
}

func TestSubtree(t *testing.T) {
	o := mustInspect(t, ownershiptest.Widget(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)))
	set := o.Entries[0].Fields
	sub := fieldsets.Subtree(set, ConditionPath("A"))
	if sub.Size() == 0 || sub.Has(StatusPath()) || sub.Has(ConditionsPath()) {
		t.Fatalf("Subtree must hold the item and its fields only, got:\n%s", sub)
	}
	want := []string{
		`.status.conditions[type="A"]`, `.status.conditions[type="A"].lastTransitionTime`,
		`.status.conditions[type="A"].message`, `.status.conditions[type="A"].reason`,
		`.status.conditions[type="A"].status`, `.status.conditions[type="A"].type`,
	}
	var got []string
	sub.Iterate(func(p fieldpath.Path) { got = append(got, p.String()) })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Subtree = %v, want %v", got, want)
	}
	if !fieldsets.Subtree(set, ConditionPath("Z")).Empty() || !fieldsets.Subtree(nil, StatusPath()).Empty() {
		t.Error("Subtree of a missing prefix must be empty")
	}
	if set.Difference(sub).Has(ConditionPath("A")) || !set.Difference(sub).Has(ConditionsPath()) {
		t.Error("removing the subtree must keep the ancestors")
	}
}

// TestWholeListPerVersion: an entry owning an atomic conditions list through
// one version keeps owning it whole while others own items through a version
// where the list is a map list (Cluster API's Machine v1beta1 and v1beta2);
// within one version, owning the list beside owned items is owning the
// container.
func TestWholeListPerVersion(t *testing.T) {
	whole := ownershiptest.Entry("legacy", ownershiptest.Update, "status", `{"f:status":{".":{},"f:conditions":{},"f:phase":{}}}`)
	whole.APIVersion = "demo.statusapply.io/v1beta1"
	items := ownershiptest.Entry("wb", ownershiptest.Apply, "status", ownershiptest.ApplyB)
	o := mustInspect(t, ownershiptest.Widget(whole, items))
	if !o.OwnsWholeConditionsList(o.Entries[0]) {
		t.Errorf("the v1beta1 entry does not own the whole list; entries %v", o)
	}
	if got := o.OtherStatusFields(o.Entries[0]); len(got) != 1 || got[0].String() != ".status.phase" {
		t.Errorf("other status fields %v, want .status.phase", got)
	}
	// Control: the same entries in one version make the list a container.
	whole.APIVersion = items.APIVersion
	o = mustInspect(t, ownershiptest.Widget(whole, items))
	if o.OwnsWholeConditionsList(o.Entries[0]) {
		t.Errorf("in one version, owning the list beside owned items counts as the whole list")
	}
}
