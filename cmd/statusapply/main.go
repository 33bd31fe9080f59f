// Command statusapply shows and manages who writes which part of an object's
// status. The same command tree is the kubectl plugin `kubectl statusapply`
// (see cmd/kubectl-statusapply).
package main

import (
	"os"

	"github.com/statusapply/statusapply/cmd/internal/cli"
)

func main() {
	os.Exit(cli.Execute(cli.NewRootCommand()))
}
