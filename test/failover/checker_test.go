package failover

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/examples/widgets"
	"github.com/statusapply/statusapply/ownership"
)

const (
	// driverManager changes the Widgets' spec (the sequence every value derives from).
	driverManager = "failover-driver"
	// legacyManager is the legacy writer's merge patches.
	legacyManager = "failover-legacy"
	// legacyKey is the attribute the legacy writer sets to the generation it saw.
	legacyKey = "legacy"
	// conditionLegacy is the condition the broken legacy writer sets.
	conditionLegacy = "Legacy"
	maxReported     = 30
	absent          = -1
)

// allowed are the status fields each manager writes; owning any other field
// is owning a field it never wrote.
var allowed = map[string][]string{
	widgets.ReadinessManager:  {`.status.conditions[type="Ready"]`, `.status.readyReplicas`, `.status.observedGeneration`},
	widgets.NetworkingManager: {`.status.conditions[type="Reachable"]`, `.status.endpoint`},
	widgets.PlannerManager:    {`.status.plan`, `.status.conditions[type="Planned"]`},
	legacyManager:             {`.status.attributes.` + legacyKey, `.status.conditions[type="Legacy"]`},
}

// A value is one writer's sequence number as an object version shows it:
// every one of them derives from the Widget's spec, whose generation (and
// spec.replicas, which the driver only ever increments) never goes back.
type value struct {
	name string
	of   func(w *v1alpha1.Widget) int64
}

func conditionGeneration(t string) func(w *v1alpha1.Widget) int64 {
	return func(w *v1alpha1.Widget) int64 {
		if c := meta.FindStatusCondition(w.Status.Conditions, t); c != nil {
			return c.ObservedGeneration
		}
		return absent
	}
}

var values = []value{
	{widgets.ReadinessManager + " Ready", conditionGeneration(widgets.ConditionReady)},
	{widgets.ReadinessManager + " observedGeneration", func(w *v1alpha1.Widget) int64 {
		if w.Status.ObservedGeneration == 0 {
			return absent
		}
		return w.Status.ObservedGeneration
	}},
	{widgets.ReadinessManager + " readyReplicas", func(w *v1alpha1.Widget) int64 {
		if w.Status.ReadyReplicas == 0 {
			return absent
		}
		return int64(w.Status.ReadyReplicas)
	}},
	{widgets.NetworkingManager + " Reachable", conditionGeneration(widgets.ConditionReachable)},
	{widgets.PlannerManager + " Planned", conditionGeneration(widgets.ConditionPlanned)},
	{legacyManager + " attribute", func(w *v1alpha1.Widget) int64 {
		if s, ok := w.Status.Attributes[legacyKey]; ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
		return absent
	}},
	{legacyManager + " Legacy", conditionGeneration(conditionLegacy)},
}

// checker follows the namespace's Widgets on a watch and checks every version
// against what it saw before of the same incarnation (uid):
//
//   - no writer's value goes back to an older one, nor disappears;
//   - exactly one plan: once set its id never changes, and it is never removed;
//   - no manager owns a status field it never wrote.
type checker struct {
	mu         sync.Mutex
	objects    map[types.UID]*incarnation
	violations int
	// regressions are the violations where a value went back or disappeared.
	regressions int
	reported    []string
	versions    int
	relists     int
	failed      chan struct{}
}

type incarnation struct {
	name string
	max  map[string]int64
	plan string
}

func newChecker() *checker {
	return &checker{objects: map[types.UID]*incarnation{}, failed: make(chan struct{})}
}

func (c *checker) violateLocked(format string, args ...any) {
	c.violations++
	if c.violations == 1 {
		close(c.failed)
	}
	if len(c.reported) < maxReported {
		c.reported = append(c.reported, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
	}
}

// run watches until ctx ends, listing again after every break (an API server
// restart, an expired watch).
func (c *checker) run(ctx context.Context, wc client.WithWatch, ns string) {
	for ctx.Err() == nil {
		list := &v1alpha1.WidgetList{}
		if err := wc.List(ctx, list, client.InNamespace(ns)); err != nil {
			sleepCtx(ctx, 250*time.Millisecond)
			continue
		}
		c.mu.Lock()
		c.relists++
		c.mu.Unlock()
		for i := range list.Items {
			c.check(&list.Items[i])
		}
		c.watchFrom(ctx, wc, ns, list.ResourceVersion)
	}
}

func (c *checker) watchFrom(ctx context.Context, wc client.WithWatch, ns, rv string) {
	w, err := wc.Watch(ctx, &v1alpha1.WidgetList{}, client.InNamespace(ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	if err != nil {
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			if obj, ok := ev.Object.(*v1alpha1.Widget); ok {
				c.check(obj)
			}
		case watch.Deleted:
			if obj, ok := ev.Object.(*v1alpha1.Widget); ok {
				c.mu.Lock()
				delete(c.objects, obj.UID)
				c.mu.Unlock()
			}
		case watch.Error:
			return
		}
	}
}

// check checks one version of an object.
func (c *checker) check(w *v1alpha1.Widget) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.versions++
	inc := c.objects[w.UID]
	if inc == nil {
		inc = &incarnation{name: w.Name, max: map[string]int64{}}
		c.objects[w.UID] = inc
	}
	id := fmt.Sprintf("%s (rv %s)", w.Name, w.ResourceVersion)
	for _, v := range values {
		now, seen := v.of(w), inc.max[v.name]
		switch {
		case seen > 0 && now == absent:
			c.regressions++
			c.violateLocked("%s: %s's value %d disappeared", id, v.name, seen)
		case now != absent && now < seen:
			c.regressions++
			c.violateLocked("%s: %s went back from %d to %d", id, v.name, seen, now)
		}
		inc.max[v.name] = max(seen, now)
	}
	plan := ""
	if w.Status.Plan != nil {
		plan = w.Status.Plan.ID
	}
	switch {
	case inc.plan != "" && plan == "":
		c.violateLocked("%s: plan %s was removed", id, inc.plan)
	case inc.plan != "" && plan != inc.plan:
		c.violateLocked("%s: a second plan %s replaced plan %s", id, plan, inc.plan)
	case plan != "":
		inc.plan = plan
	}
	c.checkOwnershipLocked(id, w)
}

// checkOwnershipLocked reports status fields a manager owns but never writes.
func (c *checker) checkOwnershipLocked(id string, w *v1alpha1.Widget) {
	o, err := ownership.Inspect(w)
	if err != nil {
		c.violateLocked("%s: managedFields: %v", id, err)
		return
	}
	for _, e := range o.Entries {
		fields := e.StatusFields()
		if fields == nil {
			continue
		}
		var foreign []string
		fields.Iterate(func(p fieldpath.Path) {
			if !allowedPath(e.Manager, p.String()) {
				foreign = append(foreign, p.String())
			}
		})
		if len(foreign) > 0 {
			sort.Strings(foreign)
			if len(foreign) > 3 {
				foreign = append(foreign[:3], "...")
			}
			c.violateLocked("%s: %s (%s) owns %s, which it never writes", id, e.Manager, e.Operation, strings.Join(foreign, ", "))
		}
	}
}

func allowedPath(manager, p string) bool {
	for _, prefix := range allowed[manager] {
		if p == prefix || strings.HasPrefix(p, prefix+".") {
			return true
		}
	}
	// The parents of what a manager writes ("the status", "the conditions").
	for _, prefix := range allowed[manager] {
		if strings.HasPrefix(prefix, p+".") || strings.HasPrefix(prefix, p+"[") {
			return true
		}
	}
	return false
}

func (c *checker) regressionCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.regressions
}

func (c *checker) figures() (violations, versions, relists int, reported []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.violations, c.versions, c.relists, append([]string(nil), c.reported...)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
