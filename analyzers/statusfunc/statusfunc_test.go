package statusfunc_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/statusapply/statusapply/analyzers/statusfunc"
)

// TestStatusFuncs covers each report (requests, captured writes, kept
// parameters, goroutines, channels, time.Now, field managers) and the
// look-alikes that are not reported: a read-only status function, reads of
// captured variables, writes to the function's own locals, constant valid
// managers, and requests and time.Now outside status functions.
func TestStatusFuncs(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, statusfunc.Analyzer, "example.com/statusfunc")
}

// TestSkipTests checks that -skiptests leaves _test.go files out and still
// checks the package's other files, and that without it they are checked.
func TestSkipTests(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, statusfunc.Analyzer, "example.com/statusfunctestsall")
	if err := statusfunc.Analyzer.Flags.Set(statusfunc.FlagSkipTests, "true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := statusfunc.Analyzer.Flags.Set(statusfunc.FlagSkipTests, "false"); err != nil {
			t.Error(err)
		}
	})
	analysistest.Run(t, dir, statusfunc.Analyzer, "example.com/statusfunctests")
}
