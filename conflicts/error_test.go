package conflicts

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/ownership"
)

var w1 = ownership.ObjectRef{GVK: schema.GroupVersionKind{Group: "demo.statusapply.io", Version: "v1alpha1", Kind: "Widget"}, Namespace: "ns", Name: "w1"}

func TestFromErrorOneConflict(t *testing.T) {
	apiErr := recordedUpdateOwner()
	e, ok := FromError(fmt.Errorf("flush: %w", apiErr), "network-controller", w1)
	if !ok {
		t.Fatal("want a field conflict")
	}
	want := `manager network-controller cannot change .status.conditions[type="Ready"].status of Widget ns/w1: owned by legacy (Update, subresource status)`
	if e.Error() != want {
		t.Fatalf("message\n%s\nwant\n%s", e.Error(), want)
	}
	if !apierrors.IsConflict(e) {
		t.Fatal("apierrors.IsConflict must see through *Error")
	}
	var se *apierrors.StatusError
	if !errors.As(e, &se) || se != apiErr {
		t.Fatal("errors.As must find the API error")
	}
	var found *Error
	if !errors.As(fmt.Errorf("reconcile: %w", e), &found) || found != e {
		t.Fatal("errors.As must find the *Error")
	}
	again, ok := FromError(errors.Join(errors.New("x"), e), "other", ownership.ObjectRef{})
	if !ok || again != e {
		t.Fatal("FromError must return an *Error already in the tree")
	}
}

func TestFromErrorSeveralConflicts(t *testing.T) {
	e, ok := FromError(recordedSeveral(), "network", w1)
	if !ok {
		t.Fatal("want a field conflict")
	}
	want := `manager network cannot change 3 fields of Widget ns/w1:
- .status.conditions[type="Ready"].status: owned by readiness (Apply, subresource status)
- .status.phase: owned by legacy (Update, subresource status)
- .status.conditions[type="Synced"].status: owned by legacy (Update, subresource status)`
	if e.Error() != want {
		t.Fatalf("message\n%s\nwant\n%s", e.Error(), want)
	}
}

func TestFromErrorUnparseable(t *testing.T) {
	e, ok := FromError(conflictStatus("Apply failed with something new"), "network", ownership.ObjectRef{Name: "c1"})
	if !ok {
		t.Fatal("a FieldManagerConflict status is a field conflict even when its text is new")
	}
	if len(e.Conflicts) != 0 || !strings.Contains(e.Error(), "Apply failed with something new") || !strings.Contains(e.Error(), "object c1") {
		t.Fatalf("got %q with %d conflicts", e.Error(), len(e.Conflicts))
	}
}

func TestFromErrorRefusesOthers(t *testing.T) {
	for _, err := range []error{nil, errors.New("x"), recordedStale(), apierrors.NewNotFound(widgets, "w1")} {
		if e, ok := FromError(err, "m", w1); ok || e != nil {
			t.Errorf("FromError(%v) = %v, %v", err, e, ok)
		}
	}
}

func TestObjectRefString(t *testing.T) {
	if got := (ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Node"}, Name: "n1"}).String(); got != "Node n1" {
		t.Errorf("cluster-scoped: %q", got)
	}
	if got := w1.String(); got != "Widget ns/w1" {
		t.Errorf("namespaced: %q", got)
	}
}
