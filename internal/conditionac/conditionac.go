// Package conditionac holds what ssa and batcher both do with metav1
// conditions as apply configurations: compare them as they encode, make and
// copy them, and find one by type. A metav1.Condition is turned into its apply
// configuration by View alone, so that every comparison and copy agrees on
// how a condition encodes.
package conditionac

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// View returns c as the apply configuration its JSON states, pointing into c:
// every field set, but observedGeneration only when not 0, which
// metav1.Condition's omitempty leaves out. An object decoded into Go types
// holds no 0 there either, so a 0 sent would be claimed but never read back.
func View(c *metav1.Condition) metav1ac.ConditionApplyConfiguration {
	ac := metav1ac.ConditionApplyConfiguration{Type: &c.Type, Status: &c.Status, Reason: &c.Reason, Message: &c.Message,
		LastTransitionTime: &c.LastTransitionTime}
	if c.ObservedGeneration != 0 {
		ac.ObservedGeneration = &c.ObservedGeneration
	}
	return ac
}

// Of returns c's apply configuration (View's) with its own values, in one
// allocation rather than one per field: reconciles set conditions by the dozen.
func Of(c metav1.Condition) metav1ac.ConditionApplyConfiguration {
	own := new(metav1.Condition)
	*own = c
	return View(own)
}

// Equal reports whether two conditions encode alike: the same fields set to
// the same values, times to the second.
func Equal(x, y *metav1ac.ConditionApplyConfiguration) bool {
	if !equalPtr(x.Type, y.Type) || !equalPtr(x.Status, y.Status) || !equalPtr(x.Reason, y.Reason) ||
		!equalPtr(x.Message, y.Message) || !equalPtr(x.ObservedGeneration, y.ObservedGeneration) {
		return false
	}
	a, b := x.LastTransitionTime, y.LastTransitionTime
	if a == nil || b == nil {
		return a == b
	}
	return a.Unix() == b.Unix()
}

// EqualAll compares lists of conditions item by item as Equal does; a nil
// list (absent) differs from an empty one.
func EqualAll(a, b []metav1ac.ConditionApplyConfiguration) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if !Equal(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// Holds reports whether ac states c as c encodes (see View): the comparison
// Equal makes with View(c), without building the view, which a steady
// reconcile asks for once per condition.
func Holds(ac *metav1ac.ConditionApplyConfiguration, c *metav1.Condition) bool {
	og := ac.ObservedGeneration
	return ac.Type != nil && *ac.Type == c.Type && ac.Status != nil && *ac.Status == c.Status &&
		ac.Reason != nil && *ac.Reason == c.Reason && ac.Message != nil && *ac.Message == c.Message &&
		(og == nil && c.ObservedGeneration == 0 || og != nil && c.ObservedGeneration != 0 && *og == c.ObservedGeneration) &&
		ac.LastTransitionTime != nil && ac.LastTransitionTime.Unix() == c.LastTransitionTime.Unix()
}

// Same reports whether two conditions encode to the same JSON (see View):
// times to the second, a zero time as null, observedGeneration 0 left out.
func Same(a, b *metav1.Condition) bool {
	x, y := View(a), View(b)
	return Equal(&x, &y)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// values backs a copied condition's pointers in one allocation.
type values struct {
	typ, reason, message string
	status               metav1.ConditionStatus
	observedGeneration   int64
	lastTransitionTime   metav1.Time
}

// Copy deep-copies conditions, the bulk of most statuses, without reflection
// and in one allocation for all their values; a field left unset stays unset.
// A mutator writing through a copy cannot reach the original.
func Copy(in []metav1ac.ConditionApplyConfiguration) []metav1ac.ConditionApplyConfiguration {
	if in == nil {
		return nil
	}
	out := make([]metav1ac.ConditionApplyConfiguration, len(in))
	vals := make([]values, len(in))
	for i := range in {
		in, out, v := &in[i], &out[i], &vals[i]
		if in.Type != nil {
			v.typ = *in.Type
			out.Type = &v.typ
		}
		if in.Status != nil {
			v.status = *in.Status
			out.Status = &v.status
		}
		if in.Reason != nil {
			v.reason = *in.Reason
			out.Reason = &v.reason
		}
		if in.Message != nil {
			v.message = *in.Message
			out.Message = &v.message
		}
		if in.ObservedGeneration != nil {
			v.observedGeneration = *in.ObservedGeneration
			out.ObservedGeneration = &v.observedGeneration
		}
		if in.LastTransitionTime != nil {
			v.lastTransitionTime = *in.LastTransitionTime
			out.LastTransitionTime = &v.lastTransitionTime
		}
	}
	return out
}

// Index returns the index of the first condition of condType, or -1. It
// compares lengths and last bytes first, which tell most of a reconcile's
// types apart without a call.
func Index(conds []metav1ac.ConditionApplyConfiguration, condType string) int {
	n := len(condType)
	for i := range conds {
		if t := conds[i].Type; t != nil && len(*t) == n && (n == 0 || (*t)[n-1] == condType[n-1]) && *t == condType {
			return i
		}
	}
	return -1
}
