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

// ErrAPIVersionMismatch reports fields to be moved between entries recorded
// in different API versions without the CRD's versions to translate them
// (Plan.Versions), or to destinations applying through several versions at
// once: field sets of two versions cannot simply be unioned.
var ErrAPIVersionMismatch = errors.New("apply entry in another API version")

// ErrUntranslatable reports fields a migration would have to move from one
// API version to another where the CRD's versions do not give them the same
// paths (see Versions.Translate). It wraps ErrAPIVersionMismatch. Nothing is
// written; the error names the fields and what to do.
var ErrUntranslatable = fmt.Errorf("%w: fields do not translate", ErrAPIVersionMismatch)
