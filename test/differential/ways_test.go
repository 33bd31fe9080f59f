package differential

import (
	"context"
	"fmt"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// prepared is a Widget a scenario's writes have prepared for one way.
type prepared struct {
	key      client.ObjectKey
	client   client.Client
	requests *apiserver.Requests
	// applier made the scenario's writes: it remembers what each manager
	// applied through it.
	applier *ssa.Applier
	// observed is the object as read between the setup and the late writes,
	// without managedFields for a stripped scenario.
	observed *v1alpha1.Widget
	// stored is the resourceVersion once prepared: a way that writes
	// nothing must leave it.
	stored string
}

// prepare creates the Widget name in ns and runs s's writes on it.
func prepare(ctx context.Context, ns, name string, s scenario) *prepared {
	GinkgoHelper()
	c, requests, err := env.CountingClient()
	Expect(err).NotTo(HaveOccurred())
	w, err := widgets.Create(ctx, c, ns, name)
	Expect(err).NotTo(HaveOccurred())
	p := &prepared{key: client.ObjectKeyFromObject(w), client: c, requests: requests, applier: newApplier(c)}
	for i, write := range s.setup {
		Expect(write(ctx, p)).To(Succeed(), "setup write %d", i)
	}
	p.observed = getWidget(ctx, p.key)
	for i, write := range s.late {
		Expect(write(ctx, p)).To(Succeed(), "late write %d", i)
	}
	if s.stripped {
		p.observed.ManagedFields = nil
	}
	p.stored = getWidget(ctx, p.key).ResourceVersion
	return p
}

func newApplier(c client.Client) *ssa.Applier {
	GinkgoHelper()
	a, err := widgets.NewApplier(c)
	Expect(err).NotTo(HaveOccurred())
	return a
}

// form is how a contribution is written.
type form int

const (
	typedMutator form = iota
	typedEdit
	unstructuredMutator
	unstructuredEdit
)

// queue queues in's ops, written in form f, on the observation obs.
func queue(b *batcher.Batch, f form, obs *v1alpha1.Widget, in intent) error {
	u := asUnstructured(obs)
	for _, o := range in.ops {
		var err error
		switch {
		case o.removes != "" && f == typedMutator:
			err = batcher.RemoveCondition(b, obs, manager, o.removes, in.opts...)
		case o.removes != "" && f == unstructuredMutator:
			err = batcher.RemoveCondition(b, u, manager, o.removes, in.opts...)
		case f == typedMutator:
			err = batcher.Status(b, obs, manager, o.mutator, in.opts...)
		case f == typedEdit:
			err = batcher.EditStatus(b, obs, manager, o.edit, in.opts...)
		case f == unstructuredMutator:
			err = batcher.Status(b, u, manager, o.uMutator, in.opts...)
		case f == unstructuredEdit:
			err = batcher.EditStatus(b, u, manager, o.uEdit, in.opts...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// asUnstructured is w as the unstructured client would read it.
func asUnstructured(w *v1alpha1.Widget) *unstructured.Unstructured {
	GinkgoHelper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	return u
}

// asWidget is obj, typed or unstructured, as a Widget.
func asWidget(obj client.Object) *v1alpha1.Widget {
	GinkgoHelper()
	if w, ok := obj.(*v1alpha1.Widget); ok {
		return w
	}
	u, ok := obj.(*unstructured.Unstructured)
	Expect(ok).To(BeTrue(), "a %T is neither a Widget nor unstructured", obj)
	w := &v1alpha1.Widget{}
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, w)).To(Succeed())
	return w
}

// A way runs a scenario's contribution on a prepared Widget and tells its
// outcome.
type way struct {
	name string
	// writesNothing marks a way whose outcome is what the API server would
	// store: its ownership is not compared, and the Widget must stay as
	// prepared.
	writesNothing bool
	// notFor says why the way does not apply to s; empty when it does.
	notFor func(s scenario) string
	run    func(ctx context.Context, p *prepared, in intent) outcome
}

// flushWay queues the contribution in form f and flushes it, through the
// Applier that prepared the Widget or a fresh one, on the observation or on
// a copy of it without managedFields.
func flushWay(name string, f form, fresh, strip bool) way {
	return way{name: name, run: func(ctx context.Context, p *prepared, in intent) outcome {
		a := p.applier
		if fresh {
			a = newApplier(p.client)
		}
		obs := p.observed.DeepCopy()
		if strip {
			obs.ManagedFields = nil
		}
		b := batcher.New(a)
		err := queue(b, f, obs, in)
		if err == nil {
			err = b.Flush(ctx)
		}
		return outcomeWith(ctx, p.key, err)
	}}
}

// The ways each pair starts from. "Remembering" is the Applier that made the
// setup writes: it remembers what each manager applied through it.
var (
	typedMutators        = flushWay("typed Mutators, remembering Applier", typedMutator, false, false)
	typedEdits           = flushWay("typed Edits, remembering Applier", typedEdit, false, false)
	unstructuredMutators = flushWay("unstructured Mutators, remembering Applier", unstructuredMutator, false, false)
	unstructuredEdits    = flushWay("unstructured Edits, remembering Applier", unstructuredEdit, false, false)
	dryRunOfMutators     = way{name: "Batch.DryRun of typed Mutators", writesNothing: true, run: dryRun}
)

// anchors are held to each scenario's expected error class, so that ways
// cannot agree on a wrong answer unnoticed.
var anchors = []way{typedMutators, typedEdits}

// A pair is two ways that must end alike on identically prepared Widgets.
type pair struct{ base, way way }

var pairs = []pair{
	// 1. Remembering vs fresh Applier, and the observation without managedFields.
	{typedMutators, flushWay("typed Mutators, fresh Applier", typedMutator, true, false)},
	{typedMutators, flushWay("typed Mutators, remembering Applier, observation without managedFields", typedMutator, false, true)},
	{typedMutators, flushWay("typed Mutators, fresh Applier, observation without managedFields", typedMutator, true, true)},
	{typedEdits, flushWay("typed Edits, fresh Applier", typedEdit, true, false)},
	{typedEdits, flushWay("typed Edits, remembering Applier, observation without managedFields", typedEdit, false, true)},
	// 2. Mutator vs the equivalent Edit.
	{typedMutators, typedEdits},
	{unstructuredMutators, unstructuredEdits},
	// 3. Typed vs unstructured object.
	{typedMutators, unstructuredMutators},
	{typedEdits, unstructuredEdits},
	{typedEdits, flushWay("unstructured Edits, fresh Applier, observation without managedFields", unstructuredEdit, true, true)},
	// 4. Up to the write: a real Flush, its dry run, and a shadow batch.
	{typedMutators, dryRunOfMutators},
	{dryRunOfMutators, way{name: "shadow batch of typed Mutators", writesNothing: true, notFor: policyIsNotFail, run: shadow}},
}

// dryRun is a real Flush's dry run: the error it would fail with, and the
// object the API server answered (the live one when nothing would be sent).
func dryRun(ctx context.Context, p *prepared, in intent) outcome {
	GinkgoHelper()
	b := batcher.New(p.applier)
	err := queue(b, typedMutator, p.observed.DeepCopy(), in)
	var results []batcher.DryRunResult
	if err == nil {
		results, err = b.DryRun(ctx)
	}
	for _, r := range results {
		if err == nil {
			err = r.Err
		}
	}
	o := outcome{Err: classify(err)}
	if err != nil {
		o.ErrText = err.Error()
	}
	if err == nil && len(results) == 1 && results[0].Result.Sent {
		o.contentOf(asWidget(results[0].Result.Object).Status)
	} else {
		o.contentOf(getWidget(ctx, p.key).Status)
	}
	return o
}

// shadow is a shadow batch's answer: the live object with the divergence it
// reported applied, its error, and a field-manager conflict when it
// reports fields contested (the conflict the real apply would meet; shadow
// mode resends as their owner instead of failing). A way that fails stores
// nothing: its object is the live one.
func shadow(ctx context.Context, p *prepared, in intent) outcome {
	GinkgoHelper()
	var (
		mu  sync.Mutex
		got []batcher.Divergence
	)
	b := batcher.New(p.applier, batcher.WithShadow(batcher.Shadow{OnDivergence: func(_ context.Context, d batcher.Divergence) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
	}}))
	err := queue(b, typedMutator, p.observed.DeepCopy(), in)
	if err == nil {
		err = b.Flush(ctx)
	}
	live := getWidget(ctx, p.key)
	o := outcome{Err: classify(err)}
	if err != nil {
		o.ErrText = err.Error()
	}
	mu.Lock()
	defer mu.Unlock()
	Expect(len(got)).To(BeNumerically("<=", 1), "one entry, reported once")
	if err == nil && len(got) == 1 && len(got[0].Contested) > 0 {
		o.Err, o.ErrText = fieldConflict, fmt.Sprintf("contested: %v", got[0].Contested)
	}
	if o.Err != noError || len(got) == 0 {
		o.contentOf(live.Status)
		return o
	}
	Expect(got[0].ResourceVersion).To(Equal(live.ResourceVersion), "the divergence is from the live object")
	o.contentOf(withDivergence(live, got[0]).Status)
	return o
}

// withDivergence is live with d applied: the object the shadow batch
// compared.
func withDivergence(live *v1alpha1.Widget, d batcher.Divergence) *v1alpha1.Widget {
	GinkgoHelper()
	u := asUnstructured(live)
	byType := map[string]any{}
	var order []string
	for _, c := range conditionsOf(u) {
		t := c.(map[string]any)["type"].(string)
		byType[t], order = c, append(order, t)
	}
	for _, c := range d.Conditions {
		if _, ok := byType[c.Type]; !ok {
			order = append(order, c.Type)
		}
		if c.Change == batcher.Removed {
			delete(byType, c.Type)
		} else {
			byType[c.Type] = c.Shadow
		}
	}
	var conds []any
	for _, t := range order {
		if c, ok := byType[t]; ok {
			conds = append(conds, c)
		}
	}
	Expect(putConditions(u, conds)).To(Succeed())
	for _, f := range d.Fields {
		var fields []string
		for _, pe := range f.Path {
			Expect(pe.FieldName).NotTo(BeNil(), "a path of field names: %s", f.Path)
			fields = append(fields, *pe.FieldName)
		}
		if f.Change == batcher.Removed {
			unstructured.RemoveNestedField(u.Object, fields...)
		} else {
			Expect(unstructured.SetNestedField(u.Object, runtime.DeepCopyJSONValue(f.Shadow), fields...)).To(Succeed())
		}
	}
	return asWidget(u)
}

// policyIsNotFail: shadow mode sends a dry run as the owner of its fields
// whatever the policy (ssa.ApplyOptions.AsOwner) and lists what it would take
// as contested; a real apply under another policy yields or takes instead.
func policyIsNotFail(s scenario) string {
	var o ssa.ApplyOptions
	o.ApplyOptions(s.intent.opts)
	if o.Policy != nil && o.Policy.String() != conflicts.Fail().String() {
		return fmt.Sprintf("shadow mode does not consult the %s policy: it compares the apply as the owner", o.Policy)
	}
	return ""
}

// describe names a way's outcome for a failure message.
func describe(name string, o outcome) string {
	return name + ":\n  " + strings.ReplaceAll(o.String(), "\n", "\n  ")
}
