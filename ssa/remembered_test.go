package ssa

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// A remembered state is trusted as it is only at the resourceVersion it was
// remembered at. Another process applying under the same manager name
// leaves the manager's entry byte for byte the same, with another value, at
// a new resourceVersion: the intent equals the remembered form, and still has
// to be sent to put the value back. The control moves the remembered state to
// the new resourceVersion, as a cache trusting the form whatever the version
// would: the apply is skipped and the other process's value stays.
func TestSteadyTrustsOnlyTheRememberedVersion(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(fmt.Sprintf("control=%v", control), func(t *testing.T) {
			h, _ := appliedOn(t)
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

// An apply that would change nothing is still checked: with a state
// remembered, an apply whose target has no name or kind, whose manager is not
// one, or whose observed object is a nil pointer is refused before any
// request rather than skipped. The control shows that for a target spoiled in
// its name or kind the state is there to be found under the target's key: an
// answer from it that did not check the target would skip the apply.
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
			if target.Manager == h.t.Manager && observed != nil && !reflect.ValueOf(observed).IsNil() {
				st := h.a.owned.get(ownedKey{uid: observed.GetUID(), manager: target.Manager, sub: target.Subresource})
				if st == nil || st.rv != observed.GetResourceVersion() || st.last == nil {
					t.Fatal("control: no state under the spoiled target's key; the spec cannot tell a checked target from a trusted one")
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
