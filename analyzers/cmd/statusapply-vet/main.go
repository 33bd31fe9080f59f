// Command statusapply-vet runs the statuswrite and statusfunc analyzers as a
// go vet tool:
//
//	go install github.com/statusapply/statusapply/analyzers/cmd/statusapply-vet@latest
//	go vet -vettool=$(which statusapply-vet) ./...
//
// go vet's flags apply: -json prints the findings as JSON (and exits 0),
// -statuswrite or -statusfunc runs one analyzer, -fix is not supported by go
// vet (use the suggested fixes through gopls or golangci-lint --fix).
// `statusapply vet PATTERNS` runs the same tool.
package main

import (
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/statusapply/statusapply/analyzers/statusfunc"
	"github.com/statusapply/statusapply/analyzers/statuswrite"
)

func main() {
	unitchecker.Main(statuswrite.Analyzer, statusfunc.Analyzer)
}
