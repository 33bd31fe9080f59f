package conflicts

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// FuzzParse feeds arbitrary text to every parser: the message parser, the
// cause parser (as message and as field) and the path parser. None may panic,
// and a path that parses must print to a string that parses to the same
// printed form.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		msgApplyOwner, msgUpdateOwner, msgBeforeFirstApply, msgSeveral, msgMainResource, msgStale,
		`conflict with "legacy" with subresource "status" using demo.statusapply.io/v1alpha1`,
		`.status.conditions[type="Ready"].status`,
		`.a[k="x",n=1,f=1.5,b=true,z=null].b[="v"][3]`,
		`.a[k="\u00e9\x00"]`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseMessage(s)
		_, _ = ParseCause(metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: s, Field: s})
		_, _ = ParseStatus(conflictStatus(s).ErrStatus)
		_ = Classify(conflictStatus(s))
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		_ = newConflict(Conflict{}, p)
		_ = removalTarget(p, nil)
		_ = removalTarget(p, fieldpath.NewSet(p))
		printed := p.String()
		again, err := ParsePath(printed)
		if err != nil {
			t.Fatalf("ParsePath(%q) printed %q, which does not parse: %v", s, printed, err)
		}
		if again.String() != printed {
			t.Fatalf("ParsePath(%q) printed %q, which re-prints as %q", s, printed, again.String())
		}
	})
}
