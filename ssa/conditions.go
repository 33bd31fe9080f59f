package ssa

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// SetCondition sets the condition of cond.Type in conditions, an apply
// configuration's list of metav1 conditions, replacing an entry of that type
// if there is one. observed is the object's current conditions and generation
// its metadata.generation:
//
//   - lastTransitionTime is kept from the observed condition of the same type
//     when its status is unchanged, and set to now when the status changed or
//     the type is new (a lastTransitionTime given in cond wins);
//   - observedGeneration is set to generation unless cond sets it.
//
// The condition is validated the way the API server validates metav1.Condition
// (type and reason format, status True/False/Unknown, message length) so that a
// bad value fails here, naming the field, and not as a 422 for the whole apply.
// Apply checks every condition of an intent again with the same rules, which
// also covers conditions written without SetCondition. Errors wrap
// ErrInvalidInput. A condition conditions already holds with cond's values is
// left as it is, and not checked again: it was checked when it was set, or
// came from what the API server accepted, or (written without SetCondition)
// is checked by Apply. A reconcile that changes nothing sets only such
// conditions.
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

// conditionIndex returns the index of the condition of condType in
// conditions, or -1.
func conditionIndex(conditions []metav1ac.ConditionApplyConfiguration, condType string) int {
	for i := range conditions {
		if t := conditions[i].Type; t != nil && sameType(*t, condType) {
			return i
		}
	}
	return -1
}

// sameType reports whether a and b, condition types, are equal. It compares
// their lengths and last bytes before the rest: a status function looks its
// type up among the dozens a reconcile sets, which mostly differ in length or
// in their last byte (Ready and Available, Step01 and Step02), so that most
// types it passes over cost two comparisons and no call.
func sameType(a, b string) bool {
	n := len(a)
	return n == len(b) && (n == 0 || a[n-1] == b[n-1]) && a == b
}

// keptTransitionTime is cond's lastTransitionTime: that of the last observed
// condition of cond's type and status that has one, else now. The clock is
// read only when it is needed: most reconciles set conditions whose status
// did not change.
func keptTransitionTime(observed []metav1.Condition, cond metav1.Condition) metav1.Time {
	for i := len(observed) - 1; i >= 0; i-- {
		if o := &observed[i]; sameType(o.Type, cond.Type) && o.Status == cond.Status && !o.LastTransitionTime.IsZero() {
			return o.LastTransitionTime
		}
	}
	return metav1.NewTime(time.Now().Truncate(time.Second))
}

// holds reports whether ac already states every field of cond as cond has
// it, as they encode (times to the second): replacing it would change
// nothing. A reconcile that changes nothing sets every condition it already
// holds, so this saves an allocation per condition on the steady path.
func holds(ac *metav1ac.ConditionApplyConfiguration, cond metav1.Condition) bool {
	return ac.Status != nil && *ac.Status == cond.Status &&
		ac.Reason != nil && *ac.Reason == cond.Reason &&
		ac.Message != nil && *ac.Message == cond.Message &&
		ac.ObservedGeneration != nil && *ac.ObservedGeneration == cond.ObservedGeneration &&
		ac.LastTransitionTime != nil && ac.LastTransitionTime.Unix() == cond.LastTransitionTime.Unix()
}

// conditionAC is the apply configuration of cond with every field set, its
// pointers into one allocation rather than one each (as the generated With
// builders do): reconciles set conditions by the dozen.
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

// RemoveCondition removes the condition of condType from an apply
// configuration's conditions and reports whether there was one. Applying the
// result releases the condition: the API server deletes it unless another
// manager owns it too. An apply configuration holds only what its manager
// owns, so a condition another manager owns is not there: RemoveCondition
// reports false and nothing changes on the object, where an Edit that removes
// it is refused with batcher.ErrRemovesForeignField.
func RemoveCondition(conditions *[]metav1ac.ConditionApplyConfiguration, condType string) bool {
	i := conditionIndex(*conditions, condType)
	if i < 0 {
		return false
	}
	*conditions = append((*conditions)[:i], (*conditions)[i+1:]...)
	return true
}

// FindCondition returns the condition of condType in an apply configuration's
// conditions, or nil.
func FindCondition(conditions []metav1ac.ConditionApplyConfiguration, condType string) *metav1ac.ConditionApplyConfiguration {
	if i := conditionIndex(conditions, condType); i >= 0 {
		return &conditions[i]
	}
	return nil
}
