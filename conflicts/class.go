package conflicts

import (
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Class is what kind of failure an apply met, which decides what a writer can
// do about it.
type Class int

const (
	// ClassNone is a nil error: the apply succeeded.
	ClassNone Class = iota
	// ClassOther is any error that is none of the classes below, including
	// transport errors and cancelled contexts.
	ClassOther
	// ClassNotFound is a 404: the object is gone (or not created yet).
	ClassNotFound
	// ClassStale is a 409 Conflict without field-manager causes: an
	// optimistic-lock apply carried a resourceVersion the object has moved past
	// ("the object has been modified"). Re-read and decide again.
	ClassStale
	// ClassFieldManagerConflict is a 409 whose causes (or, without causes, whose
	// message) name fields another field manager owns. Re-sending the same apply
	// cannot succeed; a Policy decides.
	ClassFieldManagerConflict
	// ClassInvalid is a 422: the apply failed validation; the status's
	// Details.Causes name the fields.
	ClassInvalid
	// ClassForbidden is a 403: RBAC does not allow the apply (apply to an
	// existing object needs patch, on <resource>/status for status).
	ClassForbidden
)

// String is the class's name, for logs and metrics labels.
func (c Class) String() string {
	switch c {
	case ClassNone:
		return "None"
	case ClassOther:
		return "Other"
	case ClassNotFound:
		return "NotFound"
	case ClassStale:
		return "Stale"
	case ClassFieldManagerConflict:
		return "FieldManagerConflict"
	case ClassInvalid:
		return "Invalid"
	case ClassForbidden:
		return "Forbidden"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Classify returns the class of an error returned by an apply. err may wrap
// API errors with %w or join them with errors.Join; every API status in the
// tree is classified and the most severe class wins, in the order of the
// constants above (ClassForbidden first, then ClassInvalid,
// ClassFieldManagerConflict, ClassStale, ClassNotFound). An error holding no
// API status is ClassOther; nil is ClassNone.
func Classify(err error) Class {
	if err == nil {
		return ClassNone
	}
	worst := ClassOther
	walkStatuses(err, func(s metav1.Status) bool {
		if c := classOf(s); c > worst {
			worst = c
		}
		return true
	})
	return worst
}

// classOf classifies one API status by its reason, falling back to its code.
func classOf(s metav1.Status) Class {
	switch {
	case s.Reason == metav1.StatusReasonConflict || (s.Reason == "" && s.Code == http.StatusConflict):
		if isFieldManagerConflict(s) {
			return ClassFieldManagerConflict
		}
		return ClassStale
	case s.Reason == metav1.StatusReasonNotFound || (s.Reason == "" && s.Code == http.StatusNotFound):
		return ClassNotFound
	case s.Reason == metav1.StatusReasonInvalid || (s.Reason == "" && s.Code == http.StatusUnprocessableEntity):
		return ClassInvalid
	case s.Reason == metav1.StatusReasonForbidden || (s.Reason == "" && s.Code == http.StatusForbidden):
		return ClassForbidden
	}
	return ClassOther
}

// isFieldManagerConflict tells a field-manager conflict from a stale
// resourceVersion: both are 409 Conflict, only the former has
// FieldManagerConflict causes or the server's "Apply failed with" message.
func isFieldManagerConflict(s metav1.Status) bool {
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == metav1.CauseTypeFieldManagerConflict {
				return true
			}
		}
	}
	return strings.HasPrefix(s.Message, "Apply failed with ")
}

// walkStatuses visits the API statuses in err's tree depth first, in the order
// errors.As would find them, until visit returns false. A node that is an API
// status is not descended into.
func walkStatuses(err error, visit func(metav1.Status) bool) bool {
	if err == nil {
		return true
	}
	if s, ok := err.(apierrors.APIStatus); ok {
		return visit(s.Status())
	}
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return walkStatuses(u.Unwrap(), visit)
	}
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range u.Unwrap() {
			if !walkStatuses(e, visit) {
				return false
			}
		}
	}
	return true
}

// findStatus returns the first API status in err's tree that match accepts.
func findStatus(err error, match func(metav1.Status) bool) (metav1.Status, bool) {
	var found metav1.Status
	ok := false
	walkStatuses(err, func(s metav1.Status) bool {
		if match(s) {
			found, ok = s, true
			return false
		}
		return true
	})
	return found, ok
}
