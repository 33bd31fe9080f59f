package ssa

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Limits of metav1.Condition fields, as metav1validation.ValidateCondition
// applies them.
const (
	maxConditionNameLength    = 63 // the name part of a qualified name: the type
	maxConditionReasonLength  = 1024
	maxConditionMessageLength = 32 * 1024
)

// plainlyValid recognises, without building the field paths and error lists
// the full check allocates, the conditions reconciles write all the time: a
// type of ASCII letters and digits, a reason starting with a letter followed
// by letters and digits, a known status, a set lastTransitionTime, a
// non-negative observedGeneration, a message within its limit and a time
// RFC 3339 can print. It only
// ever says yes to conditions the full check (checkCondition, which runs
// metav1validation.ValidateCondition) accepts, as a fuzz test holds it to;
// for anything else it says no, and the full check decides.
func plainlyValid(c *metav1.Condition) bool {
	switch c.Status {
	case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
	default:
		return false
	}
	return alphanumeric(c.Type, maxConditionNameLength) &&
		alphanumeric(c.Reason, maxConditionReasonLength) && isLetter(c.Reason[0]) &&
		len(c.Message) <= maxConditionMessageLength &&
		c.ObservedGeneration >= 0 && !c.LastTransitionTime.IsZero() && printable(c.LastTransitionTime)
}

// alphanumeric reports whether s is 1 to limit ASCII letters and digits.
func alphanumeric(s string, limit int) bool {
	if len(s) == 0 || len(s) > limit {
		return false
	}
	for i := range len(s) {
		if b := s[i]; !isLetter(b) && (b < '0' || b > '9') {
			return false
		}
	}
	return true
}

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }
