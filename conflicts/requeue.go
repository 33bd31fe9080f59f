package conflicts

import "time"

const (
	// StaleRetryAfter is how soon to retry after a stale resourceVersion: the
	// object moved on, a fresh read usually succeeds at once.
	StaleRetryAfter = time.Second
	// ConflictRetryAfter is how long to wait after a field-manager conflict:
	// another writer owns the field and only it, a migration, or a person can
	// release it, so retrying quickly only adds load.
	ConflictRetryAfter = 30 * time.Second
)

// RequeueAfter suggests when a reconciler should try again after err (wrapped
// or joined errors allowed): StaleRetryAfter for a stale resourceVersion,
// ConflictRetryAfter for a field-manager conflict, and false for everything
// else (nil, or errors the controller's own rate-limited backoff should handle).
// When ok, a reconciler can log err and return ctrl.Result{RequeueAfter: d}
// with a nil error: controller-runtime ignores the Result of a reconcile that
// returns an error and applies its rate limiter's backoff instead.
func RequeueAfter(err error) (time.Duration, bool) {
	switch Classify(err) {
	case ClassStale:
		return StaleRetryAfter, true
	case ClassFieldManagerConflict:
		return ConflictRetryAfter, true
	}
	return 0, false
}
