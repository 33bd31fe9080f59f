package ssa

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// The steady look trusts a remembered state only at the resourceVersion it
// was remembered at. Another process applying under the same manager name
// leaves the manager's entry byte for byte the same, with another value, at
// a new resourceVersion: the intent equals the remembered form, and still has
// to be sent to put the value back. The control moves the remembered state to
// the new resourceVersion, as a cache trusting the form whatever the version
// would: the apply is skipped and the other process's value stays.
func TestSteadyTrustsOnlyTheRememberedVersion(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(fmt.Sprintf("control=%v", control), func(t *testing.T) {
			h, _ := appliedAndSteady(t) // leaves the copy the steady look edits
			ctx := context.Background()
			same := acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().WithPhase("Off"))
			if err := h.c.Apply(ctx, same, client.FieldOwner("m")); err != nil {
				t.Fatal(err)
			}
			moved := h.observe(t)
			if control {
				st := h.a.owned.get(ownedKey{uid: "u1", manager: "m", sub: MainResource})
				st.rv = moved.ResourceVersion
			}
			again, err := h.a.Apply(ctx, h.t, moved, widgetBuild("On", nil), &ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			phase := h.observe(t).Status.Phase
			if control {
				if again.Sent || phase != "Off" {
					t.Fatalf("control: sent %v, phase %q; the spec cannot tell a trusted version from another", again.Sent, phase)
				}
				return
			}
			if !again.Sent || phase != "On" {
				t.Fatalf("an equal intent at another version: sent %v, phase %q; want it sent and On", again.Sent, phase)
			}
		})
	}
}

// An intent the steady look finds changed is built once: the run sends the
// copy the mutators edited, rather than running them again; right after an
// apply there is no copy to look with, and the run builds it. A Mutate that
// renames the object is refused as the run would refuse it, and one that
// fails makes Apply fail naming the target, with nothing sent either way.
func TestSteadyHandsAChangedIntentToTheRun(t *testing.T) {
	// An unchanged build leaves a copy of the form for the next one to
	// edit: the look works on it.
	h, res := appliedAndSteady(t)
	ctx := context.Background()
	calls := 0
	changed, err := h.a.Apply(ctx, h.t, res.Object, counting(widgetBuild("Off", nil), &calls), &ApplyOptions{})
	if err != nil || !changed.Sent || intentOf(changed) != typedPrefix+`,"status":{"phase":"Off"}}` {
		t.Fatalf("a changed intent: sent %v, intent %s, err %v", changed.Sent, changed.Intent, err)
	}
	if calls != 1 {
		t.Fatalf("the mutators ran %d times for one apply", calls)
	}
	calls = 0
	back, err := h.a.Apply(ctx, h.t, changed.Object, counting(widgetBuild("On", nil), &calls), &ApplyOptions{})
	if err != nil || !back.Sent || calls != 1 {
		t.Fatalf("right after an apply: sent %v, mutators ran %d times, err %v", back.Sent, calls, err)
	}
	changed = back
	again, err := h.a.Apply(ctx, h.t, changed.Object, widgetBuild("On", nil), &ApplyOptions{})
	if err != nil || again.Sent {
		t.Fatalf("an unchanged apply: sent %v, err %v", again.Sent, err)
	}
	sent := len(h.bodies())

	renamed := widgetBuild("Off", nil)
	renamed.Typed.Mutate = func(ac any, _ client.Object) error {
		ac.(*acv1alpha1.WidgetApplyConfiguration).WithName("w2")
		return nil
	}
	if _, err := h.a.Apply(ctx, h.t, changed.Object, renamed, &ApplyOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a renaming mutator: %v", err)
	}
	boom := errors.New("boom")
	failing := widgetBuild("Off", nil)
	failing.Typed.Mutate = func(any, client.Object) error { return boom }
	_, err = h.a.Apply(ctx, h.t, changed.Object, failing, &ApplyOptions{})
	var applyErr *Error
	if !errors.Is(err, boom) || !errors.As(err, &applyErr) || applyErr.Target != h.t {
		t.Fatalf("a failing mutator: %v", err)
	}
	if len(h.bodies()) != sent {
		t.Fatal("a refused or failed build sent an apply")
	}
	if got, ok := changed.Object.(*v1alpha1.Widget); !ok || got.Status.Phase != "On" {
		t.Fatalf("response %T", changed.Object)
	}
}

// appliedAndSteady is appliedOn followed by an apply that changes nothing,
// which leaves a copy of the form for the steady look to edit.
func appliedAndSteady(t *testing.T) (*harness, Result) {
	t.Helper()
	h, res := appliedOn(t)
	steady, err := h.a.Apply(context.Background(), h.t, res.Object, widgetBuild("On", nil), &ApplyOptions{})
	if err != nil || steady.Sent {
		t.Fatalf("an unchanged apply: sent %v, err %v", steady.Sent, err)
	}
	return h, res
}

// counting returns b with its typed Mutate counting its calls in calls.
func counting(b Build, calls *int) Build {
	mutate := b.Typed.Mutate
	b.Typed = &TypedBuild{Type: b.Typed.Type, Mutate: func(ac any, observed client.Object) error {
		*calls++
		return mutate(ac, observed)
	}}
	return b
}

// appliedOn returns a harness whose manager m has applied status.phase On,
// and the result of that apply.
func appliedOn(t *testing.T) (*harness, Result) {
	t.Helper()
	h := newHarness(t)
	res, err := h.a.Apply(context.Background(), h.t, h.observe(t), widgetBuild("On", nil), &ApplyOptions{})
	if err != nil || !res.Sent {
		t.Fatalf("first apply: sent %v, err %v", res.Sent, err)
	}
	return h, res
}

// The steady look answers only targets the run would accept: with a state
// remembered and a copy to look with, an apply whose target has no name or
// kind, whose manager is not one, or whose observed object is a nil pointer
// is refused before any request, as the run refuses it, rather than skipped.
// The control shows that for a target spoiled in its name or kind the state
// and its copy are there to be found under the target's key: a look that
// trusted them without checking the target would skip the apply.
func TestSteadyRefusesWhatTheRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(*Target, *client.Object)
	}{
		{"no name", func(t *Target, _ *client.Object) { t.Name = "" }},
		{"no kind", func(t *Target, _ *client.Object) { t.GVK.Kind = "" }},
		{"no version", func(t *Target, _ *client.Object) { t.GVK.Version = "" }},
		{"a manager that is not one", func(t *Target, _ *client.Object) { t.Manager = "m\x00" }},
		{"a nil observed object", func(_ *Target, o *client.Object) { *o = (*v1alpha1.Widget)(nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, res := appliedOn(t)
			ctx := context.Background()
			if steady, err := h.a.Apply(ctx, h.t, res.Object, widgetBuild("On", nil), &ApplyOptions{}); err != nil || steady.Sent {
				t.Fatalf("an unchanged apply: sent %v, err %v", steady.Sent, err)
			}
			target, observed := h.t, res.Object
			tc.spoil(&target, &observed)
			if target.Manager == h.t.Manager && !isNil(observed) {
				st := h.a.owned.get(ownedKey{uid: observed.GetUID(), manager: target.Manager, sub: target.Subresource})
				if st == nil || st.rv != observed.GetResourceVersion() || st.last == nil || st.last.spare.Load() == nil {
					t.Fatal("control: no state and copy under the spoiled target's key; the spec cannot tell a checked target from a trusted one")
				}
			}
			sent := len(h.bodies())
			_, err := h.a.Apply(ctx, target, observed, widgetBuild("On", nil), &ApplyOptions{})
			if !errors.Is(err, ErrInvalidInput) || len(h.bodies()) != sent {
				t.Fatalf("err %v, %d applies sent; want ErrInvalidInput and none", err, len(h.bodies())-sent)
			}
		})
	}
}

// Unchanged answers, before Apply, an apply that changes nothing, and sends
// nothing; one that changes something it leaves to Apply, handing over in the
// options what the mutators built, so that they run once for the apply. The
// control calls Apply with options of its own, which carry nothing: the
// mutators run again. A guarded apply is not looked at (the run reads the
// object again), and nothing is handed over. What a look built serves only
// an Apply with the same build: with another, the look's intent would be
// sent in place of that build's. The last step's control applies the
// look's own build, which sends what the look built: the intent another
// build would have sent, had it been handed over.
func TestUnchangedAnswersBeforeApply(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(fmt.Sprintf("control=%v", control), func(t *testing.T) {
			h, res := appliedAndSteady(t)
			ctx := context.Background()
			sent := len(h.bodies())
			unchanged, err := h.a.Unchanged(ctx, h.t, res.Object, widgetBuild("On", nil), &ApplyOptions{})
			if err != nil || !unchanged || len(h.bodies()) != sent {
				t.Fatalf("an unchanged build: unchanged %v, err %v, %d applies sent", unchanged, err, len(h.bodies())-sent)
			}

			if unchanged, err := h.a.Unchanged(ctx, h.t, res.Object, widgetBuild("On", nil), nil); err != nil || !unchanged {
				t.Fatalf("an unchanged build with nil options: unchanged %v, err %v", unchanged, err)
			}

			guarded := &ApplyOptions{Guarded: true}
			calls := 0
			counted := counting(widgetBuild("Off", nil), &calls)
			if unchanged, err := h.a.Unchanged(ctx, h.t, res.Object, counted, guarded); unchanged || err != nil || calls != 0 || guarded.built != nil {
				t.Fatalf("a guarded apply: unchanged %v, err %v, mutators ran %d times", unchanged, err, calls)
			}

			opts := &ApplyOptions{}
			if unchanged, err := h.a.Unchanged(ctx, h.t, res.Object, counted, opts); unchanged || err != nil || calls != 1 {
				t.Fatalf("a changed build: unchanged %v, err %v, mutators ran %d times", unchanged, err, calls)
			}
			if control {
				opts = &ApplyOptions{}
			}
			changed, err := h.a.Apply(ctx, h.t, res.Object, counted, opts)
			if err != nil || !changed.Sent || intentOf(changed) != typedPrefix+`,"status":{"phase":"Off"}}` {
				t.Fatalf("a changed intent: sent %v, intent %s, err %v", changed.Sent, changed.Intent, err)
			}
			want := 1
			if control {
				want = 2
			}
			if calls != want {
				t.Fatalf("the mutators ran %d times for one look and one apply, want %d", calls, want)
			}
			if opts.built != nil {
				t.Fatal("Apply left what it sent in the options")
			}

			// What a look built serves only the build it ran: an Apply
			// with another one sends that one's intent.
			if steady, err := h.a.Apply(ctx, h.t, changed.Object, widgetBuild("Off", nil), &ApplyOptions{}); err != nil || steady.Sent {
				t.Fatalf("an unchanged apply: sent %v, err %v", steady.Sent, err)
			}
			opts, calls = &ApplyOptions{}, 0
			looked := counting(widgetBuild("On", nil), &calls)
			if unchanged, err := h.a.Unchanged(ctx, h.t, changed.Object, looked, opts); unchanged || err != nil || calls != 1 {
				t.Fatalf("a changed build: unchanged %v, err %v, mutators ran %d times", unchanged, err, calls)
			}
			if control {
				on, err := h.a.Apply(ctx, h.t, changed.Object, looked, opts)
				if err != nil || !on.Sent || intentOf(on) != typedPrefix+`,"status":{"phase":"On"}}` || calls != 1 {
					t.Fatalf("the look's own build: sent %v, intent %s, its mutators ran %d times, err %v", on.Sent, on.Intent, calls, err)
				}
				return
			}
			other := 0
			pending, err := h.a.Apply(ctx, h.t, changed.Object, counting(widgetBuild("Pending", nil), &other), opts)
			if err != nil || !pending.Sent || intentOf(pending) != typedPrefix+`,"status":{"phase":"Pending"}}` || other != 1 {
				t.Fatalf("another build after the look: sent %v, intent %s, its mutators ran %d times, err %v", pending.Sent, pending.Intent, other, err)
			}
		})
	}
}
