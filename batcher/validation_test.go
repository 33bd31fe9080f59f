package batcher_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// appliesByName counts the status applies a client was sent, per object.
type appliesByName struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *appliesByName) count(name string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[name]
}

// countingFixture returns an Applier on a fake client holding the Widgets
// named, and the per-object count of status applies sent.
func countingFixture(t *testing.T, names ...string) (*ssa.Applier, client.Client, *appliesByName) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	builder := fake.NewClientBuilder().WithScheme(scheme).
		WithTypeConverters(applyconfiguration.NewTypeConverter(scheme)).
		WithStatusSubresource(&v1alpha1.Widget{})
	for _, name := range names {
		builder.WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}})
	}
	applies := &appliesByName{n: map[string]int{}}
	c := interceptor.NewClient(builder.Build(), interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			applies.mu.Lock()
			applies.n[appliedName(obj)]++
			applies.mu.Unlock()
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(scheme)), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a, c, applies
}

// Invalid conditions are refused at Flush whatever wrote them: the entry sends
// nothing and stays queued, and the other entries of the Flush are sent.
func TestInvalidConditionsAreRefusedAtFlush(t *testing.T) {
	for _, tc := range []struct {
		name  string
		queue func(b *batcher.Batch, w *v1alpha1.Widget) error
		want  []string
	}{
		{"Edit with meta.SetStatusCondition, bad type", func(b *batcher.Batch, w *v1alpha1.Widget) error {
			return batcher.EditStatus(b, w, "m", func(o *v1alpha1.Widget) error {
				meta.SetStatusCondition(&o.Status.Conditions, metav1.Condition{Type: "bad type!", Status: metav1.ConditionTrue, Reason: "Up"})
				return nil
			})
		}, []string{`condition "bad type!"`, "status.conditions[bad type!].type"}},
		{"Edit with meta.SetStatusCondition, status Maybe", func(b *batcher.Batch, w *v1alpha1.Widget) error {
			return batcher.EditStatus(b, w, "m", func(o *v1alpha1.Widget) error {
				meta.SetStatusCondition(&o.Status.Conditions, metav1.Condition{Type: "Ready", Status: "Maybe", Reason: "Up"})
				return nil
			})
		}, []string{`condition "Ready"`, "status.conditions[Ready].status"}},
		{"Mutator filling the apply configuration, no lastTransitionTime", func(b *batcher.Batch, w *v1alpha1.Widget) error {
			return batcher.Status(b, w, "m", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				ac.WithStatus(acv1alpha1.WidgetStatus().WithConditions(
					metav1ac.Condition().WithType("Ready").WithStatus(metav1.ConditionTrue).WithReason("Up").WithMessage("up")))
				return nil
			})
		}, []string{`condition "Ready"`, "status.conditions[Ready].lastTransitionTime: Required"}},
		{"unstructured Mutator, bad reason", func(b *batcher.Batch, w *v1alpha1.Widget) error {
			u := &unstructured.Unstructured{}
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
			if err != nil {
				return err
			}
			u.SetUnstructuredContent(content)
			u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
			return batcher.Status(b, u, "m", func(ac *unstructured.Unstructured, _ *unstructured.Unstructured) error {
				return unstructured.SetNestedSlice(ac.Object, []any{map[string]any{
					"type": "Ready", "status": "True", "reason": "bad reason!", "message": "", "lastTransitionTime": "2026-01-02T03:04:05Z",
				}}, "status", "conditions")
			})
		}, []string{`condition "Ready"`, "status.conditions[Ready].reason"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, c, applies := countingFixture(t, "bad", "good")
			b := batcher.New(a)
			if err := tc.queue(b, widget(t, c, "bad")); err != nil {
				t.Fatal(err)
			}
			if err := batcher.Status(b, widget(t, c, "good"), "m", setPhase("On")); err != nil {
				t.Fatal(err)
			}
			err := b.Flush(context.Background())
			var applyErr *ssa.Error
			if !errors.Is(err, ssa.ErrInvalidInput) || !errors.As(err, &applyErr) || applyErr.Target.Name != "bad" {
				t.Fatalf("Flush error %v, want ErrInvalidInput for the bad entry", err)
			}
			for _, w := range append(tc.want, applyErr.Target.String()) {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("Flush error %q does not mention %q", err, w)
				}
			}
			if n := applies.count("bad"); n != 0 {
				t.Fatalf("%d applies sent for the refused entry, want none", n)
			}
			if p := b.Pending(); len(p) != 1 || p[0].Name != "bad" {
				t.Fatalf("pending %v, want the refused entry only", p)
			}
			if got := widget(t, c, "good").Status.Phase; got != "On" || applies.count("good") != 1 {
				t.Fatalf("good entry: phase %q after %d applies, want On after 1", got, applies.count("good"))
			}
		})
	}
}

// A kind nothing knows is refused when queued, not at Flush.
func TestUnknownKindIsRefusedWhenQueued(t *testing.T) {
	a, c, applies := countingFixture(t, "good")
	b := batcher.New(a)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "nope.example.com", Version: "v1", Kind: "Sprocket"})
	u.SetNamespace("ns")
	u.SetName("s1")
	err := batcher.Status(b, u, "m", func(ac, _ *unstructured.Unstructured) error {
		return unstructured.SetNestedField(ac.Object, "On", "status", "phase")
	})
	if !errors.Is(err, ssa.ErrInvalidInput) || !strings.Contains(err.Error(), "unknown kind") || !strings.Contains(err.Error(), "ns/s1") {
		t.Fatalf("error %v, want ErrInvalidInput naming the unknown kind and the object", err)
	}
	if p := b.Pending(); len(p) != 0 {
		t.Fatalf("pending %v, want nothing queued", p)
	}
	if err := batcher.Status(b, widget(t, c, "good"), "m", setPhase("On")); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := applies.count("good"); n != 1 {
		t.Fatalf("%d applies for the valid entry, want 1", n)
	}
}

// A field manager the API server would refuse is refused when queued.
func TestBadFieldManagerIsRefusedWhenQueued(t *testing.T) {
	a, c, _ := countingFixture(t, "w")
	b := batcher.New(a)
	for _, m := range []string{"bad\tmanager", "bad\nmanager", "bad\x00manager", strings.Repeat("m", 129)} {
		err := batcher.Status(b, widget(t, c, "w"), m, setPhase("On"))
		if !errors.Is(err, ssa.ErrInvalidInput) || !strings.Contains(err.Error(), "fieldManager") || !strings.Contains(err.Error(), "ns/w") {
			t.Fatalf("manager %q: error %v, want ErrInvalidInput about fieldManager, naming the object", m, err)
		}
	}
	if p := b.Pending(); len(p) != 0 {
		t.Fatalf("pending %v, want nothing queued", p)
	}
}

// An apply configuration type that is not a pointer to a struct is refused
// when queued, naming the target, whichever way the contribution is queued:
// first for its object, after a valid one on the same entry (which skips the
// checks it already passed), or as a new entry of the object queued last.
// Nothing of a refused contribution is queued.
func TestNonPointerApplyConfigurationIsRefusedOnEveryQueuePath(t *testing.T) {
	valid := func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		ac.WithStatus(acv1alpha1.WidgetStatus().WithPhase("On"))
		return nil
	}
	nonPointer := func(acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return nil }
	for _, tc := range []struct {
		name    string
		before  []string // managers a valid contribution is queued for first
		manager string
	}{
		{"first for its object", nil, "m"},
		{"on an entry with a valid one", []string{"m"}, "m"},
		{"a new entry of the object queued last", []string{"m"}, "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _, _ := countingFixture(t, "w")
			w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}}
			b := batcher.New(a)
			for _, m := range tc.before {
				if err := batcher.Status(b, w, m, valid); err != nil {
					t.Fatal(err)
				}
			}
			pending := b.Pending()
			err := batcher.Status(b, w, tc.manager, nonPointer)
			if !errors.Is(err, ssa.ErrInvalidInput) || !strings.Contains(err.Error(), "not a pointer to a struct") ||
				!strings.Contains(err.Error(), `as "`+tc.manager+`"`) {
				t.Fatalf("queueing a non-pointer apply configuration: %v", err)
			}
			if got := b.Pending(); len(got) != len(pending) {
				t.Fatalf("pending %v after the refusal, want %v", got, pending)
			}
			// A valid contribution of the same entry is still checked and
			// queued after the refusal.
			if err := batcher.Status(b, w, tc.manager, valid); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A new entry of the object queued last takes that contribution's target
// with its own manager and subresource, and the manager is checked all the
// same: an invalid one is refused and queues nothing.
func TestNewEntryOfTheLastObjectChecksItsManager(t *testing.T) {
	a, _, _ := countingFixture(t, "w")
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}}
	b := batcher.New(a)
	valid := func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error { return nil }
	if err := batcher.Status(b, w, "m", valid); err != nil {
		t.Fatal(err)
	}
	for _, manager := range []string{"", "bad\tmanager", strings.Repeat("x", metav1validation.FieldManagerMaxLength+1)} {
		if err := batcher.Status(b, w, manager, valid); !errors.Is(err, ssa.ErrInvalidInput) {
			t.Fatalf("manager %q: %v", manager, err)
		}
	}
	if got := b.Pending(); len(got) != 1 || got[0].Manager != "m" {
		t.Fatalf("pending %v, want only m's entry", got)
	}
}

// A removal of a condition without a type is refused when queued, naming the
// object, and queues nothing.
func TestRemoveConditionWithoutTypeIsRefusedWhenQueued(t *testing.T) {
	a, c, _ := countingFixture(t, "w")
	b := batcher.New(a)
	err := batcher.RemoveCondition(b, widget(t, c, "w"), "readiness", "")
	if !errors.Is(err, ssa.ErrInvalidInput) || !strings.Contains(err.Error(), "ns/w") {
		t.Fatalf("error %v, want ErrInvalidInput naming the object", err)
	}
	if p := b.Pending(); len(p) != 0 {
		t.Fatalf("pending %v, want nothing queued", p)
	}
}

// A dry-run option of Applier.Apply is refused by every way of queueing a
// contribution, naming the target, and queues nothing: a Flush would
// otherwise clear an entry it never wrote.
func TestDryRunOptionsAreRefusedWhenQueued(t *testing.T) {
	a, c, _ := countingFixture(t, "w")
	valid := func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		ac.WithStatus(acv1alpha1.WidgetStatus().WithPhase("On"))
		return nil
	}
	for _, opt := range []ssa.ApplyOption{ssa.DryRun, ssa.DryRunAsOwner} {
		for name, queue := range map[string]func(b *batcher.Batch, w *v1alpha1.Widget) error{
			"Status": func(b *batcher.Batch, w *v1alpha1.Widget) error { return batcher.Status(b, w, "m", valid, opt) },
			"EditStatus": func(b *batcher.Batch, w *v1alpha1.Widget) error {
				return batcher.EditStatus(b, w, "m", func(*v1alpha1.Widget) error { return nil }, opt)
			},
			"RemoveCondition": func(b *batcher.Batch, w *v1alpha1.Widget) error {
				return batcher.RemoveCondition(b, w, "m", "Ready", opt)
			},
			"after a valid contribution": func(b *batcher.Batch, w *v1alpha1.Widget) error {
				if err := batcher.Status(b, w, "m", valid); err != nil {
					t.Fatal(err)
				}
				return batcher.Status(b, w, "m", valid, opt)
			},
		} {
			b := batcher.New(a)
			err := queue(b, widget(t, c, "w"))
			if !errors.Is(err, ssa.ErrInvalidInput) || !strings.Contains(err.Error(), "ssa.DryRun") ||
				!strings.Contains(err.Error(), `ns/w as "m"`) {
				t.Fatalf("%s with %v: %v, want ErrInvalidInput naming the target", name, opt, err)
			}
			if p := b.Pending(); len(p) > 1 || len(p) == 1 && name != "after a valid contribution" {
				t.Fatalf("%s with %v: pending %v, want the refused contribution not queued", name, opt, p)
			}
		}
	}
}
