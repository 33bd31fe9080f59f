package cli

import (
	"errors"
	"fmt"
	"strings"
)

// target is what a command's resource arguments name: one resource type and
// either some object names or, with none, every object of the type.
type target struct {
	// Resource is the type as the user typed it: widgets, widget, wd,
	// widgets.demo.statusapply.io or Widget.
	Resource string
	// Names are the objects; empty means all of them.
	Names []string
}

// parseTarget reads the kubectl spellings TYPE, TYPE NAME..., and
// TYPE/NAME... (all of one type). Mixing the forms is an error, as in kubectl,
// because "widget/a b" is ambiguous.
func parseTarget(args []string) (target, error) {
	if len(args) == 0 {
		return target{}, errors.New("a resource type is required, such as widgets or widget/w1")
	}
	if !strings.Contains(args[0], "/") {
		t := target{Resource: args[0]}
		for _, name := range args[1:] {
			if strings.Contains(name, "/") {
				return target{}, fmt.Errorf("%q: there is no need to give a resource type as a separate argument when passing arguments in TYPE/NAME form", name)
			}
			if name == "" {
				return target{}, errors.New("an object name is empty")
			}
			t.Names = append(t.Names, name)
		}
		if t.Resource == "" {
			return target{}, errors.New("the resource type is empty")
		}
		return t, nil
	}
	var t target
	for _, arg := range args {
		resource, name, ok := strings.Cut(arg, "/")
		if !ok {
			return target{}, fmt.Errorf("%q: give every argument as TYPE/NAME, or the type once followed by names", arg)
		}
		if resource == "" || name == "" || strings.Contains(name, "/") {
			return target{}, fmt.Errorf("%q is not of the form TYPE/NAME", arg)
		}
		if t.Resource != "" && resource != t.Resource {
			return target{}, fmt.Errorf("%q: all arguments must name one resource type, not %s and %s", arg, t.Resource, resource)
		}
		t.Resource = resource
		t.Names = append(t.Names, name)
	}
	return t, nil
}
