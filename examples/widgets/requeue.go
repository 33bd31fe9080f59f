package widgets

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/statusapply/statusapply/conflicts"
)

// requeueOnConflict turns a 409 from the reconcile's flush into a requeue
// hint. Deferred before the batch's FlushInto, it runs after it:
//
//	b := batcher.New(r.Applier)
//	defer requeueOnConflict(ctx, &res, &err)
//	defer b.FlushInto(ctx, &err)
//
// Returning the error would make controller-runtime ignore the Result and
// retry on its rate limiter's schedule, which is wrong both ways: a stale
// resourceVersion is worth retrying at once, a field another manager owns is
// not worth retrying for a while (see conflicts.RequeueAfter). The error is
// logged, not lost.
func requeueOnConflict(ctx context.Context, res *ctrl.Result, errp *error) {
	after, ok := conflicts.RequeueAfter(*errp)
	if !ok {
		return
	}
	log.FromContext(ctx).Info("status apply met a conflict; requeueing", "after", after, "error", (*errp).Error())
	*res, *errp = ctrl.Result{RequeueAfter: after}, nil
}
