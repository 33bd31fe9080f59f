package ssa_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/jsonvalue"
	"github.com/statusapply/statusapply/ssa"
)

// FuzzForms feeds the same observation and the same contribution to both
// forms an intent reaches the Applier in: typed, in one apply configuration
// type (what a batch builds for typed Mutators, and for status Edits of a typed
// object that set conditions), and content (unstructured). It holds them to
// one answer: the same no-op verdict, the same bodies sent (as JSON values)
// and the same class of error. The API server is controller-runtime's fake client, which
// merges applies and keeps managedFields (see recordingClient).
//
// The input is the conditions the manager owns (applied first, in both runs
// alike, beside a condition "X" of another manager), the contribution (sets
// and removals of conditions, each field from the input), the mode and whether
// the contribution is a Mutator or an Edit. Conditions are written
// TYPE/STATUS/REASON/MESSAGE/OBSERVEDGENERATION/LASTTRANSITIONSECONDS, separated
// by ';', trailing fields defaulted; a leading '-' removes the type. The typed
// run queues the contribution as a typed Mutator (or an Edit of the typed
// Widget); the content run queues the same one as an unstructured Mutator (or
// an Edit of the Widget as unstructured), which a batch builds as content only.
func FuzzForms(f *testing.F) {
	for _, s := range formsSeeds {
		f.Add(s.owned, s.contribution, s.declarative, s.edit)
	}
	f.Fuzz(func(t *testing.T, owned, contribution string, declarative, edit bool) {
		in := formsInput{owned: parseConditions(owned), contribution: parseConditions(contribution),
			declarative: declarative, edit: edit}
		if len(in.owned) > maxConditions || len(in.contribution) > maxConditions {
			return
		}
		typed, ok := applyForm(t, in, true)
		if !ok {
			return // the manager could not own these conditions: not a case
		}
		content, _ := applyForm(t, in, false)
		if typed.sent != content.sent || typed.class != content.class || !jsonvalue.Equal(typed.bodies, content.bodies) {
			t.Fatalf("owned %q, contribution %q, declarative %v, edit %v:\ntyped   %s\ncontent %s",
				owned, contribution, declarative, edit, typed, content)
		}
	})
}

// TestFormsTypedRunTakesTheTypedPath keeps FuzzForms honest: where a
// contribution changes conditions, the typed run's request is the typed form's encoding
// (kind first, as the generated types declare it; content encodes keys in
// order, apiVersion first), for Mutators and Edits alike. Were the typed build
// declined or dropped, FuzzForms would compare content with content.
func TestFormsTypedRunTakesTheTypedPath(t *testing.T) {
	for _, edit := range []bool{false, true} {
		in := formsInput{owned: parseConditions("A/True/Up/a/2/100"),
			contribution: parseConditions("A/False/Down/b/3/200;B/True/New/c/3/200"), edit: edit}
		for _, typed := range []bool{true, false} {
			out, ok := applyForm(t, in, typed)
			if !ok || !out.sent || out.class != "none" {
				t.Fatalf("edit %v, typed %v: %s", edit, typed, out)
			}
			if got := strings.HasPrefix(out.raw[0], `{"kind"`); got != typed {
				t.Fatalf("edit %v: the %s run sent %s", edit, map[bool]string{true: "typed", false: "content"}[typed], out.raw[0])
			}
		}
	}
}

var formsSeeds = []struct {
	owned, contribution string
	declarative, edit   bool
}{
	{"A/True/Up//1/100", "A/True/Up//1/100", false, false},
	{"A/True/Up//1/100", "A/True/Up//1/100", false, true},
	{"A/True/Up/m/2/100", "A/False/Down/m/2/200", false, false},
	{"A/True/Up/m/2/100", "A/False/Down/m/2/200", false, true},
	{"A/True/Up/m/2/100", "A/True/Up/m//100", false, false},
	{"A/True/Up/m/2/100", "A/True/Up/m/0/100", true, false},
	{"A/True/Up/m/2/100;B", "-B", false, false},
	{"A/True/Up/m/2/100;B", "-B", false, true},
	{"A;B;C", "C/False;-A;D/True/R/x/7/300", false, true},
	{"A;B;C", "C/False;-A;D/True/R/x/7/300", true, false},
	{"", "A/True/Up", false, false},
	{"", "A/True/Up", false, true},
	{"A", "-A", false, true},
	{"A", "", true, false},
	{"A", "bad type!/Maybe//", false, false},
	{"A", "A/Maybe", false, true},
	{"A", "A/True/Up/m/1/", false, false},
	{"A", "A/True/Up/m/-1", false, true},
	{"A", "X/False", false, false},
	{"A", "-X", false, true},
	{"A/True/Up/m/2/100", "A/True/Up/m/2/100.5;B//x", false, false},
}

// maxConditions bounds a case: longer lists find nothing shorter ones do not.
const maxConditions = 8

type formsInput struct {
	owned, contribution []formCondition
	declarative, edit   bool
}

// formCondition is one set (or, with remove, removal) of a condition. A nil
// generation or time leaves the field out of a Mutator's condition (an Edit's
// metav1.Condition has them zero).
type formCondition struct {
	remove                        bool
	typ, status, reason, message  string
	observedGeneration, ltSeconds *int64
}

// parseConditions reads TYPE/STATUS/REASON/MESSAGE/GENERATION/SECONDS;... with
// status True, reason R, message "", generation absent and time 100 by
// default; a number that does not parse is absent.
func parseConditions(s string) []formCondition {
	var out []formCondition
	for item := range strings.SplitSeq(s, ";") {
		if item == "" {
			continue
		}
		parts := strings.SplitN(item, "/", 6)
		c := formCondition{typ: parts[0], status: "True", reason: "R", ltSeconds: ptr(int64(100))}
		if strings.HasPrefix(c.typ, "-") {
			c.remove, c.typ = true, c.typ[1:]
		}
		field := func(i int, into *string) {
			if i < len(parts) {
				*into = parts[i]
			}
		}
		field(1, &c.status)
		field(2, &c.reason)
		field(3, &c.message)
		if len(parts) > 4 {
			c.observedGeneration = parseInt(parts[4])
		}
		if len(parts) > 5 {
			c.ltSeconds = parseInt(parts[5])
		}
		out = append(out, c)
	}
	return out
}

func parseInt(s string) *int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func ptr[T any](v T) *T { return &v }

func (c formCondition) applyConfiguration() metav1ac.ConditionApplyConfiguration {
	ac := metav1ac.Condition().WithType(c.typ).WithStatus(metav1.ConditionStatus(c.status)).
		WithReason(c.reason).WithMessage(c.message)
	if c.observedGeneration != nil {
		ac.WithObservedGeneration(*c.observedGeneration)
	}
	if c.ltSeconds != nil {
		ac.WithLastTransitionTime(metav1.Unix(*c.ltSeconds, 0))
	}
	return *ac
}

func (c formCondition) condition() metav1.Condition {
	cond := metav1.Condition{Type: c.typ, Status: metav1.ConditionStatus(c.status), Reason: c.reason, Message: c.message}
	if c.observedGeneration != nil {
		cond.ObservedGeneration = *c.observedGeneration
	}
	if c.ltSeconds != nil {
		cond.LastTransitionTime = metav1.Unix(*c.ltSeconds, 0)
	}
	return cond
}

// mutateConditions is the contribution as a typed Mutator's body: each
// condition set in place by type or appended, each removal dropped.
func mutateConditions(ac *acv1alpha1.WidgetApplyConfiguration, contribution []formCondition) {
	if ac.Status == nil {
		ac.WithStatus(acv1alpha1.WidgetStatus())
	}
	conds := ac.Status.Conditions
	for _, c := range contribution {
		i := slices.IndexFunc(conds, func(x metav1ac.ConditionApplyConfiguration) bool { return x.Type != nil && *x.Type == c.typ })
		switch {
		case c.remove && i >= 0:
			conds = slices.Delete(conds, i, i+1)
		case c.remove:
		case i >= 0:
			conds[i] = c.applyConfiguration()
		default:
			conds = append(conds, c.applyConfiguration())
		}
	}
	ac.Status.Conditions = conds
}

// editConditions is the contribution as an Edit's body, on the typed object.
func editConditions(w *v1alpha1.Widget, contribution []formCondition) {
	conds := w.Status.Conditions
	for _, c := range contribution {
		i := slices.IndexFunc(conds, func(x metav1.Condition) bool { return x.Type == c.typ })
		switch {
		case c.remove && i >= 0:
			conds = slices.Delete(conds, i, i+1)
		case c.remove:
		case i >= 0:
			conds[i] = c.condition()
		default:
			conds = append(conds, c.condition())
		}
	}
	w.Status.Conditions = conds
}

// formOutcome is what one run of a contribution did.
type formOutcome struct {
	sent   bool
	raw    []string // the bodies of the applies sent, in order
	bodies []any    // the same, decoded
	class  string   // the class of Flush's error
}

func (o formOutcome) String() string {
	return fmt.Sprintf("sent %v, error %s, bodies %s", o.sent, o.class, strings.Join(o.raw, " "))
}

// applyForm runs in on a fresh fake API server: another manager applies
// condition X, the manager "m" applies in.owned (content, whatever the form),
// and a batch then flushes in.contribution in the typed or the content form,
// on the object as read after those. ok is false when the setup fails.
func applyForm(t *testing.T, in formsInput, typed bool) (out formOutcome, ok bool) {
	t.Helper()
	ctx := context.Background()
	c, rec := recordingClient(t)
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(c.Scheme())), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	setup := func(manager string, conds []formCondition) bool {
		b := batcher.New(a)
		var owned []formCondition
		for _, c := range conds {
			if !c.remove {
				owned = append(owned, c)
			}
		}
		if err := batcher.Status(b, readWidget(t, c), manager, func(u *unstructured.Unstructured, _ *v1alpha1.Widget) error {
			return asTyped(u, func(ac *acv1alpha1.WidgetApplyConfiguration) { mutateConditions(ac, owned) })
		}); err != nil {
			t.Fatal(err)
		}
		return b.Flush(ctx) == nil
	}
	if !setup("other", parseConditions("X/True/Theirs/x/1/50")) || !setup("m", in.owned) {
		return out, false
	}

	observed := readWidget(t, c)
	var opts []ssa.ApplyOption
	if in.declarative {
		opts = append(opts, &ssa.ApplyOptions{Mode: ssa.Declarative})
	}
	b := batcher.New(a)
	rec.start()
	switch {
	case typed && !in.edit:
		err = batcher.Status(b, observed, "m", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			mutateConditions(ac, in.contribution)
			return nil
		}, opts...)
	case typed:
		err = batcher.EditStatus(b, observed, "m", func(w *v1alpha1.Widget) error {
			editConditions(w, in.contribution)
			return nil
		}, opts...)
	case !in.edit:
		err = batcher.Status(b, observed, "m", func(u *unstructured.Unstructured, _ *v1alpha1.Widget) error {
			return asTyped(u, func(ac *acv1alpha1.WidgetApplyConfiguration) { mutateConditions(ac, in.contribution) })
		}, opts...)
	default:
		content, convErr := runtime.DefaultUnstructuredConverter.ToUnstructured(observed)
		if convErr != nil {
			t.Fatal(convErr)
		}
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
		err = batcher.EditStatus(b, u, "m", func(u *unstructured.Unstructured) error {
			return editConditionsContent(u, in.contribution)
		}, opts...)
	}
	if err == nil {
		err = b.Flush(ctx)
	}
	out.class = errorClass(err)
	out.raw = rec.bodies()
	out.sent = len(out.raw) > 0
	for _, body := range out.raw {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		out.bodies = append(out.bodies, v)
	}
	return out, true
}

// asTyped runs mutate on u's content as the apply configuration type, as a
// batch runs a typed Mutator on content, and puts the result back in u.
func asTyped(u *unstructured.Unstructured, mutate func(*acv1alpha1.WidgetApplyConfiguration)) error {
	ac := &acv1alpha1.WidgetApplyConfiguration{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ac); err != nil {
		return err
	}
	mutate(ac)
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ac)
	if err != nil {
		return err
	}
	u.Object = content
	return nil
}

// editConditionsContent is editConditions on the object as content: only
// status.conditions changes, as the typed object encodes it (left out when
// empty).
func editConditionsContent(u *unstructured.Unstructured, contribution []formCondition) error {
	w := &v1alpha1.Widget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, w); err != nil {
		return err
	}
	editConditions(w, contribution)
	if len(w.Status.Conditions) == 0 {
		unstructured.RemoveNestedField(u.Object, "status", "conditions")
		return nil
	}
	status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&w.Status)
	if err != nil {
		return err
	}
	return unstructured.SetNestedField(u.Object, status["conditions"], "status", "conditions")
}

// errorClass sorts Flush's errors into the classes both forms must agree on.
func errorClass(err error) string {
	var conflict *conflicts.Error
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, ssa.ErrRemovesForeignField):
		return "removes a foreign field"
	case errors.Is(err, ssa.ErrInvalidInput):
		return "invalid input"
	case errors.As(err, &conflict):
		return "conflict"
	}
	return "other"
}

// applyRecorder keeps the bodies of the status applies sent once started.
type applyRecorder struct {
	mu  sync.Mutex
	on  bool
	raw []string
}

func (r *applyRecorder) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = true
}

func (r *applyRecorder) record(body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.raw = append(r.raw, string(body))
	}
}

func (r *applyRecorder) bodies() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.raw)
}

// recordingClient is controller-runtime's fake client holding Widget ns/w1,
// which merges applies and keeps managedFields, recording the body of each
// status apply. The fake records a status apply's managedFields entry as one of
// the main resource; the API server records it for the status subresource, and
// so does this client in what it returns (reads and apply responses).
func recordingClient(t *testing.T) (client.Client, *applyRecorder) {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	inner := fake.NewClientBuilder().WithScheme(s).
		WithTypeConverters(applyconfiguration.NewTypeConverter(s)).
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithReturnManagedFields().
		WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", UID: "u1", Generation: 3}}).
		Build()
	rec := &applyRecorder{}
	c := interceptor.NewClient(inner, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			appliedToStatus(obj)
			return nil
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			body, err := json.Marshal(obj)
			if err != nil {
				return err
			}
			rec.record(body)
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(body); err != nil {
				return err
			}
			if err := c.SubResource(sub).Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
				return err
			}
			appliedToStatus(u)
			response, err := u.MarshalJSON()
			if err != nil {
				return err
			}
			if into, ok := obj.(json.Unmarshaler); ok {
				return into.UnmarshalJSON(response)
			}
			return nil
		},
	})
	return c, rec
}

// appliedToStatus makes obj's Apply entries what the API server records for a
// status apply: entries of the status subresource, without the empty spec the
// fake adds. Every apply this test sends is a status apply.
func appliedToStatus(obj client.Object) {
	entries := obj.GetManagedFields()
	for i := range entries {
		if entries[i].Operation != metav1.ManagedFieldsOperationApply || entries[i].FieldsV1 == nil {
			continue
		}
		entries[i].Subresource = "status"
		var fields map[string]any
		if json.Unmarshal(entries[i].FieldsV1.GetRawBytes(), &fields) == nil {
			delete(fields, "f:spec")
			if raw, err := json.Marshal(fields); err == nil {
				entries[i].FieldsV1 = metav1.NewFieldsV1(string(raw))
			}
		}
	}
	obj.SetManagedFields(entries)
}

func readWidget(t *testing.T, c client.Client) *v1alpha1.Widget {
	t.Helper()
	w := &v1alpha1.Widget{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "w1"}, w); err != nil {
		t.Fatal(err)
	}
	return w
}
