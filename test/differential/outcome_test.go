package differential

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// errClass is what a way's error is, as a caller tells errors apart.
type errClass string

const (
	noError        errClass = "nil"
	invalidInput   errClass = "ssa.ErrInvalidInput"
	removesForeign errClass = "ssa.ErrRemovesForeignField"
	fieldConflict  errClass = "*conflicts.Error"
	noSchema       errClass = "ssa.ErrNoSchema"
	otherError     errClass = "other"
)

// classify sorts err into its class, the most specific first.
func classify(err error) errClass {
	var conflict *conflicts.Error
	switch {
	case err == nil:
		return noError
	case errors.As(err, &conflict):
		return fieldConflict
	case errors.Is(err, ssa.ErrRemovesForeignField):
		return removesForeign
	case errors.Is(err, ssa.ErrNoSchema):
		return noSchema
	case errors.Is(err, ssa.ErrInvalidInput):
		return invalidInput
	default:
		return otherError
	}
}

// condition is what a condition holds apart from its type and the times
// (lastTransitionTime, observedGeneration), which differ between two Widgets
// written a moment apart.
type condition struct{ Status, Reason, Message string }

// outcome is what a way ends with: its error, what ends on the object (or,
// for a way that writes nothing, what the API server would store), and who
// owns each status field.
type outcome struct {
	Err errClass
	// ErrText is the error's text, for the failure message only: two ways
	// that refuse alike may word it differently.
	ErrText    string
	Conditions map[string]condition
	Phase      string
	Attributes map[string]string
	// Owners maps each status field a manager owns (a leaf of its field
	// set, e.g. .status.conditions[type="Ready"].reason) to its owners,
	// sorted, as "manager (Operation)". Nil for a way that writes nothing.
	Owners map[string][]string
}

func (o outcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "error: %s", o.Err)
	if o.ErrText != "" {
		fmt.Fprintf(&b, " (%s)", o.ErrText)
	}
	for _, t := range slices.Sorted(maps.Keys(o.Conditions)) {
		c := o.Conditions[t]
		fmt.Fprintf(&b, "\n  condition %s: %s %s %q", t, c.Status, c.Reason, c.Message)
	}
	fmt.Fprintf(&b, "\n  phase: %q\n  attributes: %v", o.Phase, o.Attributes)
	for _, p := range slices.Sorted(maps.Keys(o.Owners)) {
		fmt.Fprintf(&b, "\n  %s: %s", p, strings.Join(o.Owners[p], ", "))
	}
	return b.String()
}

// differences lists how got differs from want, one line each, sorted; with
// owners, ownership counts too. An empty list means the ways agree.
func differences(want, got outcome, owners bool) []string {
	var out []string
	if want.Err != got.Err {
		out = append(out, fmt.Sprintf("error: %s != %s", want.Err, got.Err))
	}
	for _, t := range keysOfBoth(want.Conditions, got.Conditions) {
		w, inWant := want.Conditions[t]
		g, inGot := got.Conditions[t]
		switch {
		case !inGot:
			out = append(out, fmt.Sprintf("condition %s: %v != absent", t, w))
		case !inWant:
			out = append(out, fmt.Sprintf("condition %s: absent != %v", t, g))
		case w != g:
			out = append(out, fmt.Sprintf("condition %s: %v != %v", t, w, g))
		}
	}
	if want.Phase != got.Phase {
		out = append(out, fmt.Sprintf("phase: %q != %q", want.Phase, got.Phase))
	}
	for _, k := range keysOfBoth(want.Attributes, got.Attributes) {
		w, inWant := want.Attributes[k]
		g, inGot := got.Attributes[k]
		if w != g || inWant != inGot {
			out = append(out, fmt.Sprintf("attribute %s: %s != %s", k, orAbsent(w, inWant), orAbsent(g, inGot)))
		}
	}
	if owners {
		for _, p := range keysOfBoth(want.Owners, got.Owners) {
			if w, g := want.Owners[p], got.Owners[p]; !slices.Equal(w, g) {
				out = append(out, fmt.Sprintf("owners of %s: %v != %v", p, w, g))
			}
		}
	}
	return out
}

func keysOfBoth[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func orAbsent(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%q", v)
}

// contentOf fills o's object part from a Widget's status.
func (o *outcome) contentOf(st v1alpha1.WidgetStatus) {
	o.Conditions = map[string]condition{}
	for _, c := range st.Conditions {
		o.Conditions[c.Type] = condition{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
	}
	o.Phase = st.Phase
	o.Attributes = maps.Clone(st.Attributes)
}

// outcomeWith is the outcome of a way that ended with err: what the Widget of
// key holds now, and who owns it.
func outcomeWith(ctx context.Context, key client.ObjectKey, err error) outcome {
	GinkgoHelper()
	w := getWidget(ctx, key)
	o := outcome{Err: classify(err), Owners: ownersOf(w)}
	if err != nil {
		o.ErrText = err.Error()
	}
	o.contentOf(w.Status)
	return o
}

// ownersOf maps each status field of w that a manager owns to its owners.
func ownersOf(w *v1alpha1.Widget) map[string][]string {
	GinkgoHelper()
	own, err := ownership.Inspect(w)
	Expect(err).NotTo(HaveOccurred())
	out := map[string][]string{}
	status := ownership.StatusPath()
	for _, e := range own.Entries {
		e.Fields.Leaves().Iterate(func(p fieldpath.Path) {
			if len(p) > 0 && p[0].Equals(status[0]) {
				out[p.String()] = append(out[p.String()], fmt.Sprintf("%s (%s)", e.Manager, e.Operation))
			}
		})
	}
	for p := range out {
		slices.Sort(out[p])
	}
	return out
}

func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w, err := widgets.Get(ctx, env.Client, key)
	Expect(err).NotTo(HaveOccurred())
	return w
}
