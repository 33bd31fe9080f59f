package ssa

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Limits of a condition's type and reason that metav1validation.
// ValidateCondition applies (see maxConditionMessage for the message).
const (
	maxConditionNameLength   = 63 // the name part of a qualified name: the type
	maxConditionReasonLength = 1024
)

// plainlyValid recognises, without building the field paths and error lists
// the full check allocates, the conditions reconciles write all the time: a
// type of ASCII letters and digits, a reason starting with a letter followed
// by letters and digits, and plain other fields (plainFields). It only ever
// says yes to conditions the full check (checkCondition, which runs
// metav1validation.ValidateCondition) accepts, as a fuzz test holds it to;
// for anything else it says no, and the full check decides.
func plainlyValid(c *metav1.Condition) bool {
	return plainFields(c) && alphanumeric(c.Type, maxConditionNameLength) &&
		alphanumeric(c.Reason, maxConditionReasonLength) && isLetter(c.Reason[0])
}

// plainFields reports whether everything of c but its type and reason passes
// ValidateCondition: a known status, a set lastTransitionTime RFC 3339 can
// print, a non-negative observedGeneration and a message within its limit.
// Those checks are cheap; the type and reason are what plainlyValid and the
// memo of valid names (validNames) each decide their own way.
func plainFields(c *metav1.Condition) bool {
	switch c.Status {
	case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
	default:
		return false
	}
	return !c.LastTransitionTime.IsZero() && printable(c.LastTransitionTime) && c.ObservedGeneration >= 0 &&
		len(c.Message) <= maxConditionMessage
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
