package ssa

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/statusapply/statusapply/internal/conditionac"
)

// SetCondition sets cond in conditions, an apply configuration's metav1
// conditions, replacing the entry of its type. observed are the object's
// current conditions and generation its metadata.generation:
//
//   - lastTransitionTime, unless cond sets it, is kept from the observed
//     condition of the same type and status, else set to now;
//   - observedGeneration is set to generation unless cond sets it; a 0 left
//     is left out, as metav1.Condition encodes it (an object read back
//     never holds a 0 there).
//
// cond is validated as the API server validates metav1.Condition, so that a bad
// value fails here naming the field, not as a 422 for the whole apply; errors
// wrap ErrInvalidInput. Apply checks every condition again, also those written
// without SetCondition. An entry already holding cond's values is left as it
// is and not checked again.
func SetCondition(conditions *[]metav1ac.ConditionApplyConfiguration, observed []metav1.Condition, generation int64, cond metav1.Condition) error {
	if cond.LastTransitionTime.IsZero() {
		// Kept from the last observed condition of cond's type and status that
		// has one, else now (the clock read only then).
		for i := len(observed) - 1; i >= 0 && cond.LastTransitionTime.IsZero(); i-- {
			if o := &observed[i]; o.Type == cond.Type && o.Status == cond.Status {
				cond.LastTransitionTime = o.LastTransitionTime
			}
		}
		if cond.LastTransitionTime.IsZero() {
			cond.LastTransitionTime = metav1.NewTime(time.Now().Truncate(time.Second))
		}
	}
	if cond.ObservedGeneration == 0 {
		cond.ObservedGeneration = generation
	}
	i := conditionac.Index(*conditions, cond.Type)
	if i >= 0 && conditionac.Holds(&(*conditions)[i], &cond) {
		return nil
	}
	if err := validateCondition(cond, nil); err != nil {
		return err
	}
	if i >= 0 {
		(*conditions)[i] = conditionac.Of(cond)
	} else {
		*conditions = append(*conditions, conditionac.Of(cond))
	}
	return nil
}

// GetCondition returns the condition of condType in an apply configuration's
// conditions, or nil.
func GetCondition(conditions []metav1ac.ConditionApplyConfiguration, condType string) *metav1ac.ConditionApplyConfiguration {
	if i := conditionac.Index(conditions, condType); i >= 0 {
		return &conditions[i]
	}
	return nil
}
