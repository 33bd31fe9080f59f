// Package depweight checks what a controller pays in dependencies for using
// statusapply: the packages that importing ssa, batcher, ctrlbatch and
// schemas (its cluster source) adds to a controller-runtime controller. The
// offline CRD builder (schemas/crdschema) links much of the API server and is
// left out on purpose: only its users pay for it.
package depweight

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// maxAdded is how many packages statusapply may add to a controller that
// already imports controller-runtime's client, manager and reconcile.
const maxAdded = 40

const module = "github.com/statusapply/statusapply"

// deps lists the packages pkgs import, themselves and the standard library
// included, as a program importing them all would link them.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", strings.Join(pkgs, " "), err, stderr)
	}
	list := strings.Fields(string(out))
	slices.Sort(list)
	return list
}

func TestDependencyWeight(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	library := deps(t, module+"/ssa", module+"/batcher", module+"/ctrlbatch", module+"/schemas")
	controller := deps(t, "sigs.k8s.io/controller-runtime/pkg/client", "sigs.k8s.io/controller-runtime/pkg/manager",
		"sigs.k8s.io/controller-runtime/pkg/reconcile")
	var added []string
	for _, p := range library {
		if _, found := slices.BinarySearch(controller, p); !found {
			added = append(added, p)
		}
	}
	fmt.Printf("dependency weight: ssa, batcher, ctrlbatch and schemas link %d packages, controller-runtime's "+
		"client, manager and reconcile %d; statusapply adds %d of its own and others' (at most %d)\n",
		len(library), len(controller), len(added), maxAdded)
	if len(added) > maxAdded {
		t.Errorf("statusapply adds %d packages to a controller-runtime controller, more than %d:\n  %s",
			len(added), maxAdded, strings.Join(added, "\n  "))
	}
}
