package ssa

import (
	"context"
	"errors"
	"github.com/statusapply/statusapply/internal/objects"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
)

func TestEqualContentAcrossShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b any
		want bool
	}{
		{"an empty object and nothing", map[string]any{"x": map[string]any{}}, nil, true},
		{"an empty object and a string", map[string]any{}, "x", false},
		{"an object and nothing", map[string]any{"x": "y"}, nil, false},
		{"nothing and nothing", nil, nil, true},
		{"nothing and an empty object", nil, map[string]any{}, true},
		{"nothing and a string", nil, "x", false},
		{"an empty list and a string", []any{}, "x", false},
		{"lists of different lengths", []any{"a"}, []any{"a", "b"}, false},
		{"equal lists", []any{"a", int64(1)}, []any{"a", 1.0}, true},
		{"a number and a string", int64(1), "1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := equalContent(tc.a, tc.b); got != tc.want {
				t.Fatalf("equalContent = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEncodedApplyKeepsTheResponse(t *testing.T) {
	e := &encodedApply{body: []byte(`{"a":1}`)}
	buf := []byte(`{"apiVersion":"demo.statusapply.io/v1alpha1","kind":"Widget","metadata":{"name":"w1","resourceVersion":"7"}}`)
	if err := e.UnmarshalJSON(buf); err != nil {
		t.Fatal(err)
	}
	buf[0] = 'x' // the client's buffer is not kept
	w, err := objects.DecodeAs(e.response, reflect.TypeFor[*v1alpha1.Widget]())
	if err != nil || w.GetName() != "w1" || w.GetResourceVersion() != "7" {
		t.Fatalf("DecodeAs: %+v, %v", w, err)
	}
	if _, ok := w.(*v1alpha1.Widget); !ok {
		t.Fatalf("decoded a %T, want a *v1alpha1.Widget", w)
	}
	like := &unstructured.Unstructured{}
	like.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	u, err := objects.DecodeAs(e.response, reflect.TypeOf(like))
	if err != nil || u.GetName() != "w1" || u.(*unstructured.Unstructured).GroupVersionKind() != like.GroupVersionKind() {
		t.Fatalf("DecodeAs an unstructured object: %+v, %v", u, err)
	}
	if err := objects.Decode([]byte(`{"metadata":`), &v1alpha1.Widget{}); err == nil || !strings.Contains(err.Error(), "decoding the API server's response") {
		t.Fatalf("a broken response into a typed object: %v", err)
	}
	if err := objects.Decode([]byte(`{"metadata":`), &unstructured.Unstructured{}); err == nil || !strings.Contains(err.Error(), "decoding the API server's response") {
		t.Fatalf("a broken response into an unstructured object: %v", err)
	}
}

func TestTargetForRefusesNilObjects(t *testing.T) {
	h := newHarness(t)
	var w *v1alpha1.Widget
	if _, err := h.a.TargetFor(w, StatusSubresource, "m"); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "nil *v1alpha1.Widget") {
		t.Fatalf("a typed nil: %v", err)
	}
	if _, err := h.a.TargetFor(nil, StatusSubresource, "m"); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "nil object") {
		t.Fatalf("nil: %v", err)
	}
	got, err := h.a.TargetFor(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns"}}, StatusSubresource, "m")
	if err != nil || got.GVK != h.t.GVK {
		t.Fatalf("TargetFor = %v, %v", got, err)
	}
}

func TestLanesAreDroppedWhenUnused(t *testing.T) {
	var l lanes
	id := ownership.ObjectRef{Name: "a"}
	first, err := l.acquire(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.acquire(ctx, id); !errors.Is(err, context.Canceled) {
		t.Fatalf("a second holder with a cancelled context: %v", err)
	}
	if l.lanes[id] == nil || l.lanes[id].users != 1 {
		t.Fatal("the held lane was dropped when a waiter gave up")
	}
	first()
	if len(l.lanes) != 0 {
		t.Fatalf("%d lanes left after the last holder released", len(l.lanes))
	}
}
