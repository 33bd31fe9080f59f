package fleet

import (
	"errors"
	"fmt"
)

// ErrInvalidPlan reports a migration Plan that cannot be carried out, such as
// an empty manager name or a target that is itself a legacy manager.
var ErrInvalidPlan = errors.New("invalid migration plan")

// ErrOrphanedFields reports a migration that would leave fields on the object
// that no manager owns, such as fields a legacy manager holds in an API
// version other than the one its apply successor uses. Rewrite refuses such
// a result: an unowned condition is deleted as a side effect the next time
// another manager removes its own last condition.
var ErrOrphanedFields = errors.New("the migration would leave fields without an owner")

// ErrPlanMismatch reports a Plan that names managers or condition types the
// selected objects do not have, or hands fields to a legacy writer's name
// (see CheckPlan). It wraps ErrInvalidPlan.
var ErrPlanMismatch = fmt.Errorf("%w: it does not match the objects", ErrInvalidPlan)

// ErrAPIVersionMismatch reports legacy fields to be merged into an apply
// manager's entry recorded in another API version: field sets of two
// versions cannot simply be unioned. Apply once in the legacy version first.
var ErrAPIVersionMismatch = errors.New("apply entry in another API version")
