package statusfunc

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.com/api/v1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conditions"
)

const manager = "widgets-readiness"

// WidgetApply stands for a generated apply configuration.
type WidgetApply struct{ Phase *string }

type reconciler struct {
	c       client.Client
	last    *v1.Widget
	count   int
	updates chan string
}

var seen []*v1.Widget

func (r *reconciler) reconcile(ctx context.Context, b *batcher.Batch, w *v1.Widget, name string) {
	var captured string
	var kept *v1.Widget
	var ac *WidgetApply

	_ = batcher.EditStatus(b, w, manager, func(w *v1.Widget) error {
		var other v1.Widget
		if err := r.c.Get(ctx, "x", &other); err != nil { // want `in a status function queued with batcher\.EditStatus: a request through the client \(Get\)`
			return err
		}
		captured = w.Status.Phase // want `writes to captured, declared outside the function`
		r.count++                 // want `writes to r, declared outside the function`
		kept = w                  // want `keeps its parameter w in kept`
		seen = append(seen, w)    // want `writes to seen, declared outside the function`
		go func() {}()            // want `a go statement`
		r.updates <- "x"          // want `a channel send`
		<-r.updates               // want `a channel receive`
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
			Type:               "Ready",
			LastTransitionTime: metav1.NewTime(time.Now()), // want `calls time\.Now: statusapply sets a condition's lastTransitionTime itself`
		})
		w.Status.Conditions[0].LastTransitionTime = metav1.Now() // want `calls v1\.Now`
		return r.c.Status().Update(ctx, w)                       // want `a request through the client \(Update\)`
	})

	_ = batcher.Status(b, w, manager, func(a *WidgetApply, observed *v1.Widget) error {
		ac = a // want `keeps its parameter a in ac`
		return nil
	})

	// A named method: its receiver is shared, and it is checked like a literal.
	_ = batcher.EditObject(b, w, "widgets-labels", r.label)

	// A function through a local variable.
	edit := func(w *v1.Widget) error {
		close(r.updates) // want `closes a channel`
		return nil
	}
	_ = batcher.EditStatus(b, w, manager, edit)

	var out string
	_ = batcher.EditStatus(b, w, manager, factory("e", &out))

	// Field managers.
	computed := "widgets-" + name
	_ = batcher.EditStatus(b, w, computed, readOnly)                                                    // want `the field manager of batcher\.EditStatus is not a constant`
	_ = batcher.EditStatus(b, w, fmt.Sprintf("widgets-%s", name), readOnly)                             // want `the field manager of batcher\.EditStatus is not a constant`
	_ = batcher.EditStatus(b, w, "", readOnly)                                                          // want `the field manager of batcher\.EditStatus is refused: .*empty field manager`
	_ = batcher.Object(b, w, "bad\x01manager", func(a *WidgetApply, o *v1.Widget) error { return nil }) // want `the field manager of batcher\.Object is refused`
	_ = conditions.Status(b, w, client.Scheme(r.c), metav1.Condition{Type: "Ready"})                    // want `the field manager of conditions\.Status is not a constant`
	_ = queue(b, w, computed)                                                                           // want `the field manager of batcher\.EditStatus through queue is not a constant`
	_ = queueTwice(b, w, "bad\nmanager")                                                                // want `the field manager of batcher\.EditStatus through queue through queueTwice is refused`
	_ = queueTwice(b, w, "widgets-good")
	_, _ = kept, captured
	_ = ac
}

// queue and queueTwice hand their manager on: their callers' arguments are checked.
func queue(b *batcher.Batch, w *v1.Widget, manager string) error {
	return batcher.EditStatus(b, w, manager, readOnly)
}

func queueTwice(b *batcher.Batch, w *v1.Widget, m string) error {
	return queue(b, w, m)
}

// factory returns a status function, which is checked where it is queued.
func factory(endpoint string, out *string) batcher.Edit[*v1.Widget] {
	return func(w *v1.Widget) error {
		w.Status.Phase = endpoint
		*out = endpoint // want `writes to out, declared outside the function`
		return nil
	}
}

func (r *reconciler) label(w *v1.Widget) error {
	r.last = w // want `keeps its parameter w in r`
	return nil
}

// The look-alikes: nothing below is reported.

// readOnly reads what it is handed and what was read before it was queued,
// and writes only its own locals and its parameter.
func readOnly(w *v1.Widget) error {
	ready := 0
	for _, c := range w.Status.Conditions {
		if c.Status == "True" {
			ready++
		}
	}
	phase := "Pending"
	if ready > 0 {
		phase = "Ready"
	}
	w.Status.Phase = phase
	return nil
}

func (r *reconciler) lookAlikes(ctx context.Context, b *batcher.Batch, w *v1.Widget) error {
	var observed v1.Widget
	if err := r.c.Get(ctx, "x", &observed); err != nil { // outside a status function
		return err
	}
	replicas := observed.Spec.Replicas
	now := time.Now() // outside too: read before queuing
	_ = now
	_ = batcher.EditStatus(b, w, "widgets-readiness", readOnly)
	_ = batcher.EditStatus(b, w, manager, func(w *v1.Widget) error {
		if replicas > 0 { // reading a captured variable
			w.Status.Phase = "Scaled"
		}
		local := map[string]int{}
		local["a"]++
		func() { local["b"] = replicas }() // a nested literal writing the function's own local
		return nil
	})
	_ = batcher.Status(b, w, manager, func(a *WidgetApply, o *v1.Widget) error {
		a.Phase = &o.Status.Phase
		return nil
	})
	return conditions.Status(b, w, manager, metav1.Condition{Type: "Ready", Status: "True"})
}
