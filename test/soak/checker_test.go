package soak

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
)

// maxReported bounds the violations kept for the report; all are counted.
const maxReported = 30

// absent is the sequence number recorded for a writer whose value an object
// version does not hold.
const absent = -1

// checker follows every object through a watch and checks, on every version
// it sees, what statusapply promises writers that share an object:
//
//   - no writer's change is undone by another: per object incarnation (uid)
//     and writer, the sequence number never decreases and never disappears;
//     a decrease is only the writer's own late write (a request the client
//     gave up on that the server still applied after a newer one) when the
//     writer's manager still owns the value and no other writer applies as
//     that manager;
//   - at most one plan per incarnation: once set, its id never changes and
//     it is never removed;
//   - no field is taken by force unless declared: a field a manager owned
//     moves to another manager only when that is the TakeDeclared writer and
//     the field is in its declaration.
//
// Deletions end an incarnation's record; its successor starts afresh.
type checker struct {
	writers []tracked

	mu          sync.Mutex
	objects     map[types.UID]*incarnation
	current     map[string]types.UID // name -> uid of the incarnation seen last
	violations  int
	reported    []string
	versions    int // object versions checked
	lateSelf    int // a writer's own late write seen (not a violation)
	taken       int // fields moved to the TakeDeclared writer under its declaration
	relists     int
	firstFailAt time.Time
	failed      chan struct{}
}

// incarnation is what the checker has seen of one object uid.
type incarnation struct {
	name  string
	max   map[string]int // writer -> highest sequence number seen
	last  map[string]int // writer -> sequence number in the last version seen
	plan  string
	owned map[string]*fieldpath.Set // manager/operation -> status fields owned
}

func newChecker(writers []tracked) *checker {
	return &checker{
		writers: writers,
		objects: map[types.UID]*incarnation{},
		current: map[string]types.UID{},
		failed:  make(chan struct{}),
	}
}

// violate records a violation.
func (c *checker) violate(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violateLocked(format, args...)
}

func (c *checker) violateLocked(format string, args ...any) {
	c.violations++
	if c.violations == 1 {
		c.firstFailAt = time.Now()
		close(c.failed)
	}
	if len(c.reported) < maxReported {
		c.reported = append(c.reported, fmt.Sprintf(format, args...))
	}
}

// run watches the namespace's Widgets until ctx ends. After any break (the
// API server restarting, the watch expiring) it lists again and resumes: the
// list is checked like any other version, and incarnations it no longer holds
// were deleted meanwhile.
func (c *checker) run(ctx context.Context, wc client.WithWatch, ns string) {
	for ctx.Err() == nil {
		list := &v1alpha1.WidgetList{}
		if err := wc.List(ctx, list, client.InNamespace(ns)); err != nil {
			sleepCtx(ctx, 250*time.Millisecond)
			continue
		}
		c.relisted(list.Items)
		c.watchFrom(ctx, wc, ns, list.ResourceVersion)
	}
}

// watchFrom follows the watch from rv until it breaks.
func (c *checker) watchFrom(ctx context.Context, wc client.WithWatch, ns, rv string) {
	for ctx.Err() == nil {
		w, err := wc.Watch(ctx, &v1alpha1.WidgetList{}, client.InNamespace(ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			return
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Error:
				w.Stop()
				// Expired or not, the list that follows resumes from the
				// current state.
				return
			case watch.Bookmark:
				if obj, ok := ev.Object.(*v1alpha1.Widget); ok {
					rv = obj.ResourceVersion
				}
			case watch.Added, watch.Modified:
				if obj, ok := ev.Object.(*v1alpha1.Widget); ok {
					c.check(obj)
					rv = obj.ResourceVersion
				}
			case watch.Deleted:
				if obj, ok := ev.Object.(*v1alpha1.Widget); ok {
					c.deleted(obj.UID)
					rv = obj.ResourceVersion
				}
			}
		}
		w.Stop()
	}
}

// relisted checks every listed object and forgets incarnations the list no
// longer has.
func (c *checker) relisted(items []v1alpha1.Widget) {
	live := map[types.UID]bool{}
	for i := range items {
		live[items[i].UID] = true
		c.check(&items[i])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.relists++
	for uid := range c.objects {
		if !live[uid] {
			c.deletedLocked(uid)
		}
	}
}

func (c *checker) deleted(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deletedLocked(uid)
}

func (c *checker) deletedLocked(uid types.UID) {
	if inc, ok := c.objects[uid]; ok && c.current[inc.name] == uid {
		delete(c.current, inc.name)
	}
	delete(c.objects, uid)
}

// check checks one version of an object against everything seen of its
// incarnation before.
func (c *checker) check(obj *v1alpha1.Widget) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.versions++
	inc, ok := c.objects[obj.UID]
	if !ok {
		inc = &incarnation{name: obj.Name, max: map[string]int{}, last: map[string]int{}, owned: map[string]*fieldpath.Set{}}
		c.objects[obj.UID] = inc
	}
	c.current[obj.Name] = obj.UID
	id := fmt.Sprintf("%s (uid %s, rv %s)", obj.Name, shortUID(obj.UID), obj.ResourceVersion)

	for _, t := range c.writers {
		seq, present := t.seqOf(obj)
		if !present {
			seq = absent
		}
		max, seen := inc.max[t.writer]
		// Each change is reported once, not again on every later version
		// that still shows it.
		changed := inc.last[t.writer] != seq
		switch {
		case !present && seen && changed:
			c.violateLocked("%s: %s's change %d disappeared", id, t.writer, max)
		case present && seq < max && changed:
			if !t.shared && t.ownsValue(obj) {
				c.lateSelf++
			} else {
				c.violateLocked("%s: %s's change %d was undone back to %d by another writer", id, t.writer, max, seq)
			}
		case present && seq > max:
			inc.max[t.writer] = seq
		}
		if seen || present {
			inc.last[t.writer] = seq
		}
	}

	switch plan := obj.Status.Plan; {
	case plan == nil && inc.plan != "":
		c.violateLocked("%s: plan %s was removed", id, inc.plan)
	case plan != nil && inc.plan == "":
		inc.plan = plan.ID
	case plan != nil && plan.ID != inc.plan:
		c.violateLocked("%s: a second plan %s replaced plan %s", id, plan.ID, inc.plan)
	}

	c.checkOwnershipLocked(id, obj, inc)
}

// checkOwnershipLocked compares the status fields each manager owns with the
// previous version: a field a manager lost that another manager now owns was
// taken from it, which only a forced apply or an Update (a merge patch) does.
func (c *checker) checkOwnershipLocked(id string, obj *v1alpha1.Widget, inc *incarnation) {
	o, err := ownership.Inspect(obj)
	if err != nil {
		c.violateLocked("%s: managedFields: %v", id, err)
		return
	}
	now := map[string]*fieldpath.Set{}
	managerOf := map[string]string{}
	for _, e := range o.Entries {
		if e.Subresource != ownership.StatusSubresource {
			continue
		}
		k := e.Manager + "/" + string(e.Operation)
		now[k] = e.StatusFields()
		managerOf[k] = e.Manager
	}
	keys := make([]string, 0, len(inc.owned))
	for k := range inc.owned {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		before := inc.owned[k]
		after, ok := now[k]
		if !ok {
			after = &fieldpath.Set{}
		}
		lost := before.Difference(after)
		loser := k[:strings.LastIndex(k, "/")]
		lost.Iterate(func(p fieldpath.Path) {
			for k2, s := range now {
				if k2 == k || !s.Has(p) {
					continue
				}
				if managerOf[k2] == managerTaker && takerDeclaration.Covers(conditionConflict(p)) {
					c.taken++
					continue
				}
				c.violateLocked("%s: %s was taken from %s by %s", id, p, loser, k2)
			}
		})
	}
	inc.owned = now
}

// seen returns the sequence number the current incarnation of name last
// showed for writer, and whether it has a plan.
func (c *checker) seen(name, writer string) (seq int, ok bool, plan string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	uid, ok := c.current[name]
	if !ok {
		return 0, false, ""
	}
	inc := c.objects[uid]
	seq, ok = inc.last[writer]
	return seq, ok && seq != absent, inc.plan
}

func (c *checker) violationCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.violations
}

// figures returns the checker's counts.
func (c *checker) figures() (violations, versions, lateSelf, taken, relists int, reported []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.violations, c.versions, c.lateSelf, c.taken, c.relists, append([]string(nil), c.reported...)
}

func shortUID(uid types.UID) string {
	if len(uid) > 8 {
		return string(uid[:8])
	}
	return string(uid)
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// conditionConflict is a conflict on p, with the condition type p lies in.
func conditionConflict(p fieldpath.Path) conflicts.Conflict {
	t, _ := ownership.ConditionTypeAt(p)
	return conflicts.Conflict{Path: p, ConditionType: t}
}
