package schemas

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/ssa"
)

// MissError is returned by a converter that has no schema for an object's
// kind. It wraps ssa.ErrNoSchema.
type MissError struct {
	// GVK is the kind that has no schema.
	GVK schema.GroupVersionKind
	// Source says where the converter looked.
	Source string
	// Hint says how to provide the schema.
	Hint string
}

// Error names the kind, where it was looked for and how to provide it:
//
//	no schema for kind Sprocket (test.statusapply.io/v1) in the converter's CRDs (gears.test.statusapply.io): add its CRD ...
func (e *MissError) Error() string {
	return fmt.Sprintf("no schema for kind %s (%s) in %s: %s", e.GVK.Kind, e.GVK.GroupVersion(), e.Source, e.Hint)
}

// Unwrap returns ssa.ErrNoSchema.
func (e *MissError) Unwrap() error { return ssa.ErrNoSchema }

// clusterHint is what a miss of Cluster suggests: the CRD, or the other source.
const clusterHint = "install its CRD with the version served, or give the Applier the schema from the CRD's " +
	"manifest with ssa.WithTypeConverter(crdschema.FromCRDFiles(...))"
