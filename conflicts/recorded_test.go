package conflicts

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Server responses recorded from kube-apiserver v1.37.2 (the envtest specs in
// test/conflicts produce them) and from the formats in k8s.io/apimachinery's
// field manager, for the parser's table tests, the fuzz seeds and the examples.

const (
	msgApplyOwner = `Apply failed with 3 conflicts: conflicts with "readiness" with subresource "status":
- .status.conditions[type="Ready"].message
- .status.conditions[type="Ready"].reason
- .status.conditions[type="Ready"].status`
	msgUpdateOwner      = `Apply failed with 1 conflict: conflict with "legacy" with subresource "status" using demo.statusapply.io/v1alpha1: .status.conditions[type="Ready"].status`
	msgBeforeFirstApply = `Apply failed with 1 conflict: conflict with "before-first-apply" with subresource "status" using demo.statusapply.io/v1alpha1: .status.conditions[type="Ready"].status`
	msgSeveral          = `Apply failed with 3 conflicts: conflicts with "legacy" with subresource "status" using demo.statusapply.io/v1alpha1:
- .status.phase
- .status.conditions[type="Synced"].status
conflicts with "readiness" with subresource "status":
- .status.conditions[type="Ready"].status`
	// msgMainResource is an apply to the main resource against an Update owner
	// that wrote with a time (the format the field manager's own tests pin).
	msgMainResource = `Apply failed with 1 conflict: conflict with "foo" using v1 at 2001-02-03T04:05:06Z: .spec.replicas`
	msgStale        = `Operation cannot be fulfilled on widgets.demo.statusapply.io "w1": the object has been modified; please apply your changes to the latest version and try again`
)

// recordedSeveral is the full status of msgSeveral, causes included.
func recordedSeveral() *apierrors.StatusError {
	return conflictStatus(msgSeveral,
		metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "readiness" with subresource "status"`, Field: `.status.conditions[type="Ready"].status`},
		metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "legacy" with subresource "status" using demo.statusapply.io/v1alpha1`, Field: `.status.phase`},
		metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "legacy" with subresource "status" using demo.statusapply.io/v1alpha1`, Field: `.status.conditions[type="Synced"].status`},
	)
}

// recordedUpdateOwner is the full status of msgUpdateOwner.
func recordedUpdateOwner() *apierrors.StatusError {
	return conflictStatus(msgUpdateOwner, metav1.StatusCause{
		Type:    metav1.CauseTypeFieldManagerConflict,
		Message: `conflict with "legacy" with subresource "status" using demo.statusapply.io/v1alpha1`,
		Field:   `.status.conditions[type="Ready"].status`,
	})
}

// recordedStale is the status of a stale resourceVersion: a Conflict without causes.
func recordedStale() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict, Message: msgStale,
		Details: &metav1.StatusDetails{Name: "w1", Group: "demo.statusapply.io", Kind: "widgets"},
	}}
}

func conflictStatus(msg string, causes ...metav1.StatusCause) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict, Message: msg,
		Details: &metav1.StatusDetails{Causes: causes},
	}}
}
