package ssa

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/utils/ptr"

	"github.com/statusapply/statusapply/internal/conditionac"
)

// conditionsPath is where conditions live; errors name fields under it.
var conditionsPath = field.NewPath("status", "conditions")

// validateCondition runs apimachinery's own condition rules (not a copy) plus
// the type limit of the CRD schema they miss, the stricter where they differ, so
// that what it accepts is valid on any kind. readErrs, fields that could not be
// read, replace the rules' errors for the same fields.
func validateCondition(cond metav1.Condition, readErrs field.ErrorList) error {
	// Checked as the API server reads it, whichever form it came in.
	cond.Message = asEncoded(cond.Message)
	errs := readErrs
	at := conditionsPath.Key(cond.Type)
	for _, e := range metav1validation.ValidateCondition(cond, at) {
		if !hasErrorAt(readErrs, e.Field) {
			errs = append(errs, e)
		}
	}
	if len(cond.Type) > maxConditionType && !hasErrorAt(errs, at.Child("type").String()) {
		errs = append(errs, field.TooLong(at.Child("type"), "", maxConditionType))
	}
	if !printable(cond.LastTransitionTime) {
		errs = append(errs, field.Invalid(at.Child("lastTransitionTime"), cond.LastTransitionTime.UTC().Format(time.RFC3339),
			"must be in the years 0000 to 9999, which RFC 3339 can print"))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: condition %q: %w", ErrInvalidInput, cond.Type, errs.ToAggregate())
}

// asEncoded returns s as JSON carries it: each byte that is not UTF-8 becomes
// U+FFFD, three bytes, so a message of such bytes triples in length. A message
// is the one free-text field; the other fields' patterns refuse such bytes.
func asEncoded(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s)) // a rune per invalid byte, as encoding/json writes them
}

func hasErrorAt(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if e.Field == path {
			return true
		}
	}
	return false
}

// validateConditionItems checks an intent's conditions whoever wrote them, as
// one bad condition makes the API server refuse the whole apply. Items equal
// to owned's of their type were accepted before and are not checked again.
func validateConditionItems(items, owned any) error {
	list, ok := items.([]any)
	if !ok {
		return invalidf("%s: must be a list, not %T", conditionsPath, items)
	}
	ownedByType := map[string]any{}
	ownedList, _ := owned.([]any)
	for _, item := range ownedList {
		if m, ok := item.(map[string]any); ok {
			if t, ok := m["type"].(string); ok {
				ownedByType[t] = m
			}
		}
	}
	var checks conditionChecks
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			checks.errs = append(checks.errs, invalidf("%s: must be an object, not %T", conditionsPath.Index(i), item))
			continue
		}
		cond, readErrs := conditionFrom(m)
		checks.check(cond, readErrs, func() bool {
			prev, ok := ownedByType[cond.Type]
			return ok && equalContent(m, prev)
		})
	}
	return errors.Join(checks.errs...)
}

// validateACConditions is validateConditionItems for typed conditions.
func validateACConditions(conds, owned []metav1ac.ConditionApplyConfiguration) error {
	ownedByType := make(map[string]*metav1ac.ConditionApplyConfiguration, len(owned))
	for i := range owned {
		ownedByType[ptr.Deref(owned[i].Type, "")] = &owned[i]
	}
	var checks conditionChecks
	for i := range conds {
		cond, readErrs := conditionFromAC(&conds[i])
		checks.check(cond, readErrs, func() bool {
			prev, ok := ownedByType[cond.Type]
			return ok && conditionac.Equal(&conds[i], prev)
		})
	}
	return errors.Join(checks.errs...)
}

// conditionChecks validates one intent's conditions, whatever their form.
type conditionChecks struct {
	seen map[string]struct{}
	errs []error
}

// check validates cond unless alreadyOwned (the API server accepted it then);
// a second condition of one type is refused, as ValidateConditions does.
func (c *conditionChecks) check(cond metav1.Condition, readErrs field.ErrorList, alreadyOwned func() bool) {
	if c.seen == nil {
		c.seen = map[string]struct{}{}
	}
	if _, dup := c.seen[cond.Type]; dup {
		readErrs = append(readErrs, field.Duplicate(conditionsPath.Key(cond.Type), cond.Type))
	} else if alreadyOwned() {
		c.seen[cond.Type] = struct{}{}
		return
	}
	c.seen[cond.Type] = struct{}{}
	if err := validateCondition(cond, readErrs); err != nil {
		c.errs = append(c.errs, err)
	}
}

// conditionFromAC reads a condition apply configuration; a missing message is
// reported as conditionFrom reports it.
func conditionFromAC(c *metav1ac.ConditionApplyConfiguration) (cond metav1.Condition, errs field.ErrorList) {
	cond.Type = ptr.Deref(c.Type, "")
	cond.Status = ptr.Deref(c.Status, "")
	cond.Reason = ptr.Deref(c.Reason, "")
	cond.ObservedGeneration = ptr.Deref(c.ObservedGeneration, 0)
	if c.LastTransitionTime != nil {
		cond.LastTransitionTime = *c.LastTransitionTime
	}
	if c.Message == nil {
		errs = append(errs, field.Required(conditionsPath.Key(cond.Type).Child("message"), ""))
	} else {
		cond.Message = *c.Message
	}
	return cond, errs
}

// printable reports whether t survives JSON: RFC 3339 has four-digit years, and
// any other year prints as a string the API server refuses.
func printable(t metav1.Time) bool {
	y := t.UTC().Year()
	return t.IsZero() || 0 <= y && y <= 9999
}

// maxConditionType is the MaxLength of type in metav1.Condition's CRD schema,
// one byte under what ValidateCondition alone allows.
const maxConditionType = 316

// conditionFrom reads a condition from unstructured content, reporting in errs
// (and leaving zero) a field of the wrong type, or a lastTransitionTime that
// the API server's format check or metav1.Time would refuse.
func conditionFrom(m map[string]any) (cond metav1.Condition, errs field.ErrorList) {
	typ, typeOK := m["type"].(string)
	at := conditionsPath.Key(typ)
	if v := m["type"]; v != nil && !typeOK {
		errs = append(errs, field.Invalid(at.Child("type"), v, "must be a string"))
	}
	cond.Type = typ
	str := func(name string) string {
		v := m[name]
		s, ok := v.(string)
		if v != nil && !ok {
			errs = append(errs, field.Invalid(at.Child(name), v, "must be a string"))
		}
		return s
	}
	cond.Status = metav1.ConditionStatus(str("status"))
	cond.Reason = str("reason")
	cond.Message = str("message")
	if _, has := m["message"]; !has {
		// metav1.Condition requires the field (its schema says so) although
		// ValidateCondition accepts an empty message: "" is fine, absent is not.
		errs = append(errs, field.Required(at.Child("message"), ""))
	}
	switch v := m["observedGeneration"].(type) {
	case nil:
	case int64:
		cond.ObservedGeneration = v
	case int:
		cond.ObservedGeneration = int64(v)
	case int32:
		cond.ObservedGeneration = int64(v)
	case float64:
		// float64(math.MaxInt64) is 2^63, one past the largest int64.
		if v != math.Trunc(v) || v < math.MinInt64 || v >= math.MaxInt64 {
			errs = append(errs, field.Invalid(at.Child("observedGeneration"), v, "must be an integer"))
			break
		}
		cond.ObservedGeneration = int64(v)
	default:
		errs = append(errs, field.Invalid(at.Child("observedGeneration"), v, "must be an integer"))
	}
	if s := str("lastTransitionTime"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil || !strfmt.IsDateTime(s) {
			errs = append(errs, field.Invalid(at.Child("lastTransitionTime"), s, "must be an RFC 3339 time"))
		} else {
			cond.LastTransitionTime = metav1.NewTime(t)
		}
	}
	return cond, errs
}
