package ssa_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoac "k8s.io/client-go/applyconfigurations"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ssa"
)

func testScheme(t *testing.T, withWidgets bool) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if withWidgets {
		if err := v1alpha1.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// countingApplier returns an Applier on a fake client holding Widget ns/w1
// and Pod ns/p1, and the number of applies the client was sent.
func countingApplier(t *testing.T) (*ssa.Applier, client.Client, *atomic.Int32) {
	t.Helper()
	s := testScheme(t, true)
	var applies atomic.Int32
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(s).
		WithTypeConverters(applyconfiguration.NewTypeConverter(s), clientgoac.NewTypeConverter(s)).
		WithStatusSubresource(&v1alpha1.Widget{}, &corev1.Pod{}).
		WithObjects(
			&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns"}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "ns"}},
		).Build(), interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			applies.Add(1)
			return c.Apply(ctx, obj, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			applies.Add(1)
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(s)), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a, c, &applies
}

func observe(t *testing.T, a *ssa.Applier, c client.Client, obj client.Object) (client.Object, ssa.Target) {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	target, err := a.TargetFor(obj, ssa.StatusSubresource, "m")
	if err != nil {
		t.Fatal(err)
	}
	return obj, target
}

// setConditions is a BuildFunc writing conditions straight into the intent's
// unstructured content, as an unstructured Mutator would.
func setConditions(conds ...map[string]any) ssa.Build {
	return ssa.Build{Func: func(intent *unstructured.Unstructured, _ client.Object) (ssa.Built, error) {
		items := make([]any, len(conds))
		for i, c := range conds {
			items[i] = c
		}
		return ssa.Built{}, unstructured.SetNestedSlice(intent.Object, items, "status", "conditions")
	}}
}

func cond(condType, status, reason string, withTime bool) map[string]any {
	c := map[string]any{"type": condType, "status": status, "reason": reason, "message": "m"}
	if withTime {
		c["lastTransitionTime"] = "2026-01-02T03:04:05Z"
	}
	return c
}

func TestApplyRefusesInvalidConditionsBeforeSending(t *testing.T) {
	for _, tc := range []struct {
		name string
		cond map[string]any
		want []string // substrings of the error; none when valid
	}{
		{"valid", cond("Ready", "True", "Up", true), nil},
		{"bad type", cond("bad type!", "True", "Up", true), []string{`condition "bad type!"`, "status.conditions[bad type!].type"}},
		{"bad reason", cond("Ready", "True", "bad reason!", true), []string{`condition "Ready"`, "status.conditions[Ready].reason"}},
		{"status Maybe", cond("Ready", "Maybe", "Up", true), []string{`condition "Ready"`, "status.conditions[Ready].status"}},
		{"no lastTransitionTime", cond("Ready", "True", "Up", false), []string{`condition "Ready"`, "status.conditions[Ready].lastTransitionTime"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, c, applies := countingApplier(t)
			observed, target := observe(t, a, c, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns"}})
			res, err := a.Apply(context.Background(), target, observed, setConditions(cond("Other", "True", "Fine", true), tc.cond))
			if len(tc.want) == 0 {
				if err != nil || !res.Sent || applies.Load() != 1 {
					t.Fatalf("err %v, sent %v, %d applies; want one apply", err, res.Sent, applies.Load())
				}
				return
			}
			var applyErr *ssa.Error
			if !errors.Is(err, ssa.ErrInvalidInput) || !errors.As(err, &applyErr) || applyErr.Target != target || applyErr.Attempts != 0 {
				t.Fatalf("error %v, want an *ssa.Error for %s wrapping ErrInvalidInput, with no attempt", err, target)
			}
			for _, w := range append(tc.want, target.String()) {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
			if n := applies.Load(); n != 0 || res.Sent {
				t.Fatalf("%d applies sent, want none", n)
			}
		})
	}
}

// Pod conditions are not metav1.Condition: their rules are the API server's
// business, and the check leaves them alone.
func TestApplyLeavesOtherConditionShapesAlone(t *testing.T) {
	a, c, applies := countingApplier(t)
	observed, target := observe(t, a, c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "ns"}})
	podCondition := map[string]any{"type": "example.com/Custom", "status": "True"} // no reason, no lastTransitionTime
	if _, err := a.Apply(context.Background(), target, observed, setConditions(podCondition)); err != nil {
		t.Fatal(err)
	}
	if n := applies.Load(); n != 1 {
		t.Fatalf("%d applies sent, want 1", n)
	}
}

func unstructuredOf(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestTargetForRefusesUnknownKinds(t *testing.T) {
	widgetGVK := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	sprocket := schema.GroupVersionKind{Group: "nope.example.com", Version: "v1", Kind: "Sprocket"}
	for _, tc := range []struct {
		name string
		// scheme knows the example API; converter adds its schema; mapped is
		// the one kind the client's REST mapper maps besides built-in ones.
		scheme, converter bool
		mapped            *schema.GroupVersionKind
		obj               client.Object
		wantUnknown       bool
	}{
		{"typed, known to the scheme", true, true, nil, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}}, false},
		{"unstructured, known to the scheme", true, false, nil, unstructuredOf(widgetGVK, "ns", "w"), false},
		{"unstructured, known to a type converter only", false, true, nil, unstructuredOf(widgetGVK, "ns", "w"), false},
		{"unstructured, known to the REST mapper only", false, false, &sprocket, unstructuredOf(sprocket, "ns", "s"), false},
		{"unstructured built-in kind", false, false, nil, unstructuredOf(corev1.SchemeGroupVersion.WithKind("ConfigMap"), "ns", "c"), false},
		{"unstructured, known to nothing", false, false, nil, unstructuredOf(sprocket, "ns", "s"), true},
		{"unstructured, another version of a known kind", true, true, nil, unstructuredOf(schema.GroupVersionKind{Group: widgetGVK.Group, Version: "v9", Kind: "Widget"}, "ns", "w"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clientScheme := testScheme(t, tc.scheme)
			builder := fake.NewClientBuilder().WithScheme(clientScheme)
			if tc.mapped != nil {
				mapper := meta.NewDefaultRESTMapper(nil)
				mapper.Add(*tc.mapped, meta.RESTScopeNamespace)
				builder.WithRESTMapper(mapper)
			}
			var opts []ssa.Option
			if tc.converter {
				opts = append(opts, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(testScheme(t, true))))
			}
			a, err := ssa.NewApplier(builder.Build(), append(opts, ssa.WithRegisterer(nil))...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.TargetFor(tc.obj, ssa.StatusSubresource, "m")
			gvk := tc.obj.GetObjectKind().GroupVersionKind()
			if !tc.wantUnknown {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, ssa.ErrInvalidInput) {
				t.Fatalf("error %v, want ErrInvalidInput", err)
			}
			for _, w := range []string{"unknown kind " + gvk.String(), tc.obj.GetNamespace() + "/" + tc.obj.GetName(), "install its CRD", "WithTypeConverter"} {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// AsOwner forces the apply it resends: it is refused, before any request,
// outside a dry run.
func TestAsOwnerOnlyForDryRuns(t *testing.T) {
	a, c, applies := countingApplier(t)
	obj, target := observe(t, a, c, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns"}})
	build := ssa.Build{Func: func(intent *unstructured.Unstructured, _ client.Object) (ssa.Built, error) {
		return ssa.Built{}, unstructured.SetNestedField(intent.Object, "Running", "status", "phase")
	}}
	_, err := a.Apply(context.Background(), target, obj, build, &ssa.ApplyOptions{AsOwner: true})
	if !errors.Is(err, ssa.ErrInvalidInput) || !strings.Contains(err.Error(), "AsOwner") {
		t.Fatalf("AsOwner without DryRun: %v", err)
	}
	if n := applies.Load(); n != 0 {
		t.Fatalf("%d applies sent", n)
	}
}

// SetCondition leaves a condition the intent already holds with the same
// values as it is, without checking it again: a bad one can only have been
// written there without SetCondition, and Apply still refuses it before any
// request. The control changes the message: SetCondition then checks the
// condition and refuses it itself, naming the field.
func TestSetConditionLeavesAHeldConditionToApply(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	bad := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "bad reason!", Message: "m", ObservedGeneration: 1, LastTransitionTime: at}
	for _, control := range []bool{false, true} {
		t.Run(fmt.Sprintf("control=%v", control), func(t *testing.T) {
			a, c, applies := countingApplier(t)
			observed, target := observe(t, a, c, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns"}})
			var setErr error
			typed := &ssa.TypedBuild{Type: reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration](), Mutate: func(ac any, _ client.Object) (ssa.Built, error) {
				w := ac.(*acv1alpha1.WidgetApplyConfiguration)
				w.WithStatus(acv1alpha1.WidgetStatus().WithConditions(metav1ac.Condition().WithType(bad.Type).
					WithStatus(bad.Status).WithReason(bad.Reason).WithMessage(bad.Message).
					WithObservedGeneration(bad.ObservedGeneration).WithLastTransitionTime(bad.LastTransitionTime)))
				again := bad
				if control {
					again.Message = "changed"
				}
				setErr = ssa.SetCondition(&w.Status.Conditions, nil, 1, again)
				return ssa.Built{}, setErr
			}}
			build := ssa.Build{Func: func(*unstructured.Unstructured, client.Object) (ssa.Built, error) {
				return ssa.Built{}, errors.New("the typed build applies")
			}, Typed: typed}
			_, err := a.Apply(context.Background(), target, observed, build)
			if control {
				if !errors.Is(setErr, ssa.ErrInvalidInput) || !strings.Contains(setErr.Error(), "status.conditions[Ready].reason") {
					t.Fatalf("SetCondition of a changed bad condition: %v, want it refused naming the reason", setErr)
				}
			} else if setErr != nil {
				t.Fatalf("SetCondition of a held condition: %v, want it left as it is", setErr)
			}
			if !errors.Is(err, ssa.ErrInvalidInput) || !strings.Contains(err.Error(), "reason") || applies.Load() != 0 {
				t.Fatalf("Apply: %v with %d applies sent; want it refused before any request", err, applies.Load())
			}
		})
	}
}
