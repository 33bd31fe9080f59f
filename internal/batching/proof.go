package batching

import "context"

type proofKey struct{}

// WithProof returns ctx carrying check, which an Applier calls before every
// request it makes with ctx (an apply or a read) and after every response it
// would act on (a refused or failed apply, a read): an error from check stops
// the Apply at that point, and is returned. A fence (package ctrlbatch) uses it to check its proof against
// the clock at each step, where a timer set before the process was stopped
// would fire only after the step.
func WithProof(ctx context.Context, check func() error) context.Context {
	return context.WithValue(ctx, proofKey{}, check)
}

// CheckProof runs the check WithProof put in ctx; nil without one.
func CheckProof(ctx context.Context) error {
	if check, ok := ctx.Value(proofKey{}).(func() error); ok {
		return check()
	}
	return nil
}
