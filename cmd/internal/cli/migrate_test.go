package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/fleet"
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
			var seen []fleet.Progress
			m, err := fleet.NewMigrator(c, fleet.Plan{ReleaseShared: true}, fleet.WithAttempts(1),
				fleet.WithProgress(func(p fleet.Progress) { seen = append(seen, p) }))
			if err != nil {
				t.Fatal(err)
			}
			report := fleet.MigrateAllConcurrently(context.Background(), m, objs, workers)
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
		m, err := fleet.NewMigrator(c, fleet.Plan{ReleaseShared: true})
		if err != nil {
			t.Fatal(err)
		}
		report := fleet.MigrateAllConcurrently(ctx, m, objs, 4)
		if len(report.Errors) != len(objs) || !errors.Is(report.Errors[len(objs)-1], context.Canceled) {
			t.Fatalf("a cancelled run must account for every object with ctx's error: %v", report.Err())
		}
	})
}

func TestConnectionLost(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:1/apis", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
	reset := &url.Error{Op: "Patch", URL: "https://127.0.0.1:1/apis", Err: &net.OpError{Op: "read", Net: "tcp",
		Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}
	gr := schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused, wrapped by the migration", &ownership.ObjectError{Op: "migrating", Err: fmt.Errorf("reading: %w", refused)}, true},
		{"reset", reset, true},
		{"EOF", &url.Error{Op: "Get", URL: "x", Err: io.EOF}, true},
		{"a client timeout", &url.Error{Op: "Get", URL: "x", Err: context.DeadlineExceeded}, true},
		{"the server's timeout", apierrors.NewTimeoutError("slow", 1), true},
		{"not found", apierrors.NewNotFound(gr, "w1"), false},
		{"a conflict", apierrors.NewConflict(gr, "w1", errors.New("modified")), false},
		{"forbidden", apierrors.NewForbidden(gr, "w1", errors.New("no")), false},
		{"orphaned fields", fleet.ErrOrphanedFields, false},
	} {
		if got := connectionLost(tt.err); got != tt.want {
			t.Errorf("%s: connectionLost(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestNewDestinationsMessage(t *testing.T) {
	objs := []*unstructured.Unstructured{widget("ns", "w1"), widget("ns", "w2")}
	objs[1].SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "summary", Operation: metav1.ManagedFieldsOperationApply}})
	plan := fleet.Plan{Managers: map[string]string{"legacy": "sumry"}, Conditions: map[string]string{"A": "summary"}}
	msg := newDestinationsMessage(plan, objs, nil)
	for _, want := range []string{"--from legacy=sumry: sumry applies on none of the 2 objects",
		"apply managers there: summary", "--new-destination"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q misses %q", msg, want)
		}
	}
	if strings.Contains(msg, "--condition A=summary") {
		t.Errorf("a destination that applies is no news: %q", msg)
	}
	if msg := newDestinationsMessage(plan, objs, []string{"sumry"}); msg != "" {
		t.Errorf("a destination named with --new-destination: %q", msg)
	}
	if err := checkNewDestinationFlags(plan, []string{"sumry", "summary"}); err != nil {
		t.Errorf("destinations of the plan: %v", err)
	}
	if err := checkNewDestinationFlags(plan, []string{"readiness"}); err == nil || !strings.Contains(err.Error(), "--new-destination readiness") {
		t.Errorf("a name the plan hands nothing to: %v", err)
	}
}

func TestProgressPrinter(t *testing.T) {
	var b strings.Builder
	p := newProgressPrinter(&b)
	p.print("[1/2] Widget ns/w1: migrated")
	p.print("[2/2] Widget ns/w2: migrated")
	p.clear()
	if want := "[1/2] Widget ns/w1: migrated\n[2/2] Widget ns/w2: migrated\n"; b.String() != want {
		t.Errorf("not a terminal: a line per report; got %q", b.String())
	}

	b.Reset()
	p = &progressPrinter{w: &b, terminal: true, width: 20}
	p.print("[1/2] Widget ns/w1: migrated")
	p.print("[2/2] short")
	p.clear()
	p.clear()
	if want := "\r\x1b[2K[1/2] Widget ns/w1:\r\x1b[2K[2/2] short\r\x1b[2K"; b.String() != want {
		t.Errorf("a terminal: one line redrawn, cut to the width, erased at the end; got %q", b.String())
	}
}
