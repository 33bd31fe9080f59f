package clisuite

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/cmd/internal/cli"
	statusconditions "github.com/statusapply/statusapply/conditions"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/schemas/crdschema"
	shadowmode "github.com/statusapply/statusapply/shadow"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
)

// The migration guide's campaign on a kind without Go types or apply
// configurations: the Machine of testdata, written as unstructured objects
// through its storage version.
var machineGVK = schema.GroupVersionKind{Group: "cluster.test.statusapply.io", Version: "v1beta2", Kind: "Machine"}

// The field managers of the campaign: the legacy writer sets both
// conditions with merge patches; each new writer applies one of them.
const (
	machineLegacy    = "machine-legacy"
	machineReadiness = "machine-readiness"
	machineNetwork   = "machine-network"
)

// machineWorld is what the machines' conditions should say: type -> status
// per machine. The legacy writer and the new writers read it alike, so
// their writes agree unless a spec makes them differ.
type machineWorld struct {
	mu     sync.Mutex
	status map[string]map[string]metav1.ConditionStatus
}

func (w *machineWorld) set(name, condType string, status metav1.ConditionStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status[name] == nil {
		w.status[name] = map[string]metav1.ConditionStatus{}
	}
	w.status[name][condType] = status
}

// conditions returns the conditions machine name should carry, by type.
func (w *machineWorld) conditions(name string) map[string]metav1.Condition {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]metav1.Condition{}
	for t, s := range w.status[name] {
		out[t] = metav1.Condition{Type: t, Status: s, Reason: "Checked", Message: t + " is " + string(s)}
	}
	return out
}

// legacyMachineWriter is the controller being migrated: in a goroutine it
// reads each machine and merge-patches its status with the world's
// conditions, the whole conditions array in every patch that changes one.
type legacyMachineWriter struct {
	stop context.CancelFunc
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func startLegacyMachineWriter(ns string, names []string, world *machineWorld) *legacyMachineWriter {
	// Not a node's context: the writer outlives the node that starts it.
	ctx, cancel := context.WithCancel(context.Background())
	l := &legacyMachineWriter{stop: cancel, done: make(chan struct{})}
	go func() {
		defer GinkgoRecover()
		defer close(l.done)
		for ctx.Err() == nil {
			for _, name := range names {
				if err := legacyMachineWrite(ctx, ns, name, world); err != nil && ctx.Err() == nil {
					l.mu.Lock()
					l.err = errors.Join(l.err, err)
					l.mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	DeferCleanup(l.halt)
	return l
}

// halt stops the writer, waits for it, and returns what failed.
func (l *legacyMachineWriter) halt() error {
	l.stop()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func legacyMachineWrite(ctx context.Context, ns, name string, world *machineWorld) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(machineGVK)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return err
	}
	base := u.DeepCopy()
	obj := statusconditions.Unstructured(u)
	want := world.conditions(name)
	for _, t := range slices.Sorted(maps.Keys(want)) {
		statusconditions.Set(obj, want[t])
	}
	if err := obj.Err(); err != nil {
		return err
	}
	return env.Client.Status().Patch(ctx, u, client.MergeFrom(base), client.FieldOwner(machineLegacy))
}

func getMachine(ctx context.Context, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(machineGVK)
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	return u
}

// machineWriter is one new status writer: its own Applier, with the
// Machine's schema from the CRD's YAML, through a client whose requests are
// counted.
type machineWriter struct {
	manager, condType string
	applier           *ssa.Applier
	requests          *apiserver.Requests
}

func newMachineWriter(manager, condType string) *machineWriter {
	GinkgoHelper()
	tc, err := crdschema.FromCRDFiles(machineCRDFile())
	Expect(err).NotTo(HaveOccurred())
	c, requests, err := env.CountingClient()
	Expect(err).NotTo(HaveOccurred())
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(tc), ssa.WithRegisterer(nil))
	Expect(err).NotTo(HaveOccurred())
	return &machineWriter{manager: manager, condType: condType, applier: a, requests: requests}
}

// reconcile reads the machine and flushes one batch holding the writer's
// condition from the world, as an Edit: the status function written for
// merge patches, unchanged.
func (w *machineWriter) reconcile(ctx context.Context, ns, name string, world *machineWorld, opts ...batcher.Option) error {
	obj := getMachine(ctx, ns, name)
	b := batcher.New(w.applier, opts...)
	if err := statusconditions.StatusUnstructured(b, obj, w.manager, world.conditions(name)[w.condType]); err != nil {
		return err
	}
	return b.Flush(ctx)
}

var _ = Describe("the migration campaign on a kind without apply configurations", func() {
	const resource = "machines.cluster.test.statusapply.io"
	names := []string{"m1", "m2", "m3"}
	writerFlags := []string{"--writer", machineReadiness + "=Ready", "--writer", machineNetwork + "=NetworkReady"}

	var (
		ns     string
		world  *machineWorld
		legacy *legacyMachineWriter
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		world = &machineWorld{status: map[string]map[string]metav1.ConditionStatus{}}
		for _, name := range names {
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterName": "c1"}}}
			u.SetGroupVersionKind(machineGVK)
			u.SetNamespace(ns)
			u.SetName(name)
			Expect(env.Client.Create(ctx, u)).To(Succeed())
			world.set(name, "Ready", metav1.ConditionTrue)
			world.set(name, "NetworkReady", metav1.ConditionTrue)
		}
		legacy = startLegacyMachineWriter(ns, names, world)
		Eventually(func(g Gomega) {
			for _, name := range names {
				g.Expect(machineConditions(ctx, ns, name)).To(Equal(map[string]string{"Ready": "True", "NetworkReady": "True"}))
			}
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})

	audit := func(ctx context.Context, extra ...string) (result, auditJSON) {
		GinkgoHelper()
		r := run(ctx, append([]string{"audit", resource, "-n", ns, "-o", "json"}, extra...)...)
		var out auditJSON
		decode(r, &out)
		return r, out
	}

	// owners returns, per machine, the managers owning each condition.
	owners := func(ctx context.Context) map[string]map[string][]string {
		GinkgoHelper()
		out := map[string]map[string][]string{}
		for _, name := range names {
			o, err := ownership.Inspect(getMachine(ctx, ns, name))
			Expect(err).NotTo(HaveOccurred())
			out[name] = map[string][]string{}
			for manager, types := range o.ConditionTypes() {
				for _, t := range types {
					out[name][t] = append(out[name][t], manager)
				}
			}
		}
		return out
	}

	// switchWriters runs the campaign to its switch: shadow, then the new
	// writers apply and the legacy writer stops. It returns the writers.
	switchWriters := func(ctx context.Context) (readiness, network *machineWriter) {
		GinkgoHelper()
		readiness = newMachineWriter(machineReadiness, "Ready")
		network = newMachineWriter(machineNetwork, "NetworkReady")

		By("shadow: the new writers beside the live legacy writer write nothing and agree with it")
		world.set("m2", "Ready", metav1.ConditionFalse)
		Eventually(func() map[string]string { return machineConditions(ctx, ns, "m2") }).WithTimeout(10*time.Second).
			Should(HaveKeyWithValue("Ready", "False"), "the legacy writer writes the world's change")
		var (
			mu          sync.Mutex
			divergences []batcher.Divergence
		)
		mode, err := shadowmode.New(shadowmode.Options{OnDivergence: func(_ context.Context, d batcher.Divergence) {
			mu.Lock()
			defer mu.Unlock()
			divergences = append(divergences, d)
		}, Registerer: prometheus.NewRegistry()})
		Expect(err).NotTo(HaveOccurred())
		shadow := mode.Option()
		for _, name := range names {
			Expect(readiness.reconcile(ctx, ns, name, world, shadow)).To(Succeed())
			Expect(network.reconcile(ctx, ns, name, world, shadow)).To(Succeed())
		}
		mu.Lock()
		Expect(divergences).To(BeEmpty())
		mu.Unlock()

		By("shadow's control: a writer that disagrees diverges, contested by the legacy owner")
		wrong := &machineWorld{status: map[string]map[string]metav1.ConditionStatus{"m1": {"NetworkReady": metav1.ConditionFalse}}}
		Expect(network.reconcile(ctx, ns, "m1", wrong, shadow)).To(Succeed())
		mu.Lock()
		Expect(divergences).To(HaveLen(1))
		Expect(divergences[0].Contested).NotTo(BeEmpty())
		Expect(divergences[0].Contested[0].Owner()).To(ContainSubstring(machineLegacy))
		mu.Unlock()
		for name, conds := range owners(ctx) {
			Expect(conds).To(Equal(map[string][]string{"Ready": {machineLegacy}, "NetworkReady": {machineLegacy}}),
				"%s: shadow mode leaves no trace", name)
		}

		By("switch: the legacy writer stops, the new writers apply; restating its values sends nothing")
		Expect(legacy.halt()).To(Succeed(), "the legacy writer's patches all went through")
		readiness.requests.Reset()
		network.requests.Reset()
		for _, name := range names {
			Expect(readiness.reconcile(ctx, ns, name, world)).To(Succeed())
			Expect(network.reconcile(ctx, ns, name, world)).To(Succeed())
		}
		Expect(readiness.requests.Count("apply")).To(BeZero(), "%s", readiness.requests)
		Expect(network.requests.Count("apply")).To(BeZero(), "%s", network.requests)
		for name, conds := range owners(ctx) {
			Expect(conds).To(Equal(map[string][]string{"Ready": {machineLegacy}, "NetworkReady": {machineLegacy}}),
				"%s: the new writers never became owners", name)
		}

		By("a changed value conflicts with the legacy owner")
		world.set("m3", "Ready", metav1.ConditionFalse)
		err = readiness.reconcile(ctx, ns, "m3", world)
		Expect(err).To(MatchError(And(ContainSubstring(machineReadiness), ContainSubstring(machineLegacy))))
		Expect(machineConditions(ctx, ns, "m3")).To(HaveKeyWithValue("Ready", "True"), "the conflict wrote nothing")
		return readiness, network
	}

	It("audits, shadows, switches, migrates with the flags the audit proposes for the declared writers, and audits clean", func(ctx context.Context) {
		By("audit: the legacy writer alone holds both conditions; nothing can be inferred without naming the new writers")
		r, out := audit(ctx)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(out.Objects).To(Equal(len(names)))
		Expect(out.Schema.Checked).To(BeTrue())
		Expect(out.Schema.Findings).To(ConsistOf(And(HaveField("Version", "v1beta1"), HaveField("Path", "status.conditions"),
			HaveField("Severity", "warning"))), "v1beta1's atomic conditions do not block the campaign")
		Expect(out.ActiveLegacyWriters).To(ConsistOf(HaveField("Manager", machineLegacy)))
		Expect(out.Verdict.Flags).To(BeEmpty())
		Expect(out.Verdict.Unresolved).To(ContainElement(HavePrefix(
			"condition Ready: held by " + machineLegacy + ", applied by no manager: name its new writer with --writer MANAGER=Ready")))

		By("audit --writer: the flags that hand each condition to its declared writer")
		r, out = audit(ctx, writerFlags...)
		Expect(r.err).NotTo(HaveOccurred())
		plan := []string{"--condition", "NetworkReady=" + machineNetwork, "--condition", "Ready=" + machineReadiness}
		flags := append(slices.Clone(plan), "--new-destination", machineNetwork, "--new-destination", machineReadiness)
		Expect(out.Verdict.Flags).To(Equal(flags), "the declared writers apply nowhere yet: the flags say they are new")
		Expect(out.Verdict.Unresolved).To(BeEmpty())
		Expect(out.Verdict.Writers).To(Equal(map[string][]string{machineReadiness: {"Ready"}, machineNetwork: {"NetworkReady"}}))
		Expect(out.MigrateCommand).To(Equal("statusapply migrate " + resource + " -n " + ns + " " + strings.Join(flags, " ")))

		readiness, network := switchWriters(ctx)

		By("migrate: the command the audit printed after the switch, a dry run, then --apply")
		r, out = audit(ctx, writerFlags...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(out.Verdict.Flags).To(Equal(flags), "the switch changed no ownership, so neither did the verdict")
		args := strings.Fields(strings.TrimPrefix(out.MigrateCommand, "statusapply "))
		r = run(ctx, args...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("dry run: 3 objects, 3 would change, 0 unchanged, 0 failed"))

		By("for scripts: the verdict's flags from -o jsonpath, run back into migrate --exit-code")
		r = run(ctx, append(append([]string{"audit", resource, "-n", ns}, writerFlags...), "-o", "jsonpath={.verdict.flags[*]}")...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(BeEmpty())
		scripted := strings.Fields(r.stdout)
		Expect(scripted).To(Equal(flags))
		r = run(ctx, append(append([]string{"migrate", resource, "-n", ns}, scripted...), "--exit-code")...)
		Expect(cli.ExitCode(r.err)).To(Equal(1), "accepted, and something would change: %v", r.err)
		Expect(r.stderr).To(ContainSubstring("dry run: 3 objects, 3 would change"))
		r = run(ctx, append(append([]string{"audit", resource, "-n", ns}, writerFlags...), "-o", "jsonpath={.verdict.flags}")...)
		Expect(r.err).NotTo(HaveOccurred())
		var asJSON []string
		Expect(json.Unmarshal([]byte(r.stdout), &asJSON)).To(Succeed(), "{.verdict.flags} prints a JSON array: %s", r.stdout)
		Expect(asJSON).To(Equal(flags))
		By("the control: the plan's flags alone are refused under --exit-code, since the declared writers apply nowhere")
		r = run(ctx, append(append([]string{"migrate", resource, "-n", ns}, plan...), "--exit-code")...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("refused under --exit-code")))

		By("--apply refuses while the legacy writer wrote within the window; told it is switched, it migrates")
		r = run(ctx, append(args, "--apply")...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(HavePrefix("not migrating from a legacy writer still active: " + machineLegacy + " wrote 3 objects within 24h")))
		Expect(owners(ctx)).To(HaveEach(HaveKeyWithValue("Ready", []string{machineLegacy})), "nothing was written")
		r = run(ctx, append(args, "--apply", "--allow-active")...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("warning: legacy writer " + machineLegacy + " wrote 3 objects within 24h"))
		for name, conds := range owners(ctx) {
			Expect(conds).To(Equal(map[string][]string{"Ready": {machineReadiness}, "NetworkReady": {machineNetwork}}), name)
		}

		By("the new writers' applies now own what they change: the refused change lands")
		for _, name := range names {
			Expect(readiness.reconcile(ctx, ns, name, world)).To(Succeed())
			Expect(network.reconcile(ctx, ns, name, world)).To(Succeed())
		}
		Expect(machineConditions(ctx, ns, "m3")).To(Equal(map[string]string{"Ready": "False", "NetworkReady": "True"}))
		Expect(machineConditions(ctx, ns, "m2")).To(Equal(map[string]string{"Ready": "False", "NetworkReady": "True"}))
		Expect(machineConditions(ctx, ns, "m1")).To(Equal(map[string]string{"Ready": "True", "NetworkReady": "True"}))
		world.set("m1", "NetworkReady", metav1.ConditionFalse)
		Expect(network.reconcile(ctx, ns, "m1", world)).To(Succeed())
		Expect(machineConditions(ctx, ns, "m1")).To(Equal(map[string]string{"Ready": "True", "NetworkReady": "False"}))
		for name, conds := range owners(ctx) {
			Expect(conds).To(Equal(map[string][]string{"Ready": {machineReadiness}, "NetworkReady": {machineNetwork}}), name)
		}

		By("audit --exit-code: nothing left to migrate, with or without the declarations")
		r, out = audit(ctx, "--exit-code")
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
		Expect(out.Verdict.MigrationNeeded).To(BeFalse())
		Expect(out.ActiveLegacyWriters).To(BeEmpty())
		r, _ = audit(ctx, append(writerFlags, "--exit-code")...)
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
	})

	It("without the migrate step, the audit never comes clean (the control)", func(ctx context.Context) {
		readiness, network := switchWriters(ctx)

		By("the new writers keep reconciling: their applies change nothing the legacy writer owns")
		for range 3 {
			for _, name := range names {
				err := readiness.reconcile(ctx, ns, name, world)
				if name == "m3" {
					Expect(err).To(HaveOccurred(), "m3's changed condition conflicts every time")
				} else {
					Expect(err).NotTo(HaveOccurred())
				}
				Expect(network.reconcile(ctx, ns, name, world)).To(Succeed())
			}
		}
		for name, conds := range owners(ctx) {
			Expect(conds).To(Equal(map[string][]string{"Ready": {machineLegacy}, "NetworkReady": {machineLegacy}}), name)
		}

		r, out := audit(ctx, "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(out.Verdict.MigrationNeeded).To(BeTrue())
		Expect(out.Verdict.Flags).To(BeEmpty(), "nobody to hand the conditions to")
		Expect(out.Verdict.Unresolved).To(HaveLen(3), "both conditions, and what the legacy writer keeps")
		r, out = audit(ctx, append(writerFlags, "--exit-code")...)
		Expect(cli.ExitCode(r.err)).To(Equal(1), "the declarations propose the flags; only migrate carries them out")
		Expect(out.Verdict.Flags).NotTo(BeEmpty())
	})
})

// machineConditions returns the machine's conditions as type -> status.
func machineConditions(ctx context.Context, ns, name string) map[string]string {
	out := map[string]string{}
	for _, c := range statusconditions.Unstructured(getMachine(ctx, ns, name)).GetConditions() {
		out[c.Type] = string(c.Status)
	}
	return out
}
