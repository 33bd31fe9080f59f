package shadow_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/shadow"
	"github.com/statusapply/statusapply/ssa"
)

// A team moving a status function from merge patches to statusapply runs the
// new writer in shadow mode beside the legacy one: its batch writes nothing
// and reports where it would write something else. Once the divergence has
// stayed at zero, shadow is turned off and the new writer writes.
func ExampleMode_Option() {
	var (
		ctx     = context.Background()
		applier *ssa.Applier     // the process's Applier
		w       *v1alpha1.Widget // as the reconcile observed it
		on      = true           // a flag, flipped once divergence stays at zero
	)
	// Once per process: shadow mode registers its metrics.
	mode, err := shadow.New(shadow.Options{
		OnDivergence: func(_ context.Context, d batcher.Divergence) {
			fmt.Println(d.Target, "would change", d)
		},
	})
	if err != nil {
		return
	}
	// Once per reconcile.
	var opts []batcher.Option
	if on {
		opts = append(opts, mode.Option())
	}
	b := batcher.New(applier, opts...)
	_ = batcher.EditStatus(b, w, "widgets-readiness", func(o *v1alpha1.Widget) error {
		meta.SetStatusCondition(&o.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up"})
		return nil
	})
	// In shadow mode: one dry run, compared with the live object, and nothing
	// written; the divergence is also logged and counted in
	// statusapply_shadow_divergences_total.
	_ = b.Flush(ctx)
}
