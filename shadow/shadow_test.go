package shadow

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/metricstest"
	"github.com/statusapply/statusapply/ssa"
)

// shadowHarness is a shadow-mode Batch on a fake client holding Widget w0
// (phase Running, condition Ready), with the metrics in a registry of their
// own, and what the mode reports kept: the lines of the logger in ctx, the
// Events of the recorder (when it has one) and the divergences the hook is
// called with (when the setup asks for one).
type shadowHarness struct {
	b      *batcher.Batch
	mode   *Mode
	c      client.Client
	reg    *prometheus.Registry
	events *events.FakeRecorder // nil without a recorder
	ctx    context.Context

	mu          sync.Mutex
	lines       []string
	divergences []batcher.Divergence
}

// shadowSetup says what a shadowHarness has: funcs intercept the fake
// client's requests.
type shadowSetup struct {
	hook     bool // collect divergences through Options.OnDivergence
	recorder bool // give the mode an event recorder
	funcs    interceptor.Funcs
}

func newShadowHarness(t *testing.T, setup shadowSetup) *shadowHarness {
	t.Helper()
	inner, tc := fakeWidgetClient(t, liveWidget())
	h := &shadowHarness{c: interceptor.NewClient(inner, setup.funcs), reg: prometheus.NewRegistry()}
	a, err := ssa.NewApplier(h.c, ssa.WithTypeConverter(tc), ssa.WithRegisterer(h.reg))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Registerer: h.reg}
	if setup.recorder {
		h.events = events.NewFakeRecorder(10)
		o.Recorder = h.events
	}
	if setup.hook {
		o.OnDivergence = func(_ context.Context, d batcher.Divergence) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.divergences = append(h.divergences, d)
		}
	}
	if h.mode, err = New(o); err != nil {
		t.Fatal(err)
	}
	h.b = batcher.New(a, h.mode.Option())
	h.ctx = log.IntoContext(context.Background(), funcr.New(func(_, args string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.lines = append(h.lines, args)
	}, funcr.Options{}))
	return h
}

// liveWidget is w0 as the fake client first holds it.
func liveWidget() *v1alpha1.Widget {
	return &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns", UID: "u0", ResourceVersion: "7"},
		Status: v1alpha1.WidgetStatus{Phase: "Running", Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue,
			Reason: "Up", Message: "up", LastTransitionTime: metav1.Unix(1700000000, 0)}}},
	}
}

func (h *shadowHarness) reported() ([]string, []batcher.Divergence) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.lines), slices.Clone(h.divergences)
}

// recorded drains the Events recorded so far.
func (h *shadowHarness) recorded() []string {
	var out []string
	for h.events != nil && len(h.events.Events) > 0 {
		out = append(out, <-h.events.Events)
	}
	return out
}

// series are the series of the counter name, keyed by their labels other
// than the target's (manager, checked to be the shadow writer's, group and
// kind), as name=value pairs in name order.
func (h *shadowHarness) series(t *testing.T, name string) map[string]float64 {
	t.Helper()
	out, err := metricstest.CounterSeries(h.reg, name, prometheus.Labels{"manager": "shadow"}, "group", "kind")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var shadowTarget = ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w0",
	Subresource: ssa.StatusSubresource, Manager: "shadow"}

// answer is the live Widget as edit leaves it: what a dry run would answer.
func answer(edit func(w *v1alpha1.Widget)) *v1alpha1.Widget {
	w := liveWidget()
	edit(w)
	return w
}

// The outcome of one compared entry goes to every channel, or only to the
// metrics when the entry agrees or could not be compared.
func TestShadowEntryReports(t *testing.T) {
	legacyPhase := conflicts.Conflict{Manager: "legacy", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
		Path: fieldpath.MakePathOrDie("status", "phase")}
	boom := errors.New("mutator 1 of 1: boom")
	const divergenceLine = `"level"=0 "msg"="shadow apply diverges from the live object" ` +
		`"target"="status of Widget ns/w0 as \"shadow\"" "manager"="shadow" "kind"="Widget" ` +
		`"object"="Widget ns/w0" "resourceVersion"="7" ` +
		`"conditions"=["condition Ready: reason \"Up\" -> \"Degraded\""] "fields"=[".status.phase: \"Running\" -> \"Done\""] ` +
		`"contested"=[".status.phase owned by legacy (Update, subresource status)"]`
	for _, tc := range []struct {
		name        string
		target      ssa.Target
		res         ssa.Result
		err         error
		wantErr     string
		entries     map[string]float64
		divergences map[string]float64
		lines       []string
		events      []string
		reported    int
	}{
		{name: "the entry failed", target: shadowTarget, res: ssa.Result{Attempts: 1}, err: boom,
			wantErr: boom.Error(), entries: map[string]float64{"outcome=failed": 1}},
		{name: "nothing was sent", target: shadowTarget, res: ssa.Result{Object: liveWidget(), Observed: liveWidget()},
			entries: map[string]float64{"outcome=agreed": 1}},
		{name: "the answer differs in a lastTransitionTime only", target: shadowTarget,
			res: ssa.Result{Sent: true, Attempts: 1, Observed: liveWidget(), Object: answer(func(w *v1alpha1.Widget) {
				w.Status.Conditions[0].LastTransitionTime = metav1.Unix(1800000000, 0)
			})},
			entries: map[string]float64{"outcome=agreed": 1}},
		{name: "the answer cannot be compared", target: func() ssa.Target {
			t := shadowTarget
			t.GVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Unknown"}
			return t
		}(),
			res:     ssa.Result{Sent: true, Attempts: 2, Observed: liveWidget(), Object: liveWidget()},
			wantErr: "comparing the dry run with the live object: the schema of example.com/v1, Kind=Unknown",
			entries: map[string]float64{"outcome=failed": 1}},
		{name: "the answer diverges", target: shadowTarget,
			res: ssa.Result{Sent: true, Attempts: 2, Taken: []conflicts.Conflict{legacyPhase}, Observed: liveWidget(),
				Object: answer(func(w *v1alpha1.Widget) {
					w.Status.Conditions[0].Reason = "Degraded"
					w.Status.Phase = "Done"
				})},
			entries: map[string]float64{"outcome=diverged": 1},
			divergences: map[string]float64{
				"change=changed,condition_type=Ready,field=reason":   1,
				"change=changed,condition_type=,field=.status.phase": 1,
			},
			lines: []string{divergenceLine},
			events: []string{`Normal StatusShadowDivergence manager shadow would change condition Ready: reason "Up" -> "Degraded"; ` +
				`.status.phase: "Running" -> "Done"`},
			reported: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newShadowHarness(t, shadowSetup{hook: true, recorder: true})
			err := h.mode.report(h.ctx, h.b.Applier(), tc.target, tc.res, tc.err)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("shadowEntry = %v, want an error with %q", err, tc.wantErr)
			}
			if got := h.series(t, "statusapply_shadow_entries_total"); !reflect.DeepEqual(got, tc.entries) {
				t.Errorf("entries %v, want %v", got, tc.entries)
			}
			if got := h.series(t, "statusapply_shadow_divergences_total"); len(got)+len(tc.divergences) > 0 && !reflect.DeepEqual(got, tc.divergences) {
				t.Errorf("divergences %v, want %v", got, tc.divergences)
			}
			lines, reported := h.reported()
			if !reflect.DeepEqual(lines, tc.lines) {
				t.Errorf("log lines\n%q\nwant\n%q", lines, tc.lines)
			}
			if got := h.recorded(); !reflect.DeepEqual(got, tc.events) {
				t.Errorf("events %q, want %q", got, tc.events)
			}
			if len(reported) != tc.reported {
				t.Fatalf("%d divergences reported to the hook, want %d", len(reported), tc.reported)
			}
			if tc.reported > 0 {
				d := reported[0]
				if d.Target != tc.target || d.ResourceVersion != "7" || !reflect.DeepEqual(d.Contested, tc.res.Taken) ||
					d.String() != `condition Ready: reason "Up" -> "Degraded"; .status.phase: "Running" -> "Done"` {
					t.Errorf("reported %+v", d)
				}
			}
		})
	}
}

// An error of the entry is returned as it is; one of the comparison names
// the target and the attempts the dry run took.
func TestShadowEntryErrors(t *testing.T) {
	h := newShadowHarness(t, shadowSetup{})
	boom := errors.New("boom")
	if err := h.mode.report(h.ctx, h.b.Applier(), shadowTarget, ssa.Result{}, boom); !errors.Is(err, boom) || err.Error() != "boom" {
		t.Fatalf("shadowEntry = %v, want the entry's own error", err)
	}
	unknown := shadowTarget
	unknown.GVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Unknown"}
	err := h.mode.report(h.ctx, h.b.Applier(), unknown, ssa.Result{Sent: true, Attempts: 2, Observed: liveWidget(), Object: liveWidget()}, nil)
	var applyErr *ssa.Error
	if !errors.As(err, &applyErr) || applyErr.Target != unknown || applyErr.Attempts != 2 {
		t.Fatalf("shadowEntry = %#v, want an *ssa.Error of the target after 2 attempts", err)
	}
}

// Without a recorder and a hook, a divergence is logged and counted only.
func TestShadowEntryWithoutEventsOrHook(t *testing.T) {
	res := ssa.Result{Sent: true, Attempts: 1, Observed: liveWidget(), Object: answer(func(w *v1alpha1.Widget) { w.Status.Phase = "Done" })}
	const line = `"level"=0 "msg"="shadow apply diverges from the live object" ` +
		`"target"="status of Widget ns/w0 as \"shadow\"" "manager"="shadow" "kind"="Widget" ` +
		`"object"="Widget ns/w0" "resourceVersion"="7" ` +
		`"conditions"=[] "fields"=[".status.phase: \"Running\" -> \"Done\""]`
	for name, setup := range map[string]shadowSetup{
		"neither a recorder nor a hook": {},
		"a hook, no recorder":           {hook: true},
	} {
		t.Run(name, func(t *testing.T) {
			h := newShadowHarness(t, setup)
			if err := h.mode.report(h.ctx, h.b.Applier(), shadowTarget, res, nil); err != nil {
				t.Fatal(err)
			}
			lines, reported := h.reported()
			if !reflect.DeepEqual(lines, []string{line}) {
				t.Errorf("log lines\n%q\nwant\n%q", lines, []string{line})
			}
			if got := h.series(t, "statusapply_shadow_divergences_total"); !reflect.DeepEqual(got,
				map[string]float64{"change=changed,condition_type=,field=.status.phase": 1}) {
				t.Errorf("divergences %v", got)
			}
			if events := h.recorded(); len(events) != 0 {
				t.Errorf("events %q", events)
			}
			if len(reported) != map[bool]int{false: 0, true: 1}[setup.hook] {
				t.Errorf("%d divergences reported to the hook", len(reported))
			}
		})
	}
}

// An Event's note is kept whole up to the events.k8s.io limit of 1000
// bytes, and cut to it with "..." beyond, without splitting a character.
func TestShadowEventNoteLimit(t *testing.T) {
	const prefix = `manager shadow would change .status.phase: "Running" -> ""`
	for _, tc := range []struct {
		name  string
		phase string
		want  string // the note
	}{
		{"999 bytes", strings.Repeat("x", 999-len(prefix)), ""},
		{"1000 bytes", strings.Repeat("x", 1000-len(prefix)), ""},
		{"1001 bytes", strings.Repeat("x", 1001-len(prefix)),
			(`manager shadow would change .status.phase: "Running" -> "` + strings.Repeat("x", 1001-len(prefix)))[:997] + "..."},
		{"far beyond", strings.Repeat("x", 5000),
			(`manager shadow would change .status.phase: "Running" -> "` + strings.Repeat("x", 5000))[:997] + "..."},
		{"cut inside a character", "x" + strings.Repeat("é", 1000),
			// 997 bytes end in the first byte of an é, which is dropped.
			(`manager shadow would change .status.phase: "Running" -> "x` + strings.Repeat("é", 1000))[:996] + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newShadowHarness(t, shadowSetup{recorder: true})
			res := ssa.Result{Sent: true, Attempts: 1, Observed: liveWidget(), Object: answer(func(w *v1alpha1.Widget) { w.Status.Phase = tc.phase })}
			if err := h.mode.report(h.ctx, h.b.Applier(), shadowTarget, res, nil); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = `manager shadow would change .status.phase: "Running" -> "` + tc.phase + `"`
			}
			events := h.recorded()
			if len(events) != 1 || events[0] != "Normal "+ReasonDivergence+" "+want {
				t.Fatalf("events %q\nwant the note %q", events, want)
			}
			if note := strings.TrimPrefix(events[0], "Normal "+ReasonDivergence+" "); len(note) > maxEventNote {
				t.Fatalf("a note of %d bytes", len(note))
			}
		})
	}
}

// dryRunAnswers makes the fake client answer a dry-run status apply as the
// API server would for this file's intents (a phase): the stored object with
// the intent's phase. Other applies go through.
var dryRunAnswers = interceptor.Funcs{
	SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
		ao := &client.SubResourceApplyOptions{}
		ao.ApplyOpts(opts)
		if !slices.Contains(ao.DryRun, metav1.DryRunAll) {
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		}
		body, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		intent := &acv1alpha1.WidgetApplyConfiguration{}
		if err := json.Unmarshal(body, intent); err != nil {
			return err
		}
		live := &v1alpha1.Widget{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: *intent.Namespace, Name: *intent.Name}, live); err != nil {
			return err
		}
		if intent.Status != nil && intent.Status.Phase != nil {
			live.Status.Phase = *intent.Status.Phase
		}
		live.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
		answer, err := json.Marshal(live)
		if err != nil {
			return err
		}
		return obj.(json.Unmarshaler).UnmarshalJSON(answer)
	},
}

// A shadow Flush sends dry runs only: the object keeps its status and
// resourceVersion, the diverging entry is reported and cleared, and an entry
// that cannot be compared stays queued with its error returned.
func TestShadowFlushWritesNothing(t *testing.T) {
	h := newShadowHarness(t, shadowSetup{hook: true, funcs: dryRunAnswers})
	w := &v1alpha1.Widget{}
	if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: "ns", Name: "w0"}, w); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := batcher.Status(h.b, w, "shadow", phase("Done")); err != nil {
		t.Fatal(err)
	}
	if err := batcher.Status(h.b, w, "failing", func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return boom }); err != nil {
		t.Fatal(err)
	}
	for flush := 1; flush <= 2; flush++ {
		err := h.b.Flush(h.ctx)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), `as "failing"`) {
			t.Fatalf("flush %d: %v, want the failing entry's error", flush, err)
		}
		if p := h.b.Pending(); len(p) != 1 || p[0].Manager != "failing" {
			t.Fatalf("flush %d: pending %v, want the failing entry only (%v)", flush, p, err)
		}
		after := &v1alpha1.Widget{}
		if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: "ns", Name: "w0"}, after); err != nil {
			t.Fatal(err)
		}
		if after.Status.Phase != "Running" || after.ResourceVersion != w.ResourceVersion {
			t.Fatalf("flush %d wrote: phase %q, resourceVersion %s (was %s)", flush, after.Status.Phase, after.ResourceVersion, w.ResourceVersion)
		}
		_, reported := h.reported()
		if len(reported) != 1 || reported[0].String() != `.status.phase: "Running" -> "Done"` {
			t.Fatalf("flush %d: reported %v, want the phase once", flush, reported)
		}
	}
}

// fakeWidgetClient is a fake client holding objs, with the Widget's status
// subresource and schema.
func fakeWidgetClient(t *testing.T, objs ...client.Object) (client.WithWatch, managedfields.TypeConverter) {
	t.Helper()
	tc := applyconfiguration.NewTypeConverter(scheme())
	c := fake.NewClientBuilder().WithScheme(scheme()).
		WithTypeConverters(tc).
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithObjects(objs...).Build()
	return c, tc
}

func phase(p string) batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration] {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		if ac.Status == nil {
			ac.WithStatus(acv1alpha1.WidgetStatus())
		}
		ac.Status.WithPhase(p)
		return nil
	}
}

// Options.Logger takes the line of a diverging entry instead of the
// context's logger.
func TestShadowLoggerOption(t *testing.T) {
	h := newShadowHarness(t, shadowSetup{})
	var own []string
	l := funcr.New(func(_, args string) { own = append(own, args) }, funcr.Options{})
	h.mode.opts.Logger = &l
	res := ssa.Result{Sent: true, Attempts: 1, Observed: liveWidget(), Object: answer(func(w *v1alpha1.Widget) { w.Status.Phase = "Done" })}
	if err := h.mode.report(h.ctx, h.b.Applier(), shadowTarget, res, nil); err != nil {
		t.Fatal(err)
	}
	if lines, _ := h.reported(); len(own) != 1 || !strings.Contains(own[0], "shadow apply diverges") || len(lines) != 0 {
		t.Fatalf("Options.Logger got %q, the context's logger %q", own, lines)
	}
}

// Modes sharing a registry share its metrics, and a registry holding
// something else under their names is refused.
func TestNewSharesMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m1, err := New(Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := New(Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	m1.metrics.entry(shadowTarget, agreed)
	m2.metrics.entry(shadowTarget, agreed)
	got, err := metricstest.CounterSeries(reg, "statusapply_shadow_entries_total", prometheus.Labels{"manager": "shadow"}, "group", "kind")
	if err != nil || !reflect.DeepEqual(got, map[string]float64{"outcome=agreed": 2}) {
		t.Fatalf("entries %v, %v, want both Modes' counts in one series", got, err)
	}
	other := prometheus.NewRegistry()
	other.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "statusapply_shadow_entries_total", Help: "another"}))
	if _, err := New(Options{Registerer: other}); err == nil {
		t.Fatal("New registered its metrics beside another collector of the same name")
	}
}
