package fleet

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

// fleet is a run of four Widgets: two to migrate, one missing from the
// server, one whose status is already applied.
func fleet(t *testing.T) (client.Client, *calls, []*v1alpha1.Widget) {
	t.Helper()
	done := ownershiptest.Widget(ownershiptest.Entry("summary", ownershiptest.Apply, "status", ownershiptest.ApplyB))
	done.Name = "w4"
	c, rec := fakeClient(t, interceptor.Funcs{}, legacyWidget("w1"), legacyWidget("w3"), done)
	names := []*v1alpha1.Widget{ownershiptest.Widget(), ownershiptest.Widget(), ownershiptest.Widget(), ownershiptest.Widget()}
	for i, n := range []string{"w1", "w2", "w3", "w4"} {
		names[i].Name = n
	}
	return c, rec, names
}

// seen is the gist of one progress report.
type seen struct {
	Done, Total int
	Name        string
	Changed     bool
	Err         bool
}

func record(into *[]seen) Option {
	return WithProgress(func(p Progress) {
		s := seen{Done: p.Done, Total: p.Total, Name: p.Object.Name, Err: p.Err != nil}
		if p.Result != nil {
			s.Changed = p.Result.Changed
		}
		if (p.Result == nil) == (p.Err == nil) {
			panic("progress must carry exactly one of Result and Err")
		}
		*into = append(*into, s)
	})
}

var wantFleetProgress = []seen{
	{Done: 1, Total: 4, Name: "w1", Changed: true},
	{Done: 2, Total: 4, Name: "w2", Err: true},
	{Done: 3, Total: 4, Name: "w3", Changed: true},
	{Done: 4, Total: 4, Name: "w4"},
}

func TestMigrateAll(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 8} {
		t.Run("", func(t *testing.T) {
			c, _, objs := fleet(t)
			var progress []seen
			m := newMigrator(t, c, toSummary, WithDryRun(false), record(&progress))
			r := MigrateAllConcurrently(context.Background(), m, objs, workers)
			if got, want := r.String(), "4 objects: 2 changed, 1 unchanged, 1 failed"; got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			if r.Changed() != 2 || len(r.Results) != 3 || len(r.Errors) != 1 {
				t.Fatalf("report = %+v", r)
			}
			var names []string
			for _, res := range r.Results {
				names = append(names, res.Object.Name)
			}
			if !reflect.DeepEqual(names, []string{"w1", "w3", "w4"}) {
				t.Errorf("results for %v, want input order", names)
			}
			var oe *ownership.ObjectError
			if err := r.Err(); !apierrors.IsNotFound(err) || !errors.As(err, &oe) || oe.Object.Name != "w2" {
				t.Errorf("Err() = %v, want w2's NotFound", err)
			}
			if !reflect.DeepEqual(progress, wantFleetProgress) {
				t.Errorf("progress = %+v, want %+v", progress, wantFleetProgress)
			}
			for _, n := range []string{"w1", "w3"} {
				if got := ownedBy(t, stored(t, c, n)); !reflect.DeepEqual(got, migratedOwners) {
					t.Errorf("%s stored = %v", n, got)
				}
			}
		})
	}
}

func TestMigrateAllAfterCancel(t *testing.T) {
	c, rec, objs := fleet(t)
	var progress []seen
	m := newMigrator(t, c, toSummary, WithDryRun(false), record(&progress))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := MigrateAll(ctx, m, objs)
	if len(r.Results) != 0 || len(r.Errors) != 4 || rec.gets != 0 {
		t.Fatalf("report = %v after %d reads; want every object failed, none read", r, rec.gets)
	}
	for i, err := range r.Errors {
		var oe *ownership.ObjectError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &oe) || oe.Object.Name != objs[i].Name || oe.Op != "migrating" {
			t.Errorf("error %d = %v", i, err)
		}
	}
	if len(progress) != 4 || progress[3] != (seen{Done: 4, Total: 4, Name: "w4", Err: true}) {
		t.Errorf("progress = %+v", progress)
	}
	if got := r.String(); got != "4 objects: 0 changed, 0 unchanged, 4 failed" {
		t.Errorf("String() = %q", got)
	}
}

func TestReportErrNilWhenAllSucceed(t *testing.T) {
	r := &Report{Results: []*Result{{Changed: true}, {}}}
	if r.Err() != nil || r.Changed() != 1 || r.String() != "2 objects: 1 changed, 1 unchanged, 0 failed" {
		t.Errorf("report = %v, Err %v", r, r.Err())
	}
}

func TestMigrateList(t *testing.T) {
	c, rec, _ := fleet(t)
	list := &v1alpha1.WidgetList{}
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	r, err := newMigrator(t, c, toSummary).MigrateList(context.Background(), list)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.String(); got != "3 objects: 2 changed, 1 unchanged, 0 failed" || len(rec.patches) != 0 {
		t.Errorf("dry run report = %q, %d patches", got, len(rec.patches))
	}

	// A plan that names a manager no object has fails before any read.
	gets := rec.gets
	r, err = newMigrator(t, c, Plan{Managers: map[string]string{"nobody": "x"}}).MigrateList(context.Background(), list)
	if r != nil || !errors.Is(err, ErrPlanMismatch) || rec.gets != gets {
		t.Errorf("mismatched plan: %v, %v after %d reads", r, err, rec.gets-gets)
	}

	bad := []struct {
		name string
		list client.ObjectList
		want string
	}{
		{"not a list", &metav1.Status{}, "migrating list: "},
		{"items are not objects", &metav1.List{Items: []runtime.RawExtension{{Raw: []byte(`{}`)}}}, "migrating list: item 0 is a "},
	}
	for _, tt := range bad {
		r, err := newMigrator(t, c, toSummary).MigrateList(context.Background(), tt.list)
		if r != nil || err == nil || !strings.HasPrefix(err.Error(), tt.want) || rec.gets != gets {
			t.Errorf("%s: %v, %v", tt.name, r, err)
		}
	}
}
