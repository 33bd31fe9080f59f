package conflicts

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/ownership"
)

// Conflict is one contested field: a field the applying manager tried to
// change that another field manager owns.
//
// The owner is identified the way the API server keys managedFields: by
// manager name, operation, subresource and, for Update owners, apiVersion. A
// manager that applied and also updated the same object has two entries and
// can own different fields through each.
type Conflict struct {
	// Manager is the name of the field manager that owns the field.
	Manager string
	// Operation is how the owner last wrote the field: Apply for server-side
	// apply, Update for create, update and patch (including the synthetic
	// before-first-apply owner).
	Operation metav1.ManagedFieldsOperationType
	// Subresource is the subresource the owner wrote through ("status"), or ""
	// for the main resource.
	Subresource string
	// APIVersion is the apiVersion an Update owner wrote with. The server does
	// not report it for Apply owners.
	APIVersion string
	// Path is the contested field.
	Path fieldpath.Path
	// ConditionType is the type of the status condition Path lies in, or "" when
	// Path is not under .status.conditions[type=...] (see
	// ownership.ConditionTypeAt).
	ConditionType string
}

// Owner describes the owning manager for people, e.g. `legacy (Update)` or
// `a (Apply, subresource status)`.
func (c Conflict) Owner() string {
	var b strings.Builder
	b.WriteString(c.Manager)
	if c.Operation != "" {
		b.WriteString(" (")
		b.WriteString(string(c.Operation))
		if c.Subresource != "" {
			b.WriteString(", subresource ")
			b.WriteString(c.Subresource)
		}
		b.WriteString(")")
	}
	return b.String()
}

// String is the conflict in one line: the field and its owner.
func (c Conflict) String() string {
	return fmt.Sprintf("%s owned by %s", c.Path, c.Owner())
}

// newConflict fills in the derived fields of a conflict.
func newConflict(owner Conflict, path fieldpath.Path) Conflict {
	owner.Path = path
	owner.ConditionType, _ = ownership.ConditionTypeAt(path)
	return owner
}
