package ssa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/wait"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/kindschema"
	"github.com/statusapply/statusapply/ownership"
)

// These tests drive Apply against controller-runtime's fake client, which
// merges applies with structured-merge-diff and keeps managedFields. They
// check Apply's own decisions (which path builds the intent, what is sent,
// remembered, counted and retried); what the API server does with an apply
// is the envtest suites' business.

// sentApply is one apply the fake client was sent.
type sentApply struct {
	body  string
	force bool
	sub   string
}

// harness is an Applier on a fake client holding Widget ns/w1.
type harness struct {
	a *Applier
	c client.Client
	t Target

	mu   sync.Mutex
	sent []sentApply
	// fail, when set, answers the n-th apply (from 1) instead of the client.
	fail func(n int) error
	// uid, when set, replaces the uid of every object read.
	uid types.UID
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	// The fake client records every apply as one of the main resource, so
	// the manager's entry is found there.
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	h := &harness{t: Target{GVK: gvk, Namespace: "ns", Name: "w1", Subresource: MainResource, Manager: "m"}}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(gvk, meta.RESTScopeNamespace)
	record := func(obj runtime.ApplyConfiguration, sub string, force bool) error {
		body, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.sent = append(h.sent, sentApply{body: string(body), force: force, sub: sub})
		if h.fail != nil {
			return h.fail(len(h.sent))
		}
		return nil
	}
	inner := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).
		WithTypeConverters(applyconfiguration.NewTypeConverter(s)).
		WithReturnManagedFields().
		WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", UID: "u1"}}).Build()
	// Another manager's label gives the object managedFields, as the API
	// server's objects always have.
	if err := inner.Apply(context.Background(), acv1alpha1.Widget("w1", "ns").WithLabels(map[string]string{"setup": "x"}), client.FieldOwner("setup")); err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(inner,
		interceptor.Funcs{
			Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				ao := &client.ApplyOptions{}
				ao.ApplyOptions(opts)
				if err := record(obj, "", ao.Force != nil && *ao.Force); err != nil {
					return err
				}
				return c.Apply(ctx, obj, opts...)
			},
			SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
				ao := &client.SubResourceApplyOptions{}
				ao.ApplyOpts(opts)
				if err := record(obj, sub, ao.Force != nil && *ao.Force); err != nil {
					return err
				}
				return c.SubResource(sub).Apply(ctx, obj, opts...)
			},
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := c.Get(ctx, key, obj, opts...); err != nil {
					return err
				}
				if h.uid != "" {
					obj.SetUID(h.uid)
				}
				return nil
			},
		})
	a, err := NewApplier(c, append([]Option{WithTypeConverter(applyconfiguration.NewTypeConverter(s)), WithRegisterer(nil)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	h.a, h.c = a, c
	return h
}

// observe reads w1 as the API server has it.
func (h *harness) observe(t *testing.T) *v1alpha1.Widget {
	t.Helper()
	w := &v1alpha1.Widget{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "w1"}, w); err != nil {
		t.Fatal(err)
	}
	return w
}

func (h *harness) bodies() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, len(h.sent))
	for i, s := range h.sent {
		out[i] = s.body
	}
	return out
}

func (h *harness) count(c *prometheus.CounterVec) float64 {
	return metricValue(c.With(h.a.metrics.of([3]string{h.t.Manager, h.t.GVK.Group, h.t.GVK.Kind}).labels))
}

// widgetBuild sets status fields both ways: unstructured and typed.
func widgetBuild(phase string, attrs map[string]string) Build {
	return Build{
		Func: func(intent *unstructured.Unstructured, _ client.Object) (Built, error) {
			if phase != "" {
				if err := unstructured.SetNestedField(intent.Object, phase, "status", "phase"); err != nil {
					return Built{}, err
				}
			}
			if attrs != nil {
				if err := unstructured.SetNestedStringMap(intent.Object, attrs, "status", "attributes"); err != nil {
					return Built{}, err
				}
			}
			return Built{}, nil
		},
		Typed: &TypedBuild{Type: reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration](), Mutate: func(ac any, _ client.Object) (Built, error) {
			w, _ := ac.(*acv1alpha1.WidgetApplyConfiguration)
			if w.Status == nil {
				w.WithStatus(acv1alpha1.WidgetStatus())
			}
			if phase != "" {
				w.Status.WithPhase(phase)
			}
			if attrs != nil {
				w.Status.WithAttributes(attrs)
			}
			return Built{}, nil
		}},
	}
}

const (
	typedPrefix        = `{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w1","namespace":"ns","uid":"u1"}`
	unstructuredPrefix = `{"apiVersion":"demo.statusapply.io/v1alpha1","kind":"Widget","metadata":{"name":"w1","namespace":"ns"`
)

func TestApplyTypedPathRemembersAndSkips(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	res, err := h.a.Apply(ctx, h.t, h.observe(t), widgetBuild("On", nil), &ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := typedPrefix + `,"status":{"phase":"On"}}`
	if !res.Sent || res.Attempts != 1 || intentOf(res) != want || len(h.bodies()) != 1 {
		t.Fatalf("sent %v, %d attempts, intent %s; want the typed intent %s sent once", res.Sent, res.Attempts, res.Intent, want)
	}
	if h.count(h.a.metrics.applies) != 1 || h.count(h.a.metrics.skipped) != 0 {
		t.Fatal("the apply was not counted")
	}
	key := ownedKey{uid: "u1", manager: "m", sub: MainResource}
	st := h.a.owned.get(key)
	typ := reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]()
	if st == nil || st.rv != res.Object.GetResourceVersion() || st.last == nil || st.last.typ != typ || !st.last.encodesAs([]byte(want)) {
		t.Fatalf("remembered %+v, want the typed form at the response's resourceVersion", st)
	}
	if got, ok := res.Object.(*v1alpha1.Widget); !ok || got.Status.Phase != "On" {
		t.Fatalf("response %T %+v", res.Object, res.Object)
	}

	// The same intent on the response: nothing to send, and the remembered
	// state serves as it is.
	again, err := h.a.Apply(ctx, h.t, res.Object, widgetBuild("On", nil), &ApplyOptions{})
	if err != nil || again.Sent || again.Attempts != 0 || again.Intent != nil || len(h.bodies()) != 1 {
		t.Fatalf("a repeated intent: sent %v, %d attempts, err %v", again.Sent, again.Attempts, err)
	}
	if h.a.owned.get(key) != st || h.count(h.a.metrics.skipped) != 1 {
		t.Fatal("the remembered state was not reused, or the skip not counted")
	}

	// Incremental: what the manager owns stays; declarative: it is released.
	inc, err := h.a.Apply(ctx, h.t, res.Object, widgetBuild("", map[string]string{"a": "1"}), &ApplyOptions{})
	if err != nil || intentOf(inc) != typedPrefix+`,"status":{"phase":"On","attributes":{"a":"1"}}}` {
		t.Fatalf("incremental intent %s, err %v", inc.Intent, err)
	}
	dec, err := h.a.Apply(ctx, h.t, inc.Object, widgetBuild("", map[string]string{"a": "1"}), &ApplyOptions{Mode: Declarative})
	if err != nil || intentOf(dec) != typedPrefix+`,"status":{"attributes":{"a":"1"}}}` {
		t.Fatalf("declarative intent %s, err %v", dec.Intent, err)
	}
	if got := dec.Object.(*v1alpha1.Widget).Status.Phase; got != "" {
		t.Fatalf("phase %q after a declarative apply without it", got)
	}
}

func TestApplyTakesTheUnstructuredPathWhenItMust(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts ApplyOptions
	}{
		{"guarded", ApplyOptions{Guarded: true}},
		{"a yielding policy", ApplyOptions{Policy: ptrTo(conflicts.Yield())}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			obs := h.observe(t)
			res, err := h.a.Apply(context.Background(), h.t, obs, widgetBuild("On", nil), &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := unstructuredPrefix + `,"uid":"u1"},"status":{"phase":"On"}}`
			if tc.opts.Guarded {
				want = unstructuredPrefix + `,"resourceVersion":"` + obs.ResourceVersion + `","uid":"u1"},"status":{"phase":"On"}}`
			}
			if intentOf(res) != want {
				t.Fatalf("intent %s, want %s", res.Intent, want)
			}
			st := h.a.owned.get(ownedKey{uid: "u1", manager: "m", sub: MainResource})
			if st == nil || st.last != nil || !reflect.DeepEqual(st.content, map[string]any{"metadata": map[string]any{}, "status": map[string]any{"phase": "On"}}) {
				t.Fatalf("remembered %+v", st)
			}
		})
	}
	// A Typed build of a type without object metadata falls back as well.
	h := newHarness(t)
	b := widgetBuild("On", nil)
	b.Typed.Type = reflect.TypeFor[*noMetaAC]()
	res, err := h.a.Apply(context.Background(), h.t, h.observe(t), b, &ApplyOptions{})
	if err != nil || !strings.HasPrefix(intentOf(res), unstructuredPrefix) {
		t.Fatalf("intent %s, err %v", res.Intent, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestApplyUnstructuredModes(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	b := widgetBuild("On", nil)
	b.Typed = nil
	res, err := h.a.Apply(ctx, h.t, h.observe(t), b, &ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	attrs := widgetBuild("", map[string]string{"a": "1"})
	attrs.Typed = nil
	inc, err := h.a.Apply(ctx, h.t, res.Object, attrs, &ApplyOptions{})
	if err != nil || intentOf(inc) != unstructuredPrefix+`,"uid":"u1"},"status":{"attributes":{"a":"1"},"phase":"On"}}` {
		t.Fatalf("incremental intent %s, err %v", inc.Intent, err)
	}
	dec, err := h.a.Apply(ctx, h.t, inc.Object, attrs, &ApplyOptions{Mode: Declarative})
	if err != nil || intentOf(dec) != unstructuredPrefix+`,"uid":"u1"},"status":{"attributes":{"a":"1"}}}` {
		t.Fatalf("declarative intent %s, err %v", dec.Intent, err)
	}
	// An object not read from the API server owns nothing and sends no uid.
	fresh := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns"}}
	first, err := h.a.Apply(ctx, h.t, fresh, attrs, &ApplyOptions{})
	if err != nil || intentOf(first) != unstructuredPrefix+`},"status":{"attributes":{"a":"1"}}}` {
		t.Fatalf("intent for an object never read %s, err %v", first.Intent, err)
	}
	if h.count(h.a.metrics.reads) != 0 {
		t.Fatal("an object never read was read")
	}
}

func TestApplyStatusSubresource(t *testing.T) {
	h := newHarness(t)
	h.t.Subresource = StatusSubresource
	answer := errors.New("answered")
	h.fail = func(int) error { return answer }
	_, err := h.a.Apply(context.Background(), h.t, h.observe(t), widgetBuild("On", nil), &ApplyOptions{})
	if !errors.Is(err, answer) || len(h.sent) != 1 || h.sent[0].sub != "status" {
		t.Fatalf("sent %+v (err %v); want one apply to the status subresource", h.sent, err)
	}
}

func TestApplyRefusesBeforeSending(t *testing.T) {
	h := newHarness(t)
	obs := h.observe(t)
	wrongName := widgetBuild("On", nil)
	wrongName.Typed.Mutate = func(ac any, _ client.Object) (Built, error) {
		ac.(*acv1alpha1.WidgetApplyConfiguration).WithName("w2")
		return Built{}, nil
	}
	badCondition := widgetBuild("On", nil)
	badCondition.Typed.Mutate = func(ac any, _ client.Object) (Built, error) {
		ac.(*acv1alpha1.WidgetApplyConfiguration).WithStatus(acv1alpha1.WidgetStatus().WithConditions(
			metav1ac.Condition().WithType("bad type!").WithStatus("True").WithReason("Up").WithMessage("m").
				WithLastTransitionTime(metav1.Unix(1700000000, 0))))
		return Built{}, nil
	}
	boom := errors.New("boom")
	failing := widgetBuild("On", nil)
	failing.Typed.Mutate = func(any, client.Object) (Built, error) { return Built{}, boom }
	var nilWidget *v1alpha1.Widget
	for _, tc := range []struct {
		name     string
		observed client.Object
		build    Build
		want     string
		wantErr  error
	}{
		{"a typed intent naming another object", obs, wrongName, "names Widget ns/w2, not the object it was queued for", ErrInvalidInput},
		{"a typed intent with a bad condition", obs, badCondition, `condition "bad type!"`, ErrInvalidInput},
		{"a typed mutator's error", obs, failing, "boom", boom},
		{"a typed nil observed object", nilWidget, widgetBuild("On", nil), "nil observed object", ErrInvalidInput},
		{"no build function", obs, Build{}, "no build function", ErrInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := h.a.Apply(context.Background(), h.t, tc.observed, tc.build, &ApplyOptions{})
			var applyErr *Error
			if !errors.Is(err, tc.wantErr) || !errors.As(err, &applyErr) || applyErr.Attempts != 0 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q wrapping %v", err, tc.want, tc.wantErr)
			}
			if res.Sent || len(h.bodies()) != 0 {
				t.Fatalf("%d applies sent", len(h.bodies()))
			}
		})
	}
}

// stale is the API server's answer to an apply whose resourceVersion or uid
// precondition failed: a 409 without causes.
func stale() error {
	return apierrors.NewConflict(schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}, "w1", errors.New("the object has been modified"))
}

func TestApplyGuardedRetry(t *testing.T) {
	h := newHarness(t)
	obs := h.observe(t)
	h.fail = func(n int) error {
		if n == 1 {
			return stale()
		}
		return nil
	}
	b := widgetBuild("On", nil)
	res, err := h.a.Apply(context.Background(), h.t, obs, b, &ApplyOptions{Guarded: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 || len(h.bodies()) != 2 || h.count(h.a.metrics.retries) != 1 || h.count(h.a.metrics.reads) != 1 {
		t.Fatalf("%d attempts, %d sent, %v retries, %v reads; want 2, 2, 1, 1", res.Attempts, len(h.bodies()), h.count(h.a.metrics.retries), h.count(h.a.metrics.reads))
	}
	if got := metricValue(h.a.metrics.conflicts.With(prometheus.Labels{"manager": "m", "group": "demo.statusapply.io", "kind": "Widget", "class": conflictClassStale})); got != 1 {
		t.Fatalf("%v stale conflicts counted, want 1", got)
	}
	if h.a.owned.get(ownedKey{uid: "u1", manager: "m", sub: MainResource}) == nil {
		t.Fatal("the successful retry was not remembered")
	}
}

func TestApplyStaleOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    ApplyOptions
		backoff *wait.Backoff
		uid     types.UID
		check   func(t *testing.T, res Result, err error)
	}{
		{"unguarded: the conflict is returned", ApplyOptions{}, nil, "", func(t *testing.T, res Result, err error) {
			if !apierrors.IsConflict(err) || res.Attempts != 1 || errors.Is(err, ErrRetriesExhausted) {
				t.Fatalf("error %v after %d attempts, want the 409 after 1", err, res.Attempts)
			}
		}},
		{"the object was replaced", ApplyOptions{Guarded: true}, nil, "u2", func(t *testing.T, res Result, err error) {
			if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "the observed object (uid u1) was deleted") ||
				!strings.Contains(err.Error(), `widgets.demo.statusapply.io "w1" not found`) {
				t.Fatalf("error %v, want NotFound for the replaced object", err)
			}
		}},
		{"no attempt left", ApplyOptions{Guarded: true}, &wait.Backoff{Steps: 1}, "", func(t *testing.T, res Result, err error) {
			if !errors.Is(err, ErrRetriesExhausted) || !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "after 1 attempts") {
				t.Fatalf("error %v, want ErrRetriesExhausted after 1 attempt", err)
			}
		}},
		{"two attempts, both stale", ApplyOptions{Guarded: true}, &wait.Backoff{Steps: 2, Duration: 1}, "", func(t *testing.T, res Result, err error) {
			if !errors.Is(err, ErrRetriesExhausted) || res.Attempts != 2 || !strings.Contains(err.Error(), "after 2 attempts") {
				t.Fatalf("error %v after %d attempts, want ErrRetriesExhausted after 2", err, res.Attempts)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.backoff != nil {
				opts = append(opts, WithGuardBackoff(*tc.backoff))
			}
			h := newHarness(t, opts...)
			obs := h.observe(t)
			h.fail = func(int) error { return stale() }
			h.uid = tc.uid
			res, err := h.a.Apply(context.Background(), h.t, obs, widgetBuild("On", nil), &tc.opts)
			var applyErr *Error
			if !errors.As(err, &applyErr) || applyErr.Target != h.t {
				t.Fatalf("error %v is not an *Error for the target", err)
			}
			if h.a.owned.get(ownedKey{uid: "u1", manager: "m", sub: MainResource}) != nil {
				t.Fatal("a failed apply left its state remembered")
			}
			tc.check(t, res, err)
		})
	}
}

func TestApplyGuardedRetryHonoursContext(t *testing.T) {
	h := newHarness(t, WithGuardBackoff(wait.Backoff{Steps: 5, Duration: 1 << 40}))
	obs := h.observe(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.fail = func(int) error { cancel(); return stale() }
	_, err := h.a.Apply(ctx, h.t, obs, widgetBuild("On", nil), &ApplyOptions{Guarded: true})
	if !errors.Is(err, context.Canceled) || !apierrors.IsConflict(err) {
		t.Fatalf("error %v, want the cancellation joined with the 409", err)
	}
}

// fieldConflict is the API server's answer to an apply that would change a
// field another manager owns.
func fieldConflict() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: `Apply failed with 1 conflict: conflict with "other" with subresource "status": .status.phase`,
	}}
}

func TestApplyFieldManagerConflict(t *testing.T) {
	phase := fieldpath.MakePathOrDie("status", "phase")
	for _, tc := range []struct {
		name   string
		policy conflicts.Policy
		check  func(t *testing.T, h *harness, res Result, err error)
	}{
		{"fail", conflicts.Fail(), func(t *testing.T, h *harness, res Result, err error) {
			var cerr *conflicts.Error
			if !errors.As(err, &cerr) || len(cerr.Conflicts) != 1 || cerr.Conflicts[0].Manager != "other" || res.Attempts != 1 {
				t.Fatalf("error %v after %d attempts, want a *conflicts.Error naming other", err, res.Attempts)
			}
			if h.count(h.a.metrics.applies) != 0 {
				t.Fatal("a failed apply was counted")
			}
		}},
		{"yield", conflicts.Yield(), func(t *testing.T, h *harness, res Result, err error) {
			bodies := h.bodies()
			if err != nil || res.Attempts != 2 || len(bodies) != 2 || len(res.Yielded) != 1 || !res.Sent {
				t.Fatalf("err %v, %d attempts, yielded %v", err, res.Attempts, res.Yielded)
			}
			if want := unstructuredPrefix + `,"uid":"u1"},"status":{"attributes":{"a":"1"}}}`; strings.TrimSpace(bodies[1]) != want || intentOf(res) != want {
				t.Fatalf("second apply %s, want %s", bodies[1], want)
			}
			if h.sent[1].force || h.count(h.a.metrics.applies) != 1 {
				t.Fatal("a yielding retry forced, or was not counted")
			}
		}},
		{"take declared", conflicts.TakeDeclared(conflicts.Declaration{Paths: []fieldpath.Path{phase}}), func(t *testing.T, h *harness, res Result, err error) {
			bodies := h.bodies()
			if err != nil || res.Attempts != 2 || len(res.Taken) != 1 || bodies[1] != bodies[0] || !h.sent[1].force || h.sent[0].force {
				t.Fatalf("err %v, %d attempts, taken %v, sent %+v", err, res.Attempts, res.Taken, h.sent)
			}
		}},
		{"take declared, undeclared field", conflicts.TakeDeclared(conflicts.Declaration{ConditionTypes: []string{"Ready"}}), func(t *testing.T, h *harness, res Result, err error) {
			var cerr *conflicts.Error
			if !errors.As(err, &cerr) || len(h.bodies()) != 1 {
				t.Fatalf("error %v, %d sent; want a *conflicts.Error and nothing forced", err, len(h.bodies()))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			obs := h.observe(t)
			h.fail = func(n int) error {
				if n == 1 {
					return fieldConflict()
				}
				return nil
			}
			b := widgetBuild("On", map[string]string{"a": "1"})
			b.Typed = nil
			res, err := h.a.Apply(context.Background(), h.t, obs, b, &ApplyOptions{Policy: &tc.policy})
			if got := metricValue(h.a.metrics.conflicts.With(prometheus.Labels{"manager": "m", "group": "demo.statusapply.io", "kind": "Widget", "class": conflictClassFieldManager})); got != 1 {
				t.Fatalf("%v field-manager conflicts counted, want 1", got)
			}
			tc.check(t, h, res, err)
		})
	}
}

// A yielding policy leaves out, before sending, the fields the observed
// managedFields say another manager owns with another value.
func TestApplyYieldsPredictedConflicts(t *testing.T) {
	h := newHarness(t, WithConflictPolicy("m", conflicts.Yield()), WithConflictPolicy("n", conflicts.Fail()))
	h.t.Subresource = StatusSubresource
	obs := h.observe(t)
	obs.Status.Phase = "Off"
	obs.ManagedFields = append(obs.ManagedFields, entry("other", metav1.ManagedFieldsOperationApply, "status", `{"f:status":{"f:phase":{}}}`))
	answer := errors.New("answered")
	h.fail = func(int) error { return answer }
	b := widgetBuild("On", map[string]string{"a": "1"})
	b.Typed = nil
	res, err := h.a.Apply(context.Background(), h.t, obs, b, &ApplyOptions{})
	if !errors.Is(err, answer) || res.Attempts != 1 || len(res.Yielded) != 1 || res.Yielded[0].Path.String() != ".status.phase" ||
		intentOf(res) != unstructuredPrefix+`,"uid":"u1"},"status":{"attributes":{"a":"1"}}}` {
		t.Fatalf("err %v, %d attempts, yielded %v, intent %s", err, res.Attempts, res.Yielded, res.Intent)
	}
	if !h.a.cfg.policies["m"].Yields() || h.a.cfg.policies["n"].Yields() || h.a.cfg.policies["x"].Yields() {
		t.Fatal("per-manager policies were not kept apart")
	}
}

func TestOwnedStateReuse(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	labels := h.a.metrics.of([3]string{h.t.Manager, h.t.GVK.Group, h.t.GVK.Kind})
	res, err := h.a.Apply(ctx, h.t, h.observe(t), widgetBuild("On", nil), &ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := ownedKey{uid: "u1", manager: "m", sub: MainResource}
	remembered := h.a.owned.get(key)

	st, obs, err := h.a.ownedStateOf(ctx, h.t, res.Object, labels, true, false)
	if err != nil || st != remembered || obs != res.Object {
		t.Fatal("the state at the remembered resourceVersion was not reused as it is")
	}

	// Another manager writes another field: m's entry is byte for byte the
	// same and its values are there, so the state moves to the new version.
	other := acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("e"))
	if err := h.c.Apply(ctx, other, client.FieldOwner("other")); err != nil {
		t.Fatal(err)
	}
	moved := h.observe(t)
	st, _, err = h.a.ownedStateOf(ctx, h.t, moved, labels, true, false)
	if err != nil || st == remembered || st.rv != moved.ResourceVersion || st.last == nil || st.last != remembered.last {
		t.Fatalf("state %+v, err %v; want the remembered one at resourceVersion %s", st, err, moved.ResourceVersion)
	}
	if h.a.owned.get(key) != st {
		t.Fatal("the moved state was not remembered")
	}

	// The same entry with another value (an apply whose answer was lost, or
	// another process with the same manager name): read it again.
	changed := moved.DeepCopy()
	changed.ResourceVersion += "0"
	changed.Status.Phase = "Off"
	st, _, err = h.a.ownedStateOf(ctx, h.t, changed, labels, true, false)
	if err != nil || st.last != nil || !reflect.DeepEqual(st.content["status"], map[string]any{"phase": "Off"}) {
		t.Fatalf("state %+v, err %v; want the observed value extracted", st, err)
	}

	// No managedFields (a cache that strips them): read again.
	stripped := moved.DeepCopy()
	stripped.ManagedFields = nil
	stripped.ResourceVersion += "1"
	st, fresh, err := h.a.ownedStateOf(ctx, h.t, stripped, labels, true, false)
	if err != nil || fresh == client.Object(stripped) || h.count(h.a.metrics.reads) != 1 ||
		!reflect.DeepEqual(st.content["status"], map[string]any{"phase": "On"}) {
		t.Fatalf("state %+v from %T, err %v, %v reads", st, fresh, err, h.count(h.a.metrics.reads))
	}

	// Another manager's state is its own.
	h.t.Manager = "n"
	st, _, err = h.a.ownedStateOf(ctx, h.t, moved, labels, true, false)
	if err != nil || len(st.content) != 0 || st.rv != moved.ResourceVersion {
		t.Fatalf("a manager without an entry: %+v, %v", st, err)
	}
}

// TestRemember remembers from a decoded response and from one whose decoding
// was deferred (only its metadata read): both must remember the same.
func TestRemember(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprintf("deferred=%v", deferred), func(t *testing.T) {
			h := newHarness(t)
			key := ownedKey{uid: "u1", manager: "m", sub: MainResource}
			answerOf := func(w *v1alpha1.Widget) *answer {
				if !deferred {
					return &answer{obj: w}
				}
				raw, err := json.Marshal(w)
				if err != nil {
					t.Fatal(err)
				}
				a := &answer{raw: raw}
				if err := readMeta(raw, &a.meta); err != nil {
					t.Fatal(err)
				}
				return a
			}
			resp := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", UID: "u1", ResourceVersion: "9"}}
			h.a.owned.put(key, &ownedState{rv: "8", content: map[string]any{"status": map[string]any{"phase": "Off"}}})
			h.a.remember(h.t, answerOf(resp), sentContent(t, map[string]any{"status": map[string]any{"phase": "On"}}))
			if st := h.a.owned.get(key); st != nil {
				// Remembering "nothing owned" would make the next apply
				// release the phase just applied.
				t.Fatalf("a response without managedFields: remembered %+v, want nothing remembered", st)
			}
			resp.ManagedFields = []metav1.ManagedFieldsEntry{entry("other", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{}}`)}
			h.a.remember(h.t, answerOf(resp), sentContent(t, map[string]any{"status": map[string]any{"phase": "On"}}))
			if st := h.a.owned.get(key); st == nil || st.rv != "9" || len(st.content) != 0 {
				t.Fatalf("a response without the manager's entry: remembered %+v, want nothing owned at 9", st)
			}
			resp.ManagedFields = []metav1.ManagedFieldsEntry{
				entry("m", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{}}`),
				entry("m", metav1.ManagedFieldsOperationApply, "status", `{"f:status":{}}`),
				entry("m", metav1.ManagedFieldsOperationApply, "", `{"f:status":{"f:phase":{}}}`),
			}
			h.a.remember(h.t, answerOf(resp), sentContent(t, map[string]any{"kind": "Widget", "status": map[string]any{"phase": "On"}}))
			if st := h.a.owned.get(key); st == nil || !reflect.DeepEqual(st.content, map[string]any{"status": map[string]any{"phase": "On"}}) || string(st.entry) != `{"f:status":{"f:phase":{}}}` {
				t.Fatalf("remembered %+v", st)
			}
			resp.ManagedFields[2].FieldsType = "FieldsV2"
			h.a.remember(h.t, answerOf(resp), &prepared{})
			if st := h.a.owned.get(key); st != nil {
				t.Fatal("an entry of an unknown fieldsType left a state remembered")
			}
			resp.ManagedFields[2].FieldsType = "FieldsV1"
			h.a.remember(h.t, answerOf(resp), &prepared{})
			resp.ResourceVersion = ""
			h.a.remember(h.t, answerOf(resp), &prepared{})
			if st := h.a.owned.get(key); st != nil {
				t.Fatal("a response without resourceVersion left a state remembered")
			}
		})
	}
}

// TestNewAnswer decodes a response into the observed object's type, or with
// decoding deferred reads its metadata only; either refuses a response that
// cannot be read or names no resourceVersion.
func TestNewAnswer(t *testing.T) {
	target := Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w1", Manager: "m", Subresource: StatusSubresource}
	raw := []byte(`{"apiVersion":"demo.statusapply.io/v1alpha1","kind":"Widget","metadata":{"name":"w1","namespace":"ns","uid":"u1","resourceVersion":"5","managedFields":[{"manager":"m","operation":"Apply","subresource":"status","fieldsType":"FieldsV1","fieldsV1":{"f:status":{}}}]},"status":{"phase":"On"}}`)
	for _, deferred := range []bool{false, true} {
		a, err := newAnswer(raw, &v1alpha1.Widget{}, target, deferred)
		if err != nil {
			t.Fatalf("deferred=%v: %v", deferred, err)
		}
		entry, found, err := a.entry("m", StatusSubresource)
		if a.resourceVersion() != "5" || a.uid() != "u1" || !found || err != nil || string(entry) != `{"f:status":{}}` {
			t.Fatalf("deferred=%v: rv %q uid %q entry %s %v %v", deferred, a.resourceVersion(), a.uid(), entry, found, err)
		}
		if w, ok := a.obj.(*v1alpha1.Widget); deferred != (a.obj == nil) || (!deferred && (!ok || w.Status.Phase != "On")) {
			t.Fatalf("deferred=%v: object %#v", deferred, a.obj)
		}
		if _, err := newAnswer([]byte(`{"metadata":{"name":"w1"}}`), &v1alpha1.Widget{}, target, deferred); err == nil || !strings.Contains(err.Error(), "names no resourceVersion") {
			t.Fatalf("deferred=%v: a response without resourceVersion: %v", deferred, err)
		}
		if _, err := newAnswer([]byte(`{"metadata":`), &v1alpha1.Widget{}, target, deferred); err == nil || !strings.Contains(err.Error(), "decoding the API server's response") {
			t.Fatalf("deferred=%v: a broken response: %v", deferred, err)
		}
	}
}

// TestReadMeta reads only what precedes and makes up the metadata, and
// refuses what is not an object's JSON.
func TestReadMeta(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      answerMeta
		err       string
	}{
		{name: "metadata first", raw: `{"metadata":{"resourceVersion":"7","uid":"u1","managedFields":[{"manager":"m","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":{"f:a":{}}}]},"status":{}}`,
			want: answerMeta{ResourceVersion: "7", UID: "u1", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Apply", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:a":{}}`)}}}},
		{name: "after apiVersion and kind", raw: `{"apiVersion":"v1","kind":"K","metadata":{"resourceVersion":"8"}}`, want: answerMeta{ResourceVersion: "8"}},
		{name: "what follows the metadata is not read", raw: `{"metadata":{"resourceVersion":"9"},"status":{"broken"`, want: answerMeta{ResourceVersion: "9"}},
		{name: "no metadata", raw: `{"kind":"K"}`, err: "it has no metadata"},
		{name: "not an object", raw: `[1]`, err: "malformed JSON"},
		{name: "a string with escapes", raw: `{"metadata":{"uid":"a\"b\u0041","resourceVersion":"1"}}`, want: answerMeta{ResourceVersion: "1", UID: `a"bA`}},
		{name: "nulls and every kind of value skipped", raw: `{"kind":null,"x":[1,-2.5e3,true,false,null,{"a":[]}],"metadata":{"name":"n","labels":{"a":"b"},"resourceVersion":"3","managedFields":[{"manager":"m","time":"t","fieldsV1":null}]}}`,
			want: answerMeta{ResourceVersion: "3", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}},
		{name: "a bad number", raw: `{"x":1-2,"metadata":{}}`, err: "malformed JSON"},
		{name: "indented", raw: "{\n\t\"kind\" : \"K\" ,\r\n \"metadata\": {\"resourceVersion\" :\"4\" }\n}", want: answerMeta{ResourceVersion: "4"}},
		{name: "a string that starts with an escape", raw: `{"metadata":{"uid":"\"u\""}}`, want: answerMeta{UID: `"u"`}},
		{name: "cut after a value", raw: `{"metadata":{"uid":"u"`, err: "malformed JSON"},
		{name: "cut after the opening brace", raw: `{`, err: "malformed JSON"},
		{name: "cut inside a skipped object", raw: `{"spec":{"a":[1,"x"`, err: "malformed JSON"},
		{name: "a bad literal", raw: `{"x":nul,"metadata":{}}`, err: "malformed JSON"},
		{name: "numbers of every form", raw: `{"x":[-0.5e+3,1E-2,7],"y":12,"z":-1.5e+2,"w":2E-1,"metadata":{"uid":"u"}}`, want: answerMeta{UID: "u"}},
		{name: "cut after a number", raw: `{"x":12`, err: "malformed JSON"},
		{name: "nothing where a value belongs", raw: `{"x":}`, err: "malformed JSON"},
		{name: "no colon", raw: `{"metadata" {}}`, err: "malformed JSON"},
		{name: "an unterminated string", raw: `{"metadata":{"uid":"abc`, err: "malformed JSON"},
		{name: "broken metadata", raw: `{"metadata":{"resourceVersion":7}}`, err: "decoding the API server's response"},
		{name: "broken before the metadata", raw: `{"kind":}`, err: "decoding the API server's response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got answerMeta
			err := readMeta([]byte(tc.raw), &got)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to say %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("readMeta = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestOwned(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.a.Apply(ctx, h.t, h.observe(t), widgetBuild("On", map[string]string{"a": "1"}), &ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(h.t.GVK)
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w1"}, u); err != nil {
		t.Fatal(err)
	}
	owned, found, err := extractOwned(h.a.TypeConverter(), u, "m", MainResource)
	if err != nil || !found || !reflect.DeepEqual(owned["status"], map[string]any{"phase": "On", "attributes": map[string]any{"a": "1"}}) {
		t.Fatalf("Owned = %v, %v, %v", owned, found, err)
	}
	owned, found, err = extractOwned(h.a.TypeConverter(), u, "nobody", MainResource)
	if err != nil || found || owned == nil || len(owned) != 0 {
		t.Fatalf("Owned for a manager without an entry = %v, %v, %v", owned, found, err)
	}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{entry("m", metav1.ManagedFieldsOperationApply, "", `{"f:status":{"f:nosuchfield":{}}}`)})
	if _, found, err := extractOwned(h.a.TypeConverter(), u, "m", MainResource); err != nil || !found {
		t.Fatalf("an entry for a field the object lacks: %v, %v", found, err)
	}
	u.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{
		"manager": "m", "operation": "Apply", "fieldsV1": map[string]any{"f:status": map[string]any{"k:notjson": map[string]any{}}},
	}}
	if _, found, err := extractOwned(h.a.TypeConverter(), u, "m", MainResource); err == nil || found {
		t.Fatalf("a broken entry: %v, %v", found, err)
	}
	if _, err := TypeConverters().TypedToObject(nil); err == nil {
		t.Fatal("no converters converted")
	}
}

func TestMetricsAreSharedAndCountConflictsByClass(t *testing.T) {
	reg := prometheus.NewRegistry()
	m1, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if m1.applies != m2.applies || m1.skipped != m2.skipped || m1.conflicts != m2.conflicts || m1.retries != m2.retries ||
		m1.reads != m2.reads || m1.latency != m2.latency || m1.pending != m2.pending {
		t.Fatal("a second Applier on one registry got collectors of its own")
	}
	target := Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w1", Manager: "m"}
	m1.conflict(target, fieldConflict())
	m1.conflict(target, stale())
	m1.conflict(target, stale())
	m1.conflict(target, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "widgets"}, "w1"))
	for class, want := range map[string]float64{conflictClassFieldManager: 1, conflictClassStale: 2, conflictClassOther: 1} {
		got := metricValue(m2.conflicts.With(prometheus.Labels{"manager": "m", "group": "demo.statusapply.io", "kind": "Widget", "class": class}))
		if got != want {
			t.Errorf("class %s: %v, want %v", class, got, want)
		}
	}

	for name, collector := range map[string]prometheus.Collector{
		"statusapply_applies_total":          prometheus.NewCounter(prometheus.CounterOpts{Name: "statusapply_applies_total", Help: "x"}),
		"statusapply_noop_skips_total":       prometheus.NewCounter(prometheus.CounterOpts{Name: "statusapply_noop_skips_total", Help: "x"}),
		"statusapply_conflicts_total":        prometheus.NewCounter(prometheus.CounterOpts{Name: "statusapply_conflicts_total", Help: "x"}),
		"statusapply_retries_total":          prometheus.NewCounter(prometheus.CounterOpts{Name: "statusapply_retries_total", Help: "x"}),
		"statusapply_reads_total":            prometheus.NewCounter(prometheus.CounterOpts{Name: "statusapply_reads_total", Help: "x"}),
		"statusapply_apply_duration_seconds": prometheus.NewCounter(prometheus.CounterOpts{Name: "statusapply_apply_duration_seconds", Help: "x"}),
		"statusapply_pending_entries":        prometheus.NewCounter(prometheus.CounterOpts{Name: "statusapply_pending_entries", Help: "x"}),
	} {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collector)
		if _, err := newMetrics(reg); err == nil {
			t.Errorf("%s registered with other labels: no error", name)
		}
	}
}

func TestRecordPending(t *testing.T) {
	h := newHarness(t)
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	tg := func(manager, name string) Target {
		return Target{GVK: gvk, Namespace: "ns", Name: name, Subresource: StatusSubresource, Manager: manager}
	}
	// record tallies the entries a Flush tried, those it left queued among them.
	record := func(tried, left []Target) {
		var p Pending
		for _, x := range tried {
			p.Add(&x, slices.Contains(left, x))
		}
		h.a.RecordPending(&p)
	}
	record([]Target{tg("a", "w1"), tg("a", "w2"), tg("a", "w3"), tg("b", "w1")}, []Target{tg("a", "w1"), tg("a", "w3")})
	for manager, want := range map[string]float64{"a": 2, "b": 0} {
		if got := metricValue(h.a.metrics.pending.With(prometheus.Labels{"manager": manager, "group": gvk.Group, "kind": "Widget"})); got != want {
			t.Errorf("manager %s: %v pending, want %v", manager, got, want)
		}
	}
	record([]Target{tg("a", "w1")}, nil)
	if got := metricValue(h.a.metrics.pending.With(prometheus.Labels{"manager": "a", "group": gvk.Group, "kind": "Widget"})); got != 0 {
		t.Fatalf("%v pending after a Flush that left none", got)
	}

	// A Flush that left none sets every manager and kind it tried to 0,
	// once each, and no other.
	gadget := tg("a", "g1")
	gadget.GVK.Kind = "Gadget"
	record([]Target{tg("a", "w1"), tg("a", "w2"), tg("b", "w1")}, []Target{tg("a", "w1"), tg("b", "w1")})
	record([]Target{tg("a", "w1"), tg("a", "w2"), tg("b", "w1"), tg("b", "w2"), gadget}, nil)
	for _, l := range []prometheus.Labels{
		{"manager": "a", "group": gvk.Group, "kind": "Widget"},
		{"manager": "b", "group": gvk.Group, "kind": "Widget"},
		{"manager": "a", "group": gvk.Group, "kind": "Gadget"},
	} {
		if got := metricValue(h.a.metrics.pending.With(l)); got != 0 {
			t.Errorf("%v: %v pending after a Flush that left none", l, got)
		}
	}
}

func TestDefaults(t *testing.T) {
	h := newHarness(t)
	if b := h.a.cfg.backoff; b.Steps != 5 || b.Duration.Milliseconds() != 10 || b.Factor != 2 {
		t.Fatalf("guard backoff %+v, want 5 steps from 10ms, doubling", b)
	}
	if got := h.a.groupResource(h.t.GVK); got != (schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}) {
		t.Fatalf("groupResource = %v", got)
	}
	unknown := schema.GroupVersionKind{Group: "x.example.com", Version: "v1", Kind: "Gadget"}
	if got := h.a.groupResource(unknown); got != (schema.GroupResource{Group: "x.example.com", Resource: "gadgets"}) {
		t.Fatalf("groupResource of an unmapped kind = %v", got)
	}
	// The REST mapper's name wins over the guess (gizmos).
	gizmo := schema.GroupVersionKind{Group: "x.example.com", Version: "v1", Kind: "Gizmo"}
	mapper, ok := h.a.client.RESTMapper().(*meta.DefaultRESTMapper)
	if !ok {
		t.Fatalf("the harness's REST mapper is a %T", h.a.client.RESTMapper())
	}
	mapper.AddSpecific(gizmo, gizmo.GroupVersion().WithResource("gizmoes"), gizmo.GroupVersion().WithResource("gizmo"), meta.RESTScopeNamespace)
	if got := h.a.groupResource(gizmo); got != (schema.GroupResource{Group: "x.example.com", Resource: "gizmoes"}) {
		t.Fatalf("groupResource of a kind the mapper names = %v", got)
	}
	cluster := ownership.ObjectRef{GVK: h.t.GVK, Name: "w1"}
	if got := cluster.String(); got != "Widget w1" {
		t.Fatalf("a cluster-scoped ObjectRef prints as %q", got)
	}
}

func TestSchemaCacheFollowsSchemaVersion(t *testing.T) {
	h := newHarness(t)
	tc := &countingConverter{TypeConverter: h.a.tc}
	h.a.tc = kindschema.NewConverter(tc)
	for range 2 {
		if _, err := h.a.tc.Kind(h.t.GVK); err != nil {
			t.Fatal(err)
		}
	}
	if tc.calls != 1 {
		t.Fatalf("%d look-ups for one kind at one version, want 1", tc.calls)
	}
	tc.version++
	if _, err := h.a.tc.Kind(h.t.GVK); err != nil || tc.calls != 2 {
		t.Fatalf("%d look-ups after the schemas changed, want 2 (err %v)", tc.calls, err)
	}
}

// countingConverter counts schema look-ups and reports a SchemaVersion the
// test changes.
type countingConverter struct {
	managedfields.TypeConverter
	version uint64
	calls   int
}

func (c *countingConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	c.calls++
	return c.TypeConverter.ObjectToTyped(obj, opts...)
}

func (c *countingConverter) SchemaVersion() uint64 { return c.version }

// metricValue reads one counter or gauge.
func metricValue(m prometheus.Metric) float64 {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		panic(err)
	}
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}

// intentOf is the intent Apply sent last, without the newline an
// unstructured encoding ends with.
func intentOf(res Result) string { return strings.TrimSpace(string(res.Intent)) }

// TestApplyLogsToTheContextLogger: Apply writes to the logger the context
// carries, not to controller-runtime's global one.
func TestApplyLogsToTheContextLogger(t *testing.T) {
	h := newHarness(t)
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	ctx := logr.NewContext(context.Background(), logger)
	if _, err := h.a.Apply(ctx, h.t, h.observe(t), widgetBuild("On", nil)); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"msg"="applied"`) || !strings.Contains(lines[0], "Widget ns/w1") {
		t.Fatalf("logged %q, want one line saying it applied, naming Widget ns/w1", lines)
	}
}

// TestApplyTypedBuildsOwnCopy: every build edits a copy of the owned content
// of its own, so a build that edits it in place (writing through a pointer
// it did not allocate) is still sent, and two builds never share one. The
// control edits the owned content itself, as a build handed a shared copy
// would: the edit then compares equal to what the manager owns, and is lost.
func TestApplyTypedBuildsOwnCopy(t *testing.T) {
	writeThrough := func(phase string, seen *any, into func(any) []any) Build {
		b := widgetBuild("", nil)
		b.Typed.Mutate = func(ac any, _ client.Object) (Built, error) {
			*seen = ac
			for _, v := range into(ac) {
				if w, _ := v.(*acv1alpha1.WidgetApplyConfiguration); phase != "" {
					*w.Status.Phase = phase
				}
			}
			return Built{}, nil
		}
		return b
	}
	typ := reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]()
	for _, control := range []bool{false, true} {
		t.Run(fmt.Sprintf("control=%v", control), func(t *testing.T) {
			h, res := appliedOn(t)
			ctx := context.Background()
			same := func(ac any) []any { return []any{ac} }
			var first, second any
			steady, err := h.a.Apply(ctx, h.t, res.Object, writeThrough("", &first, same), &ApplyOptions{})
			if err != nil || steady.Sent {
				t.Fatalf("steady apply: sent %v, err %v", steady.Sent, err)
			}
			if _, err := h.a.Apply(ctx, h.t, res.Object, writeThrough("", &second, same), &ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			if first == second {
				t.Fatal("two builds edited the same copy")
			}
			form := h.a.owned.get(ownedKey{uid: "u1", manager: "m", sub: MainResource}).last
			if form == nil || form.typ != typ {
				t.Fatal("no typed form remembered")
			}
			into := same
			if control {
				// The build's copy shares its phase with the owned content.
				into = func(ac any) []any { return []any{ac, form.ac} }
			}
			changed, err := h.a.Apply(ctx, h.t, res.Object, writeThrough("Off", new(any), into), &ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if control {
				if changed.Sent {
					t.Fatal("control: editing the owned content in place was still sent; the spec cannot tell a copy from the original")
				}
				return
			}
			if !changed.Sent || intentOf(changed) != typedPrefix+`,"status":{"phase":"Off"}}` {
				t.Fatalf("an edit through the copy: sent %v, intent %s", changed.Sent, changed.Intent)
			}
			back, err := h.a.Apply(ctx, h.t, changed.Object, widgetBuild("On", nil), &ApplyOptions{})
			if err != nil || !back.Sent || intentOf(back) != typedPrefix+`,"status":{"phase":"On"}}` {
				t.Fatalf("back to On: sent %v, intent %s, err %v", back.Sent, back.Intent, err)
			}
		})
	}
}

// sentContent is what an unstructured apply of content prepared: the
// content and the body sent, which is what the Applier remembers.
func sentContent(t testing.TB, content map[string]any) *prepared {
	t.Helper()
	body, err := json.Marshal(content)
	if err != nil {
		t.Fatal(err)
	}
	return &prepared{body: body, content: content}
}

// An Apply whose context has ended sends nothing and fails with the
// context's cause.
func TestApplyStopsOnceTheContextEnded(t *testing.T) {
	h := newHarness(t)
	cause := errors.New("the proof is gone")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if _, err := h.a.Apply(ctx, h.t, h.observe(t), widgetBuild("Ready", nil)); !errors.Is(err, cause) || len(h.bodies()) != 0 {
		t.Fatalf("%v, %d applies sent; want the cause and none", err, len(h.bodies()))
	}
}

// A typed build's FromContent decides whether its type holds what the manager
// owns: when it does not, Func builds the intent; when it does, its value is
// the form Mutate edits; a value of another type is refused. The control
// converts as the default does and takes the typed path.
func TestTypedBuildFromContent(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		from       func(content map[string]any) (any, bool, error)
		wantPrefix string
		wantErr    string
	}{
		{"cannot hold it", func(map[string]any) (any, bool, error) { return nil, false, nil }, unstructuredPrefix, ""},
		{"another type", func(map[string]any) (any, bool, error) { return &noMetaAC{}, true, nil }, "", "FromContent made"},
		{"control", func(content map[string]any) (any, bool, error) {
			ac := &acv1alpha1.WidgetApplyConfiguration{}
			return ac, true, runtime.DefaultUnstructuredConverter.FromUnstructured(content, ac)
		}, typedPrefix, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			b := widgetBuild("On", nil)
			calls := 0
			b.Typed.FromContent = func(content map[string]any) (any, bool, error) {
				calls++
				return tc.from(content)
			}
			res, err := h.a.Apply(ctx, h.t, h.observe(t), b)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Apply: %v, want an error naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !strings.HasPrefix(intentOf(res), tc.wantPrefix) || calls == 0 {
				t.Fatalf("intent %s, err %v, FromContent called %d times", res.Intent, err, calls)
			}
		})
	}
}
