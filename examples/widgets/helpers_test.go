package widgets

import (
	"context"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// startManager runs the example's controllers in a real manager, watching only
// ns, until the spec ends.
func startManager(ns string) {
	GinkgoHelper()
	startManagerServing(ns, "0")
}

// startManagerServing is startManager with the manager's metrics endpoint
// served on metricsAddress ("0" for none).
func startManagerServing(ns, metricsAddress string) {
	GinkgoHelper()
	mgr, err := manager.New(env.Config, manager.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddress},
		HealthProbeBindAddress: "0",
		// Every spec starts its own manager with the same controller names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		// Specs share the API server; a manager sees its own spec's Widgets only.
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(Add(mgr)).To(Succeed())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		done <- mgr.Start(ctx)
	}()
	DeferCleanup(func() {
		cancel()
		Eventually(done).Should(Receive(Not(HaveOccurred())), "the manager did not stop cleanly")
	})
}

// createWidget creates a Widget asking for replicas.
func createWidget(ctx context.Context, ns, name string, replicas int32) client.ObjectKey {
	GinkgoHelper()
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.WidgetSpec{Replicas: replicas}}
	Expect(env.Client.Create(ctx, w)).To(Succeed())
	return client.ObjectKeyFromObject(w)
}

// getWidget reads a Widget from the API server.
func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w := &v1alpha1.Widget{}
	Expect(env.Client.Get(ctx, key, w)).To(Succeed())
	return w
}

// converged reports whether every controller has written what it should for
// the Widget's current generation.
func converged(w *v1alpha1.Widget) bool {
	for _, t := range []string{ConditionReady, ConditionReachable, ConditionPlanned} {
		c := findCondition(w, t)
		if c == nil || c.ObservedGeneration != w.Generation {
			return false
		}
	}
	return w.Status.ObservedGeneration == w.Generation &&
		w.Status.ReadyReplicas == w.Spec.Replicas &&
		w.Status.Endpoint == Endpoint(w.Namespace, w.Name) &&
		w.Status.Plan != nil
}

func findCondition(w *v1alpha1.Widget, condType string) *metav1.Condition {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == condType {
			return &w.Status.Conditions[i]
		}
	}
	return nil
}

// statusOwners returns, per field manager, the status fields its status
// entries own, keyed by operation ("Apply" or "Update").
func statusOwners(w *v1alpha1.Widget) map[string]map[metav1.ManagedFieldsOperationType]*fieldpath.Set {
	GinkgoHelper()
	out := map[string]map[metav1.ManagedFieldsOperationType]*fieldpath.Set{}
	for _, mf := range w.ManagedFields {
		if mf.Subresource != "status" || mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		Expect(set.FromJSON(mf.FieldsV1.GetRawReader())).To(Succeed())
		if out[mf.Manager] == nil {
			out[mf.Manager] = map[metav1.ManagedFieldsOperationType]*fieldpath.Set{}
		}
		out[mf.Manager][mf.Operation] = set
	}
	return out
}

// conditionPath is the path of one condition, the unit its manager owns.
func conditionPath(condType string) fieldpath.Path {
	return fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", condType))
}

// statusPath is the path of a status field, such as status.plan.id.
func statusPath(fields ...any) fieldpath.Path {
	return fieldpath.MakePathOrDie(append([]any{"status"}, fields...)...)
}

// planHistory records every distinct plan ID each Widget of a namespace shows,
// in order, from a watch: a plan that was overwritten and one that never was
// look the same on the final object, not in its history.
type planHistory struct {
	mu   sync.Mutex
	ids  map[string][]string // Widget name -> plan IDs, consecutive duplicates dropped
	seen map[string]map[string]bool
	// stopped is set when the spec ends the watch, whose last event is then an
	// error that means nothing.
	stopped atomic.Bool
}

// watchPlans starts recording the plan history of ns's Widgets from now until
// the spec ends. The watch has its own context: the context of the node that
// starts it (a BeforeEach) ends with that node.
func watchPlans(ns string) *planHistory {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(context.Background())
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	list := &v1alpha1.WidgetList{}
	Expect(wc.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	w, err := wc.Watch(ctx, &v1alpha1.WidgetList{}, client.InNamespace(ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	Expect(err).NotTo(HaveOccurred())
	h := &planHistory{ids: map[string][]string{}, seen: map[string]map[string]bool{}}
	for i := range list.Items {
		h.record(&list.Items[i])
	}
	DeferCleanup(func() {
		h.stopped.Store(true)
		w.Stop()
		cancel()
	})
	go func() {
		for ev := range w.ResultChan() {
			switch obj := ev.Object.(type) {
			case *v1alpha1.Widget:
				h.record(obj)
			case *metav1.Status:
				if h.stopped.Load() {
					return
				}
				// The history stops here, and Seen never turns true after it.
				GinkgoWriter.Printf("plan history of %s: watch error: %s\n", ns, obj.Message)
			}
		}
	}()
	return h
}

func (h *planHistory) record(w *v1alpha1.Widget) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[w.Name] == nil {
		h.seen[w.Name] = map[string]bool{}
	}
	h.seen[w.Name][w.ResourceVersion] = true
	if w.Status.Plan == nil {
		return
	}
	ids := h.ids[w.Name]
	if len(ids) == 0 || ids[len(ids)-1] != w.Status.Plan.ID {
		h.ids[w.Name] = append(ids, w.Status.Plan.ID)
	}
}

// IDs returns the plan IDs name has shown so far.
func (h *planHistory) IDs(name string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids[name]...)
}

// Seen reports whether the watch has delivered name at resourceVersion, so
// that the history is complete up to it.
func (h *planHistory) Seen(name, resourceVersion string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[name][resourceVersion]
}
