package ctrlbatch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/ssa"
)

func stale() error {
	return apierrors.NewConflict(schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}, "w1",
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

func fieldConflict() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: `Apply failed with 1 conflict: conflict with "other" with subresource "status": .status.phase`,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
			Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "other" with subresource "status"`, Field: ".status.phase",
		}}},
	}}
}

// entry wraps err the way Apply does.
func entry(name string, err error) error {
	return &ssa.Error{Target: ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: name,
		Subresource: ssa.StatusSubresource, Manager: "m"}, Err: err}
}

func TestRequeueAfter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		after time.Duration
		ok    bool
	}{
		{"nil", nil, 0, false},
		{"stale", errors.Join(errors.Join(entry("a", stale()))), conflicts.StaleRetryAfter, true},
		{"field-manager conflict", errors.Join(errors.Join(entry("a", fieldConflict()))), conflicts.ConflictRetryAfter, true},
		{"both: the later hint", errors.Join(errors.Join(entry("a", stale())), errors.Join(entry("b", fieldConflict()))), conflicts.ConflictRetryAfter, true},
		{"retries exhausted", entry("a", fmt.Errorf("%w after 5 attempts: %w", ssa.ErrRetriesExhausted, stale())), conflicts.StaleRetryAfter, true},
		{"conflict and a held-back status entry", errors.Join(entry("a", fieldConflict()), entry("a", batcher.ErrHeldBack)), conflicts.ConflictRetryAfter, true},
		{"conflict and a network error", errors.Join(entry("a", fieldConflict()), entry("b", errors.New("connection refused"))), 0, false},
		{"conflict and a 422", errors.Join(entry("a", fieldConflict()), entry("b", apierrors.NewInvalid(schema.GroupKind{Kind: "Widget"}, "b", nil))), 0, false},
		{"a network error", entry("a", errors.New("connection refused")), 0, false},
		{"conflict and an apply of unknown outcome", errors.Join(entry("a", fieldConflict()), entry("b", fmt.Errorf("%w: %w", ssa.ErrOutcomeUnknown, io.ErrUnexpectedEOF))), 0, false},
		{"a conflict answered after the proof expired", entry("a", errors.Join(ctrlbatch.ErrFenced, stale())), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after, ok := ctrlbatch.RequeueAfterFlush(tc.err)
			if after != tc.after || ok != tc.ok {
				t.Fatalf("RequeueAfter = %v, %v; want %v, %v", after, ok, tc.after, tc.ok)
			}
		})
	}
}

// fixture is an Applier on a fake client holding Widget ns/w1, whose status
// applies fail with applyErr when it is set.
func fixture(t *testing.T, applyErr *error) (*ssa.Applier, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).
		WithTypeConverters(applyconfiguration.NewTypeConverter(scheme)).
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithReturnManagedFields().
		WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns"}}).
		Build(), interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if *applyErr != nil {
				return *applyErr
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(scheme)), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a, c
}

func TestWrap(t *testing.T) {
	var applyErr error
	a, c := fixture(t, &applyErr)
	ctx := context.Background()
	if ctrlbatch.FromContext(ctx) != nil {
		t.Fatal("FromContext outside a reconcile is not nil")
	}
	boom := errors.New("boom")

	// reconciler queues a phase for w1 and returns res and err.
	reconciler := func(phase string, res reconcile.Result, err error) reconcile.Reconciler {
		return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			b := ctrlbatch.FromContext(ctx)
			if b == nil {
				return reconcile.Result{}, errors.New("no batch in the context")
			}
			w := &v1alpha1.Widget{}
			if err := c.Get(ctx, req.NamespacedName, w); err != nil {
				return reconcile.Result{}, err
			}
			if qerr := batcher.Status(b, w, "m", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				ac.WithStatus(acv1alpha1.WidgetStatus().WithPhase(phase))
				return nil
			}); qerr != nil {
				return reconcile.Result{}, qerr
			}
			return res, err
		})
	}
	req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "w1"}}
	phase := func() string {
		w := &v1alpha1.Widget{}
		if err := c.Get(ctx, req.NamespacedName, w); err != nil {
			t.Fatal(err)
		}
		return w.Status.Phase
	}

	res, err := ctrlbatch.Wrap(a, reconciler("One", reconcile.Result{RequeueAfter: time.Minute}, nil)).Reconcile(ctx, req)
	if err != nil || res.RequeueAfter != time.Minute || phase() != "One" {
		t.Fatalf("success: %v, %v, phase %q", res, err, phase())
	}

	res, err = ctrlbatch.Wrap(a, reconciler("Two", reconcile.Result{}, boom)).Reconcile(ctx, req)
	if !errors.Is(err, boom) || phase() != "Two" {
		t.Fatalf("the reconciler's error: %v, phase %q: the batch must be flushed and the error returned", err, phase())
	}

	applyErr = fieldConflict()
	res, err = ctrlbatch.Wrap(a, reconciler("Three", reconcile.Result{RequeueAfter: time.Hour}, nil)).Reconcile(ctx, req)
	if err != nil || res.RequeueAfter != conflicts.ConflictRetryAfter {
		t.Fatalf("a conflict: %v, %v; want a requeue after %v", res, err, conflicts.ConflictRetryAfter)
	}
	res, err = ctrlbatch.Wrap(a, reconciler("Three", reconcile.Result{RequeueAfter: time.Second}, nil)).Reconcile(ctx, req)
	if err != nil || res.RequeueAfter != time.Second {
		t.Fatalf("a conflict and a sooner requeue: %v, %v; want the reconciler's", res, err)
	}
	res, err = ctrlbatch.Wrap(a, reconciler("Three", reconcile.Result{}, boom)).Reconcile(ctx, req)
	if !errors.Is(err, boom) || conflicts.Classify(err) != conflicts.ClassFieldManagerConflict {
		t.Fatalf("the reconciler's error and a conflict: %v, %v; want both errors", res, err)
	}

	applyErr = errors.New("connection refused")
	if _, err = ctrlbatch.Wrap(a, reconciler("Four", reconcile.Result{}, nil)).Reconcile(ctx, req); err == nil {
		t.Fatal("a flush that failed returned no error")
	}
}

// The wrapper is generic over the request type.
func TestWrapTypedRequest(t *testing.T) {
	var applyErr error
	a, _ := fixture(t, &applyErr)
	type byName string
	var got *batcher.Batch
	r := ctrlbatch.Wrap(a, reconcile.TypedFunc[byName](func(ctx context.Context, _ byName) (reconcile.Result, error) {
		got = ctrlbatch.FromContext(ctx)
		return reconcile.Result{}, nil
	}), ctrlbatch.WithBatchOptions(batcher.WithConcurrency(1)))
	if _, err := r.Reconcile(context.Background(), "w1"); err != nil || got == nil {
		t.Fatalf("Reconcile: %v, batch %v", err, got)
	}
}
