// Package plugin registers the statuswrite and statusfunc analyzers with
// golangci-lint's module plugin system, as the linter "statusapply". Build a
// golangci-lint that includes it with `golangci-lint custom` and the
// .custom-gcl.yml of the analyzers module (see its README.md; offline, with
// its hack/custom-gcl.sh), then enable it:
//
//	version: "2"
//	linters:
//	  enable:
//	    - statusapply
//	  settings:
//	    custom:
//	      statusapply:
//	        type: module
//	        description: status writes to move to statusapply, and status functions with side effects
package plugin

import (
	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/statusapply/statusapply/analyzers/statusfunc"
	"github.com/statusapply/statusapply/analyzers/statuswrite"
)

// Name is the linter's name in golangci-lint's configuration.
const Name = "statusapply"

func init() {
	register.Plugin(Name, New)
}

// New returns the plugin. It takes no settings.
func New(any) (register.LinterPlugin, error) {
	return linter{}, nil
}

type linter struct{}

// BuildAnalyzers returns the analyzers the linter runs.
func (linter) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{statuswrite.Analyzer, statusfunc.Analyzer}, nil
}

// GetLoadMode asks for type information: both analyzers resolve callees and
// types, and statuswrite reads facts about the packages declaring them.
func (linter) GetLoadMode() string {
	return register.LoadModeTypesInfo
}
