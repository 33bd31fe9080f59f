package differential

import (
	"context"
	"fmt"
	"maps"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
)

// The harness: every scenario (cases_test.go) runs in every pair of ways
// (ways_test.go), each way on a Widget of its own prepared by the scenario's
// writes, and the two outcomes (outcome_test.go) must be equal: the error
// class, the conditions, phase and attributes on the object (or, for a way
// that writes nothing, on the object the API server would store), and the
// owners of every status field. Two anchors per scenario are held to its
// expected error class. A scenario is added to the list in cases_test.go, a
// way to the pairs in ways_test.go; the specs follow.

// disagreements are the specs, by scenario and spec text, whose ways end
// differently today, each with what was observed. They stay in the tree,
// named and Pending, until the library or the case is settled; then they
// leave this list.
var disagreements = map[[2]string]string{}

// specTexts collects the text of every generated spec, by scenario, so that
// a disagreement naming no spec is caught.
var specTexts = map[[2]string]bool{}

var _ = Describe("the ways of writing a contribution", func() {
	for _, s := range scenarios {
		Describe(s.name, func() {
			for _, a := range anchors {
				spec(s, fmt.Sprintf("%s ends with %s", a.name, s.want), func(ctx context.Context, ns string) {
					got := runWay(ctx, ns, "anchor", a, s)
					Expect(got.Err).To(Equal(s.want), describe(a.name, got))
				})
			}
			for _, p := range pairs {
				spec(s, fmt.Sprintf("%s ends as %s", p.way.name, p.base.name), func(ctx context.Context, ns string) {
					for _, w := range []way{p.base, p.way} {
						if w.notFor != nil {
							if why := w.notFor(s); why != "" {
								Skip(why)
							}
						}
					}
					want := runWay(ctx, ns, "base", p.base, s)
					got := runWay(ctx, ns, "way", p.way, s)
					owners := !p.base.writesNothing && !p.way.writesNothing
					Expect(differences(want, got, owners)).To(BeEmpty(), "%s\n%s", describe(p.base.name, want), describe(p.way.name, got))
				})
			}
		})
	}

	It("lists as disagreements only specs that exist", func() {
		for key := range disagreements {
			Expect(specTexts).To(HaveKey(key))
		}
	})
})

// spec adds the It text of scenario s, Pending when it is a known
// disagreement, in a namespace of its own.
func spec(s scenario, text string, body func(ctx context.Context, ns string)) {
	key := [2]string{s.name, text}
	specTexts[key] = true
	args := []any{}
	if observed, ok := disagreements[key]; ok {
		text += " (disagrees: " + observed + ")"
		args = append(args, Pending)
	}
	It(text, append(args, func(ctx context.Context) {
		body(ctx, suite.Namespace(ctx, env))
	})...)
}

// runWay prepares a Widget name for s and runs w on it.
func runWay(ctx context.Context, ns, name string, w way, s scenario) outcome {
	GinkgoHelper()
	p := prepare(ctx, ns, name, s)
	p.requests.Reset()
	o := w.run(ctx, p, s.intent)
	if s.sendsNothing {
		Expect(p.requests.Count("apply")).To(BeZero(), "%s sent an apply: %s", w.name, p.requests)
	}
	if w.writesNothing {
		Expect(getWidget(ctx, p.key).ResourceVersion).To(Equal(p.stored), "%s wrote", w.name)
	}
	return o
}

// The controls prove that the comparison can fail: each is a way of writing
// the contribution that is not equivalent to typed Mutators, and on each
// scenario listed the comparison must report a difference.
var controls = []struct {
	way       way
	scenarios []string
}{
	{
		way: way{name: "a merge patch of the edited status written by hand, as the manager", run: mergePatch},
		scenarios: []string{
			"a manager that owns nothing sets two conditions",
			"a manager changes its own condition",
			"a manager removes another manager's condition",
			"a manager changes a condition a legacy merge-patch writer owns",
			"a manager sets a condition with an invalid reason",
		},
	},
	{
		way: way{name: "typed Mutators applied declaratively", run: declaratively},
		scenarios: []string{
			"a manager changes its own condition",
			"a manager removes its own condition",
			"a guarded manager decides on a stale observation",
		},
	},
}

var _ = Describe("the controls", func() {
	for _, c := range controls {
		for _, name := range c.scenarios {
			It(c.way.name+" does not end as "+typedMutators.name+" when "+name, func(ctx context.Context) {
				s := scenarioNamed(name)
				ns := suite.Namespace(ctx, env)
				want := runWay(ctx, ns, "base", typedMutators, s)
				got := runWay(ctx, ns, "control", c.way, s)
				Expect(differences(want, got, true)).NotTo(BeEmpty(),
					"the comparison missed the control\n%s\n%s", describe(typedMutators.name, want), describe(c.way.name, got))
			})
		}
	}
})

func scenarioNamed(name string) scenario {
	GinkgoHelper()
	for _, s := range scenarios {
		if s.name == name {
			return s
		}
	}
	Fail("no scenario " + name)
	return scenario{}
}

// mergePatch is the writer being replaced: the typed Edits on the
// observation, sent as a JSON merge patch of /status (which replaces the
// conditions list whole), recorded as an Update of the manager.
func mergePatch(ctx context.Context, p *prepared, in intent) outcome {
	GinkgoHelper()
	w := p.observed.DeepCopy()
	base := w.DeepCopy()
	for _, o := range in.ops {
		Expect(o.edit(w)).To(Succeed())
	}
	err := p.client.Status().Patch(ctx, w, client.MergeFrom(base), client.FieldOwner(manager))
	return outcomeWith(ctx, p.key, err)
}

// declaratively is the typed Mutators with ssa.Declarative: the intent
// starts from nothing, so it omits every field the manager owned and did not
// state again, and the API server deletes them.
func declaratively(ctx context.Context, p *prepared, in intent) outcome {
	return typedMutators.run(ctx, p, intent{ops: in.ops, opts: append([]ssa.ApplyOption{ssa.Declarative}, in.opts...)})
}

var _ = Describe("the comparison", func() {
	It("reports each part of an outcome that differs, and ownership only when asked", func() {
		base := outcome{
			Err:        noError,
			Conditions: map[string]condition{"Ready": {Status: "True", Reason: "Up", Message: "up"}},
			Phase:      "Running",
			Attributes: map[string]string{"zone": "a"},
			Owners:     map[string][]string{".status.phase": {"readiness (Apply)"}},
		}
		Expect(differences(base, base, true)).To(BeEmpty())
		changed := func(edit func(o *outcome)) outcome {
			o := base
			o.Conditions, o.Attributes = maps.Clone(base.Conditions), maps.Clone(base.Attributes)
			o.Owners = maps.Clone(base.Owners)
			edit(&o)
			return o
		}
		for what, o := range map[string]outcome{
			"error":             changed(func(o *outcome) { o.Err = fieldConflict }),
			"a condition field": changed(func(o *outcome) { o.Conditions["Ready"] = condition{Status: "True", Reason: "Up"} }),
			"a condition more":  changed(func(o *outcome) { o.Conditions["Synced"] = condition{Status: "True"} }),
			"the phase":         changed(func(o *outcome) { o.Phase = "" }),
			"an attribute":      changed(func(o *outcome) { o.Attributes["zone"] = "" }),
			"an owner":          changed(func(o *outcome) { o.Owners[".status.phase"] = []string{"readiness (Update)"} }),
		} {
			Expect(differences(base, o, true)).To(HaveLen(1), what)
			Expect(differences(o, base, true)).To(HaveLen(1), what)
		}
		Expect(differences(base, changed(func(o *outcome) { o.Owners = nil }), false)).To(BeEmpty())
		Expect(differences(base, changed(func(o *outcome) { o.ErrText = "worded otherwise" }), true)).To(BeEmpty())
	})
})
