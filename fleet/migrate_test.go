package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

// migrateNow stamps the Apply entries the migrations under test create.
var migrateNow = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// calls counts and records what the Migrator sent to the fake client.
type calls struct {
	mu      sync.Mutex
	gets    int
	patches []client.Patch
	seeds   [][]client.SubResourceApplyOption
}

// fakeClient returns a fake client holding objs with their managedFields as
// given, and a record of the calls; funcs, when set, intercept further (the
// record is taken before them).
func fakeClient(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) (client.Client, *calls) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	rec := &calls{}
	wrapped := interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			rec.mu.Lock()
			rec.gets++
			rec.mu.Unlock()
			if funcs.Get != nil {
				return funcs.Get(ctx, c, key, obj, opts...)
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			rec.mu.Lock()
			rec.patches = append(rec.patches, patch)
			rec.mu.Unlock()
			if funcs.Patch != nil {
				return funcs.Patch(ctx, c, obj, patch, opts...)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			rec.mu.Lock()
			rec.seeds = append(rec.seeds, opts)
			rec.mu.Unlock()
			if funcs.SubResourceApply != nil {
				return funcs.SubResourceApply(ctx, c, sub, obj, opts...)
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithReturnManagedFields().
		WithStatusSubresource(&v1alpha1.Widget{}).WithObjects(objs...).WithInterceptorFuncs(wrapped).Build()
	return c, rec
}

var widgetRef = ownership.ObjectRef{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w"}

// legacyWidget is a Widget whose status a legacy writer set with Update.
func legacyWidget(name string) *v1alpha1.Widget {
	w := ownershiptest.Widget(ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec), ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB))
	w.Name = name
	return w
}

// toSummary is the plan most tests carry out.
var toSummary = Plan{Managers: map[string]string{"legacy": "summary"}}

var (
	legacyOwners   = map[string]string{"creator (Update)": " spec", "legacy (Update, status)": "A,B .status.phase"}
	migratedOwners = map[string]string{"creator (Update)": " spec", "summary (Apply, status)": "A,B .status.phase"}
)

func newMigrator(t *testing.T, c client.Client, plan Plan, opts ...Option) *Migrator {
	t.Helper()
	m, err := NewMigrator(c, plan, append([]Option{WithClock(func() time.Time { return migrateNow })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// stored reads the named Widget's managedFields from the fake client.
func stored(t *testing.T, c client.Client, name string) []metav1.ManagedFieldsEntry {
	t.Helper()
	got := &v1alpha1.Widget{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, got); err != nil {
		t.Fatal(err)
	}
	return got.ManagedFields
}

// conflict is the 409 the API server answers a stale resourceVersion with.
func conflict() error {
	return apierrors.NewConflict(schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}, "w", errors.New("the object has been modified"))
}

func TestMigrateWrites(t *testing.T) {
	c, rec := fakeClient(t, interceptor.Funcs{}, legacyWidget("w"))
	m := newMigrator(t, c, toSummary, WithDryRun(false))
	res, err := m.Migrate(context.Background(), ownershiptest.Widget())
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != widgetRef || !res.Changed || res.DryRun || res.Seeded || res.Attempts != 1 {
		t.Errorf("result = %+v", res)
	}
	if got := summary(res.Before); !reflect.DeepEqual(got, legacyOwners) {
		t.Errorf("Before = %v, want %v", got, legacyOwners)
	}
	if got := summary(res.After); !reflect.DeepEqual(got, migratedOwners) {
		t.Errorf("After = %v, want %v", got, migratedOwners)
	}
	if s := res.String(); !strings.HasPrefix(s, "migrated Widget ns/w (attempts 1)\nbefore: ") || !strings.Contains(s, "\nafter: ") {
		t.Errorf("String() = %q", s)
	}
	mfs := stored(t, c, "w")
	if got := ownedBy(t, mfs); !reflect.DeepEqual(got, migratedOwners) {
		t.Errorf("stored = %v, want %v", got, migratedOwners)
	}
	// One JSON patch that replaces managedFields and resourceVersion, so a
	// racing write is a 409.
	if len(rec.patches) != 1 || len(rec.seeds) != 0 {
		t.Fatalf("patches %d, seeds %d; want 1, 0", len(rec.patches), len(rec.seeds))
	}
	if rec.patches[0].Type() != types.JSONPatchType {
		t.Errorf("patch type = %v", rec.patches[0].Type())
	}
	raw, err := rec.patches[0].Data(nil)
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op, Path string
		Value    json.RawMessage
	}
	if err := json.Unmarshal(raw, &ops); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0].Op != "replace" || ops[0].Path != "/metadata/managedFields" ||
		ops[1].Op != "replace" || ops[1].Path != "/metadata/resourceVersion" || string(ops[1].Value) != `"999"` {
		t.Errorf("patch = %s", raw)
	}

	// Idempotent: the second run finds nothing to move and writes nothing.
	again, err := m.Migrate(context.Background(), ownershiptest.Widget())
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || again.Attempts != 1 || again.Before != again.After || len(rec.patches) != 1 {
		t.Errorf("second run = %+v, patches %d", again, len(rec.patches))
	}
	if !strings.HasPrefix(again.String(), "unchanged Widget ns/w (attempts 1)\nbefore: ") || strings.Contains(again.String(), "after:") {
		t.Errorf("String() = %q", again.String())
	}
}

func TestMigrateDryRunWritesNothing(t *testing.T) {
	c, rec := fakeClient(t, interceptor.Funcs{}, legacyWidget("w"))
	before := stored(t, c, "w")
	res, err := newMigrator(t, c, toSummary).Migrate(context.Background(), ownershiptest.Widget())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || !res.DryRun || res.Attempts != 1 {
		t.Errorf("result = %+v", res)
	}
	if got := summary(res.After); !reflect.DeepEqual(got, migratedOwners) {
		t.Errorf("After = %v, want %v", got, migratedOwners)
	}
	if len(rec.patches) != 0 || !reflect.DeepEqual(stored(t, c, "w"), before) {
		t.Errorf("dry run wrote: %d patches", len(rec.patches))
	}
	s := res.String()
	if !strings.HasPrefix(s, "would migrate Widget ns/w (attempts 1)\nbefore: ") || !strings.Contains(s, "\nafter: Widget ns/w:\n  creator (Update)\n  summary (Apply, status)") {
		t.Errorf("String() = %q", s)
	}
}

func TestMigrateRetriesConflicts(t *testing.T) {
	tests := []struct {
		name      string
		attempts  int
		conflicts int
		wantErr   bool
		wantTries int
	}{
		{name: "one race, then success", attempts: 3, conflicts: 1, wantTries: 2},
		{name: "races until the last attempt", attempts: 3, conflicts: 2, wantTries: 3},
		{name: "exhausted", attempts: 3, conflicts: 3, wantErr: true, wantTries: 3},
		{name: "below one means one", attempts: 0, conflicts: 1, wantErr: true, wantTries: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			left := tt.conflicts
			c, rec := fakeClient(t, interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if left > 0 {
						left--
						return conflict()
					}
					return c.Patch(ctx, obj, patch, opts...)
				},
			}, legacyWidget("w"))
			res, err := newMigrator(t, c, toSummary, WithDryRun(false), WithAttempts(tt.attempts)).Migrate(context.Background(), ownershiptest.Widget())
			if rec.gets != tt.wantTries || len(rec.patches) != tt.wantTries {
				t.Errorf("gets %d, patches %d; want %d each (a fresh read per attempt)", rec.gets, len(rec.patches), tt.wantTries)
			}
			if !tt.wantErr {
				if err != nil || res.Attempts != tt.wantTries || !res.Changed {
					t.Fatalf("Migrate = %+v, %v", res, err)
				}
				if got := ownedBy(t, stored(t, c, "w")); !reflect.DeepEqual(got, migratedOwners) {
					t.Errorf("stored = %v", got)
				}
				return
			}
			var oe *ownership.ObjectError
			if res != nil || !errors.Is(err, ownership.ErrRetriesExhausted) || !apierrors.IsConflict(err) || !errors.As(err, &oe) {
				t.Fatalf("Migrate = %+v, %v; want ErrRetriesExhausted wrapping the 409 in an ObjectError", res, err)
			}
			if oe.Object != widgetRef || oe.Op != "migrating" || !strings.Contains(err.Error(), fmt.Sprintf("after %d attempts", tt.wantTries)) {
				t.Errorf("error = %#v (%v)", oe, err)
			}
			if got := ownedBy(t, stored(t, c, "w")); !reflect.DeepEqual(got, legacyOwners) {
				t.Errorf("stored = %v, want untouched", got)
			}
		})
	}
}

func TestMigrateErrorsAreNotRetried(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		funcs   interceptor.Funcs
		plan    Plan
		obj     *v1alpha1.Widget
		want    error
		wantMsg string
	}{
		{
			name: "read fails",
			funcs: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return boom
			}},
			plan: toSummary, obj: legacyWidget("w"), want: boom, wantMsg: "migrating Widget ns/w: reading: boom",
		},
		{
			name: "write fails",
			funcs: interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				return boom
			}},
			plan: toSummary, obj: legacyWidget("w"), want: boom, wantMsg: "migrating Widget ns/w: writing managedFields: boom",
		},
		{
			name: "server keeps the old managedFields",
			funcs: interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				return nil
			}},
			plan: toSummary, obj: legacyWidget("w"), wantMsg: "the API server did not store the migrated managedFields",
		},
		{
			name: "unreadable entry",
			funcs: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				err := c.Get(ctx, key, obj, opts...)
				obj.SetManagedFields([]metav1.ManagedFieldsEntry{ownershiptest.Entry("legacy", ownershiptest.Update, "status", `{"f:status":`)})
				return err
			}},
			plan: toSummary, obj: legacyWidget("w"), want: ownership.ErrBadManagedFields,
		},
		{
			name: "plan leaves fields without an owner",
			plan: toSummary,
			obj: func() *v1alpha1.Widget {
				other := ownershiptest.Entry("legacy", ownershiptest.Update, "status", `{"f:status":{"f:observedGeneration":{}}}`)
				other.APIVersion = "demo.statusapply.io/v1beta1"
				return ownershiptest.Widget(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), other)
			}(),
			want: ErrOrphanedFields,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec := fakeClient(t, tt.funcs, tt.obj)
			res, err := newMigrator(t, c, tt.plan, WithDryRun(false)).Migrate(context.Background(), ownershiptest.Widget())
			var oe *ownership.ObjectError
			if res != nil || err == nil || !errors.As(err, &oe) || oe.Object != widgetRef {
				t.Fatalf("Migrate = %+v, %v; want an ObjectError for %v", res, err, widgetRef)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v does not wrap %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
			if rec.gets != 1 {
				t.Errorf("%d reads, want 1: only 409s are retried", rec.gets)
			}
		})
	}
}

func TestMigrateContextAndKind(t *testing.T) {
	c, rec := fakeClient(t, interceptor.Funcs{}, legacyWidget("w"))
	m := newMigrator(t, c, toSummary, WithDryRun(false))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Migrate(ctx, ownershiptest.Widget()); !errors.Is(err, context.Canceled) || rec.gets != 0 {
		t.Errorf("cancelled: %v after %d reads; want context.Canceled before any read", err, rec.gets)
	}
	// A type the client's scheme does not know is named by its Go type.
	_, err := m.Migrate(context.Background(), &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	var oe *ownership.ObjectError
	if !errors.As(err, &oe) || oe.Op != "migrating" || oe.Object.Name != "p" || oe.Object.GVK.Kind != "PartialObjectMetadata" || rec.gets != 0 {
		t.Errorf("unknown kind: %#v (%v)", oe, err)
	}
}

func TestNewMigratorValidatesThePlan(t *testing.T) {
	c, _ := fakeClient(t, interceptor.Funcs{})
	if m, err := NewMigrator(c, Plan{}); m != nil || !errors.Is(err, ErrInvalidPlan) {
		t.Errorf("NewMigrator(empty plan) = %v, %v; want ErrInvalidPlan", m, err)
	}
}

// seedWith answers the seeding apply like the API server: it attributes the
// object's status to before-first-apply (mfs) and moves resourceVersion.
func seedWith(mfs ...metav1.ManagedFieldsEntry) interceptor.Funcs {
	return interceptor.Funcs{SubResourceApply: func(_ context.Context, _ client.Client, sub string, obj runtime.ApplyConfiguration, _ ...client.SubResourceApplyOption) error {
		u, ok := obj.(interface {
			SetManagedFields([]metav1.ManagedFieldsEntry)
			SetResourceVersion(string)
		})
		if !ok || sub != "status" {
			return fmt.Errorf("unexpected seeding apply %T on %q", obj, sub)
		}
		u.SetManagedFields(mfs)
		u.SetResourceVersion("1000")
		return nil
	}}
}

func TestMigrateSeeds(t *testing.T) {
	bfa := ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "", ownershiptest.LegacyAB)
	tests := []struct {
		name       string
		funcs      interceptor.Funcs
		dryRun     bool
		wantBefore map[string]string
		wantAfter  map[string]string
		wantErr    string
	}{
		{
			name: "dry run", funcs: seedWith(bfa), dryRun: true,
			wantBefore: map[string]string{"before-first-apply (Update)": "A,B .status.phase"},
			wantAfter:  map[string]string{"summary (Apply, status)": "A,B .status.phase"},
		},
		{name: "nothing to attribute", funcs: seedWith(), dryRun: true},
		{
			name: "seeding fails",
			funcs: interceptor.Funcs{SubResourceApply: func(context.Context, client.Client, string, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
				return errors.New("forbidden")
			}},
			wantErr: "migrating Widget ns/w: seeding managedFields: forbidden",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec := fakeClient(t, tt.funcs, ownershiptest.Widget())
			plan := Plan{Managers: map[string]string{ownership.BeforeFirstApplyManager: "summary"}}
			res, err := newMigrator(t, c, plan, WithDryRun(tt.dryRun), WithSeedManager("seeder")).Migrate(context.Background(), ownershiptest.Widget())
			if len(rec.seeds) != 1 {
				t.Fatalf("%d seeding applies, want 1", len(rec.seeds))
			}
			opts := &client.SubResourceApplyOptions{}
			opts.ApplyOpts(rec.seeds[0])
			if opts.FieldManager != "seeder" || (len(opts.DryRun) == 1) != tt.dryRun {
				t.Errorf("seeding options = %+v, want manager seeder, dry run %v", opts, tt.dryRun)
			}
			if tt.wantErr != "" {
				if res != nil || err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Migrate = %+v, %v; want %q", res, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Seeded || res.Changed != (tt.wantAfter != nil) || len(rec.patches) != 0 {
				t.Errorf("result = %+v, patches %d", res, len(rec.patches))
			}
			if got := summary(res.Before); !reflect.DeepEqual(got, tt.wantBefore) {
				t.Errorf("Before = %v, want %v", got, tt.wantBefore)
			}
			if got := summary(res.After); !reflect.DeepEqual(got, tt.wantAfter) {
				t.Errorf("After = %v, want %v", got, tt.wantAfter)
			}
			if want := "(attempts 1, seeded)"; !strings.Contains(res.String(), want) {
				t.Errorf("String() = %q, want %q in it", res.String(), want)
			}
		})
	}
}

func TestMigrateObjectsAsRead(t *testing.T) {
	read := func(t *testing.T, c client.Client) *v1alpha1.Widget {
		t.Helper()
		w := &v1alpha1.Widget{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "w"}, w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	// touchedSinceListed reads w, then changes it as a writer racing the
	// migration would: the copy returned is stale.
	touchedSinceListed := func(t *testing.T, c client.Client) *v1alpha1.Widget {
		t.Helper()
		listed := read(t, c)
		moved := listed.DeepCopy()
		moved.Labels = map[string]string{"touched": "yes"}
		if err := c.Update(context.Background(), moved); err != nil {
			t.Fatal(err)
		}
		return listed
	}

	t.Run("a dry run sends nothing", func(t *testing.T) {
		c, rec := fakeClient(t, interceptor.Funcs{}, legacyWidget("w"))
		listed := read(t, c)
		rec.gets = 0
		res, err := newMigrator(t, c, toSummary, WithObjectsAsRead()).Migrate(context.Background(), listed)
		if err != nil || !res.Changed || rec.gets != 0 || len(rec.patches) != 0 {
			t.Fatalf("Migrate = %+v, %v after %d reads and %d patches; want a change computed from the object as given", res, err, rec.gets, len(rec.patches))
		}
	})

	t.Run("one write, guarded by the resourceVersion as given", func(t *testing.T) {
		c, rec := fakeClient(t, interceptor.Funcs{}, legacyWidget("w"))
		listed := read(t, c)
		rec.gets = 0
		res, err := newMigrator(t, c, toSummary, WithObjectsAsRead(), WithDryRun(false)).Migrate(context.Background(), listed)
		if err != nil || !res.Changed || res.Attempts != 1 || rec.gets != 0 || len(rec.patches) != 1 {
			t.Fatalf("Migrate = %+v, %v after %d reads and %d patches; want one patch and no read", res, err, rec.gets, len(rec.patches))
		}
		raw, err := rec.patches[0].Data(nil)
		if err != nil || !strings.Contains(string(raw), `"path":"/metadata/resourceVersion","value":"`+listed.ResourceVersion+`"`) {
			t.Errorf("patch %s (%v) is not guarded by the listed resourceVersion %s", raw, err, listed.ResourceVersion)
		}
		if got := ownedBy(t, stored(t, c, "w")); !reflect.DeepEqual(got, migratedOwners) {
			t.Errorf("stored = %v", got)
		}
	})

	t.Run("an object that changed since it was listed is refused, read and rewritten", func(t *testing.T) {
		c, rec := fakeClient(t, interceptor.Funcs{}, legacyWidget("w"))
		listed := touchedSinceListed(t, c)
		rec.gets = 0
		res, err := newMigrator(t, c, toSummary, WithObjectsAsRead(), WithDryRun(false)).Migrate(context.Background(), listed)
		if err != nil || res.Attempts != 2 || rec.gets != 1 || len(rec.patches) != 2 {
			t.Fatalf("Migrate = %+v, %v after %d reads and %d patches; want a 409, a read, and a second patch", res, err, rec.gets, len(rec.patches))
		}
		got := read(t, c)
		owners := ownedBy(t, got.ManagedFields)
		if got.Labels["touched"] != "yes" || owners["summary (Apply, status)"] != migratedOwners["summary (Apply, status)"] ||
			owners["legacy (Update, status)"] != "" {
			t.Errorf("stored %v with labels %v: the concurrent write must survive and ownership be migrated", owners, got.Labels)
		}
	})

	t.Run("the control: without the guard the stale object would have been written", func(t *testing.T) {
		c, _ := fakeClient(t, interceptor.Funcs{}, legacyWidget("w"))
		listed := touchedSinceListed(t, c)
		stale := listed.DeepCopy()
		err := c.Patch(context.Background(), stale, client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/metadata/resourceVersion","value":"`+listed.ResourceVersion+`"}]`)))
		if !apierrors.IsConflict(err) {
			t.Fatalf("a patch carrying the listed resourceVersion = %v, want a 409: the fake client does not check it, and the test above proves nothing", err)
		}
		// The same stale managedFields written without the guard land,
		// and drop the concurrent writer's entry.
		if n := len(read(t, c).ManagedFields); n <= len(listed.ManagedFields) {
			t.Fatalf("%d entries after the concurrent write, %d listed: want one more, or the control proves nothing", n, len(listed.ManagedFields))
		}
		mfs, err := json.Marshal(listed.ManagedFields)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Patch(context.Background(), listed.DeepCopy(), client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/metadata/managedFields","value":`+string(mfs)+`}]`))); err != nil {
			t.Fatalf("an unguarded patch of the listed managedFields = %v, want it written", err)
		}
		if got := read(t, c); len(got.ManagedFields) != len(listed.ManagedFields) {
			t.Errorf("stored %d entries after the unguarded write, want the %d listed", len(got.ManagedFields), len(listed.ManagedFields))
		}
	})

	t.Run("an object without a resourceVersion is read", func(t *testing.T) {
		c, rec := fakeClient(t, interceptor.Funcs{}, legacyWidget("w"))
		if _, err := newMigrator(t, c, toSummary, WithObjectsAsRead()).Migrate(context.Background(), ownershiptest.Widget()); err != nil || rec.gets != 1 {
			t.Fatalf("Migrate: %v after %d reads, want 1", err, rec.gets)
		}
	})
}
