package statuswrite_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/statusapply/statusapply/analyzers/statuswrite"
)

func testdata(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// withFlag sets one of the analyzer's flags for the test.
func withFlag(t *testing.T, name string) {
	t.Helper()
	if err := statuswrite.Analyzer.Flags.Set(name, "true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := statuswrite.Analyzer.Flags.Set(name, "false"); err != nil {
			t.Error(err)
		}
	})
}

// TestStatusWrites covers each kind of whole-list write (controller-runtime,
// generated clientsets, the dynamic client, merge patches whose list changed
// since the snapshot, through direct writes, setters and functions of this
// and other packages, a reassigned patch variable, a patch sent by a
// function it is handed to) and the look-alikes that are not reported:
// merge patches of scalars, of the spec or metadata, empty ones, raw ones
// without lists, applies, other subresources; and, without their flags,
// helper-managed and skipped writes.
func TestStatusWrites(t *testing.T) {
	analysistest.Run(t, testdata(t), statuswrite.Analyzer, "example.com/statuswrite")
}

// TestHelpers checks, with -helpers, the Patch of Cluster API's (current
// and deprecated) and Flux's helpers when the status is touched before it,
// and not after changes of the spec or finalizers alone.
func TestHelpers(t *testing.T) {
	withFlag(t, statuswrite.FlagHelpers)
	analysistest.Run(t, testdata(t), statuswrite.Analyzer, "example.com/statuswritehelpers")
}

// TestSkipped checks, with -skipped, that the status writes whose patch or
// data cannot be followed are reported as such, and analyzed ones are not.
func TestSkipped(t *testing.T) {
	withFlag(t, statuswrite.FlagSkipped)
	analysistest.Run(t, testdata(t), statuswrite.Analyzer, "example.com/statuswriteskipped")
}

// TestSkipTests checks that -skiptests leaves _test.go files out, and that
// without it they are reported.
func TestSkipTests(t *testing.T) {
	analysistest.Run(t, testdata(t), statuswrite.Analyzer, "example.com/statuswritetestsall")
	withFlag(t, statuswrite.FlagSkipTests)
	analysistest.Run(t, testdata(t), statuswrite.Analyzer, "example.com/statuswritetests")
}

// TestEditFix checks the fix of mechanical mutate-then-patch blocks against
// the golden file (the field manager a constant the user defines), and that
// blocks that are not mechanical get none.
func TestEditFix(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, testdata(t), statuswrite.Analyzer, "example.com/statuswritefix")
}
