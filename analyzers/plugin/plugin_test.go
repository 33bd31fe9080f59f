package plugin_test

import (
	"testing"

	"github.com/golangci/plugin-module-register/register"

	"github.com/statusapply/statusapply/analyzers/plugin"
)

// TestRegistered checks what golangci-lint finds under the linter's name.
func TestRegistered(t *testing.T) {
	newPlugin, err := register.GetPlugin(plugin.Name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(nil)
	if err != nil {
		t.Fatal(err)
	}
	as, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
	}
	if len(names) != 2 || names[0] != "statuswrite" || names[1] != "statusfunc" {
		t.Errorf("analyzers %v, want [statuswrite statusfunc]", names)
	}
	if m := p.GetLoadMode(); m != register.LoadModeTypesInfo {
		t.Errorf("load mode %q, want %q", m, register.LoadModeTypesInfo)
	}
}
