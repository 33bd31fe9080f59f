package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/ownership"
)

// TestMigrateAllConcurrently runs a migration of many objects on several
// workers whose reads take random time, so that objects finish out of
// order, and checks that progress still arrives once per object, in input
// order, from one goroutine (run with -race).
func TestMigrateAllConcurrently(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, _ client.WithWatch, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				m := maxInFlight.Load()
				if n <= m || maxInFlight.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			return apierrors.NewNotFound(schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}, key.Name)
		},
	}).Build()

	var objs []*unstructured.Unstructured
	for i := range 40 {
		objs = append(objs, widget("ns", fmt.Sprintf("w%02d", i)))
	}
	for _, workers := range []int{1, 8} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			maxInFlight.Store(0)
			var seen []ownership.Progress
			m, err := ownership.NewMigrator(c, ownership.Plan{ReleaseShared: true}, ownership.WithAttempts(1),
				ownership.WithProgress(func(p ownership.Progress) { seen = append(seen, p) }))
			if err != nil {
				t.Fatal(err)
			}
			report := ownership.MigrateAllConcurrently(context.Background(), m, objs, workers)
			if len(report.Errors) != len(objs) || len(report.Results) != 0 || len(seen) != len(objs) {
				t.Fatalf("%d errors, %d results, %d progress reports for %d objects", len(report.Errors), len(report.Results), len(seen), len(objs))
			}
			for i, p := range seen {
				if p.Done != i+1 || p.Total != len(objs) || p.Object.Name != objs[i].GetName() {
					t.Fatalf("report %d is %+v, want object %s done %d", i, p, objs[i].GetName(), i+1)
				}
				var oe *ownership.ObjectError
				if !errors.As(report.Errors[i], &oe) || oe.Object.Name != objs[i].GetName() || !apierrors.IsNotFound(report.Errors[i]) {
					t.Fatalf("error %d is %v, want not found for %s", i, report.Errors[i], objs[i].GetName())
				}
			}
			if got := maxInFlight.Load(); (workers == 1) != (got == 1) {
				t.Fatalf("at most %d reads in flight with %d workers", got, workers)
			}
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		m, err := ownership.NewMigrator(c, ownership.Plan{ReleaseShared: true})
		if err != nil {
			t.Fatal(err)
		}
		report := ownership.MigrateAllConcurrently(ctx, m, objs, 4)
		if len(report.Errors) != len(objs) || !errors.Is(report.Errors[len(objs)-1], context.Canceled) {
			t.Fatalf("a cancelled run must account for every object with ctx's error: %v", report.Err())
		}
	})
}
