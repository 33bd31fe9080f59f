package widgets

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	"github.com/statusapply/statusapply/ssa"
)

// NewApplier returns an Applier writing through c that knows the example
// API's list and map markers, from the generated type converter of c's
// scheme. Its counters are kept out of controller-runtime's global registry,
// which every Applier of a test process or of the demo would otherwise feed;
// opts come last and so win, so WithRegisterer in opts counts elsewhere.
func NewApplier(c client.Client, opts ...ssa.Option) (*ssa.Applier, error) {
	return ssa.NewApplier(c, append([]ssa.Option{
		ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(c.Scheme())),
		ssa.WithRegisterer(nil),
	}, opts...)...)
}
