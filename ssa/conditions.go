package ssa

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// SetCondition sets cond in conditions, an apply configuration's metav1
// conditions, replacing the entry of its type. observed are the object's
// current conditions and generation its metadata.generation:
//
//   - lastTransitionTime, unless cond sets it, is kept from the observed
//     condition of the same type and status, else set to now;
//   - observedGeneration is set to generation unless cond sets it.
//
// cond is validated as the API server validates metav1.Condition, so that a bad
// value fails here naming the field, not as a 422 for the whole apply; errors
// wrap ErrInvalidInput. Apply checks every condition again, also those written
// without SetCondition. An entry already holding cond's values is left as it
// is and not checked again.
func SetCondition(conditions *[]metav1ac.ConditionApplyConfiguration, observed []metav1.Condition, generation int64, cond metav1.Condition) error {
	if cond.LastTransitionTime.IsZero() {
		cond.LastTransitionTime = keptTransitionTime(observed, cond)
	}
	if cond.ObservedGeneration == 0 {
		cond.ObservedGeneration = generation
	}
	i := conditionIndex(*conditions, cond.Type)
	if i >= 0 && holds(&(*conditions)[i], cond) {
		return nil
	}
	if err := validateCondition(cond, nil); err != nil {
		return err
	}
	if i >= 0 {
		(*conditions)[i] = conditionAC(cond)
	} else {
		*conditions = append(*conditions, conditionAC(cond))
	}
	return nil
}

// conditionIndex returns the index of condType's condition, or -1.
func conditionIndex(conditions []metav1ac.ConditionApplyConfiguration, condType string) int {
	for i := range conditions {
		if t := conditions[i].Type; t != nil && sameType(*t, condType) {
			return i
		}
	}
	return -1
}

// sameType compares condition types by length and last byte first, which tell
// most of a reconcile's types apart without a call.
func sameType(a, b string) bool {
	n := len(a)
	return n == len(b) && (n == 0 || a[n-1] == b[n-1]) && a == b
}

// keptTransitionTime is the lastTransitionTime of the last observed condition
// of cond's type and status that has one, else now (the clock read only then).
func keptTransitionTime(observed []metav1.Condition, cond metav1.Condition) metav1.Time {
	for i := len(observed) - 1; i >= 0; i-- {
		if o := &observed[i]; sameType(o.Type, cond.Type) && o.Status == cond.Status && !o.LastTransitionTime.IsZero() {
			return o.LastTransitionTime
		}
	}
	return metav1.NewTime(time.Now().Truncate(time.Second))
}

// holds reports whether ac states every field of cond as they encode (times to
// the second), sparing a steady reconcile a copy per condition.
func holds(ac *metav1ac.ConditionApplyConfiguration, cond metav1.Condition) bool {
	return ac.Status != nil && *ac.Status == cond.Status &&
		ac.Reason != nil && *ac.Reason == cond.Reason &&
		ac.Message != nil && *ac.Message == cond.Message &&
		ac.ObservedGeneration != nil && *ac.ObservedGeneration == cond.ObservedGeneration &&
		ac.LastTransitionTime != nil && ac.LastTransitionTime.Unix() == cond.LastTransitionTime.Unix()
}

// conditionAC is cond's apply configuration, its pointers into one allocation
// rather than one each: reconciles set conditions by the dozen.
func conditionAC(cond metav1.Condition) metav1ac.ConditionApplyConfiguration {
	v := &conditionValues{
		typ: cond.Type, status: string(cond.Status), reason: cond.Reason, message: cond.Message,
		observedGeneration: cond.ObservedGeneration, lastTransitionTime: cond.LastTransitionTime,
	}
	return metav1ac.ConditionApplyConfiguration{
		Type: &v.typ, Status: (*metav1.ConditionStatus)(&v.status), Reason: &v.reason, Message: &v.message,
		ObservedGeneration: &v.observedGeneration, LastTransitionTime: &v.lastTransitionTime,
	}
}

// GetCondition returns the condition of condType in an apply configuration's
// conditions, or nil.
func GetCondition(conditions []metav1ac.ConditionApplyConfiguration, condType string) *metav1ac.ConditionApplyConfiguration {
	if i := conditionIndex(conditions, condType); i >= 0 {
		return &conditions[i]
	}
	return nil
}
