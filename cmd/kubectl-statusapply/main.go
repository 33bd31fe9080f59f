// Command kubectl-statusapply is statusapply as a kubectl plugin: with this
// binary on PATH, `kubectl statusapply owners widgets` runs it. It differs
// from cmd/statusapply only in the name its help shows.
package main

import (
	"os"

	"github.com/statusapply/statusapply/cmd/internal/cli"
)

func main() {
	os.Exit(cli.Execute(cli.NewPluginCommand()))
}
