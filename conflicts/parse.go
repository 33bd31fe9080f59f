package conflicts

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Parse returns the contested fields of a field-manager conflict: one Conflict
// per field, in the order the server reported them. err may be wrapped or
// joined; Parse reads the first field-manager conflict status inside it.
//
// The status's details.causes are the source; the message is parsed only when
// a status carries no FieldManagerConflict causes (a proxy or an older server
// may drop them). Parse returns ErrNotFieldConflict (wrapped) when err holds no
// field-manager conflict, and a descriptive error when the server's text
// cannot be parsed; it never panics.
func Parse(err error) ([]Conflict, error) {
	s, ok := findStatus(err, func(s metav1.Status) bool { return classOf(s) == ClassFieldManagerConflict })
	switch {
	case err == nil:
		return nil, ErrNotFieldConflict
	case !ok:
		return nil, fmt.Errorf("%w: %w", ErrNotFieldConflict, err)
	}
	return ParseStatus(s)
}

// ParseStatus is Parse for a metav1.Status already in hand. It parses every
// cause of type FieldManagerConflict and falls back to the message when there
// are none.
func ParseStatus(s metav1.Status) ([]Conflict, error) {
	var out []Conflict
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type != metav1.CauseTypeFieldManagerConflict {
				continue
			}
			conflict, err := ParseCause(c)
			if err != nil {
				return nil, err
			}
			out = append(out, conflict)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	return ParseMessage(s.Message)
}

// ParseCause parses one cause of a field-manager conflict: Message is
// `conflict with <owner>` and Field the printed path of the contested field.
func ParseCause(c metav1.StatusCause) (Conflict, error) {
	rest, ok := strings.CutPrefix(c.Message, "conflict with ")
	if !ok {
		return Conflict{}, fmt.Errorf("conflict cause %q: expected it to start with \"conflict with \"", c.Message)
	}
	owner, rest, err := parseOwner(rest)
	if err != nil {
		return Conflict{}, fmt.Errorf("conflict cause %q: %w", c.Message, err)
	}
	if rest != "" {
		return Conflict{}, fmt.Errorf("conflict cause %q: unexpected text %q after the owner", c.Message, clip(rest))
	}
	path, err := ParsePath(c.Field)
	if err != nil {
		return Conflict{}, fmt.Errorf("conflict cause %q: %w", c.Message, err)
	}
	return newConflict(owner, path), nil
}

// ParseMessage parses the message of a field-manager conflict, in either of
// the server's two forms:
//
//	Apply failed with 1 conflict: conflict with "a" with subresource "status": .status.phase
//
//	Apply failed with 2 conflicts: conflicts with "a" with subresource "status":
//	- .status.conditions[type="A"].status
//	conflicts with "legacy" using demo.statusapply.io/v1alpha1:
//	- .status.phase
//
// The count in the first line must match the fields listed.
func ParseMessage(msg string) ([]Conflict, error) {
	rest, ok := strings.CutPrefix(msg, "Apply failed with ")
	if !ok {
		return nil, fmt.Errorf("conflict message %q: expected it to start with \"Apply failed with \"", clip(msg))
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	n, err := strconv.Atoi(rest[:digits])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("conflict message %q: expected a positive conflict count", clip(msg))
	}
	rest = rest[digits:]
	if n == 1 {
		rest, ok = strings.CutPrefix(rest, " conflict: conflict with ")
		if !ok {
			return nil, fmt.Errorf("conflict message %q: expected \" conflict: conflict with \" after the count", clip(msg))
		}
		owner, rest, err := parseOwner(rest)
		if err != nil {
			return nil, fmt.Errorf("conflict message %q: %w", clip(msg), err)
		}
		rest, ok = strings.CutPrefix(rest, ": ")
		if !ok {
			return nil, fmt.Errorf("conflict message %q: expected \": \" and a field path after the owner", clip(msg))
		}
		path, err := ParsePath(rest)
		if err != nil {
			return nil, fmt.Errorf("conflict message: %w", err)
		}
		return []Conflict{newConflict(owner, path)}, nil
	}
	rest, ok = strings.CutPrefix(rest, " conflicts: ")
	if !ok {
		return nil, fmt.Errorf("conflict message %q: expected \" conflicts: \" after the count", clip(msg))
	}
	var (
		out      []Conflict
		owner    Conflict
		hasOwner bool
	)
	for i, line := range strings.Split(rest, "\n") {
		if r, ok := strings.CutPrefix(line, "conflicts with "); ok {
			o, r, err := parseOwner(r)
			if err != nil {
				return nil, fmt.Errorf("conflict message line %d: %w", i+1, err)
			}
			if r != ":" {
				return nil, fmt.Errorf("conflict message line %d %q: expected ':' after the owner", i+1, clip(line))
			}
			owner, hasOwner = o, true
			continue
		}
		r, ok := strings.CutPrefix(line, "- ")
		if !ok || !hasOwner {
			return nil, fmt.Errorf("conflict message line %d %q: expected \"conflicts with <owner>:\" or \"- <field>\"", i+1, clip(line))
		}
		path, err := ParsePath(r)
		if err != nil {
			return nil, fmt.Errorf("conflict message line %d: %w", i+1, err)
		}
		out = append(out, newConflict(owner, path))
	}
	if len(out) != n {
		return nil, fmt.Errorf("conflict message announces %d conflicts but lists %d", n, len(out))
	}
	return out, nil
}
