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

// TestStatusWrites covers each kind of report and the look-alikes that are
// not reported: a merge patch of the spec, server-side applies, another
// subresource, an Update of the object itself.
func TestStatusWrites(t *testing.T) {
	analysistest.Run(t, testdata(t), statuswrite.Analyzer, "example.com/statuswrite")
}

// TestEditFix checks the fix of mechanical mutate-then-patch blocks against
// the golden file, and that blocks that are not mechanical get none.
func TestEditFix(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, testdata(t), statuswrite.Analyzer, "example.com/statuswritefix")
}
