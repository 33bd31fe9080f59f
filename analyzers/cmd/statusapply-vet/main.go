// Command statusapply-vet runs the statuswrite and statusfunc analyzers as a
// go vet tool. From a checkout of statusapply (see the analyzers' README.md):
//
//	cd analyzers && go build -o ../bin/statusapply-vet ./cmd/statusapply-vet
//	go vet -vettool=$PWD/bin/statusapply-vet ./...
//
// or, once the analyzers module is published,
//
//	go install github.com/statusapply/statusapply/analyzers/cmd/statusapply-vet@latest
//
// go vet's flags apply: -json prints the findings as JSON (and exits 0),
// -statuswrite or -statusfunc runs one analyzer. The tool's own flags:
// -skiptests=true (with go vet, spelled with its value) leaves files ending in _test.go out of both analyzers' reports;
// -statuswrite.helpers adds the helper-managed writes (Cluster API's and
// Flux's patch helpers); -statuswrite.skipped adds, under the category
// "skipped", the status writes the analyzer could not follow. go vet has no
// -fix: apply the suggested fixes with Go 1.26's
// `go fix -fixtool=$(which statusapply-vet) ./...`, gopls or golangci-lint
// --fix. `statusapply vet PATTERNS` runs the same tool.
package main

import (
	"flag"
	"strconv"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/statusapply/statusapply/analyzers/statusfunc"
	"github.com/statusapply/statusapply/analyzers/statuswrite"
)

func main() {
	analyzers := []*analysis.Analyzer{statuswrite.Analyzer, statusfunc.Analyzer}
	flag.Var(skipTests{statuswrite.Analyzer, statusfunc.Analyzer}, "skiptests", "do not report in files ending in _test.go (both analyzers)")
	unitchecker.Main(analyzers...)
}

// skipTests is the -skiptests flag: it sets each analyzer's own skiptests
// flag, so that one flag, which go vet passes on, covers both.
type skipTests []*analysis.Analyzer

func (s skipTests) String() string { return "false" }

func (s skipTests) IsBoolFlag() bool { return true }

func (s skipTests) Set(v string) error {
	if _, err := strconv.ParseBool(v); err != nil {
		return err
	}
	for _, a := range s {
		if err := a.Flags.Set(statuswrite.FlagSkipTests, v); err != nil {
			return err
		}
	}
	return nil
}
