package conflicts

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// PathError reports why a printed field path could not be parsed. Offset is the
// byte offset in Input where parsing stopped.
type PathError struct {
	// Input is the whole printed path.
	Input string
	// Offset is the byte offset of the problem in Input.
	Offset int
	// Reason says what was expected there.
	Reason string
}

// Error implements error.
func (e *PathError) Error() string {
	return fmt.Sprintf("invalid field path %q at offset %d: %s", e.Input, e.Offset, e.Reason)
}

// ParsePath turns the printed form of a field path, as the API server writes
// it in conflict causes and messages (fieldpath.Path.String), back into a
// fieldpath.Path.
//
// The grammar is a sequence of elements: `.name` (a struct field or map key),
// `[k="v",k2=1]` (a map-list element by its keys), `[="v"]` (a set-list
// element by value) and `[3]` (an atomic-list index). Values are Go-quoted
// strings, integers, floats, true, false or null.
//
// The printed form is lossy for map keys and field names that contain '.' or
// '[': they are split into several field elements. The returned path still
// prints back to the same string, so messages stay exact, but it may not match
// the object's structure. Paths from Predict never have this problem.
//
// ParsePath returns a *PathError for malformed input and never panics. The
// empty string is the empty path.
func ParsePath(s string) (fieldpath.Path, error) {
	p := &pathParser{in: s}
	var out fieldpath.Path
	for p.pos < len(s) {
		switch s[p.pos] {
		case '.':
			p.pos++
			start := p.pos
			for p.pos < len(s) && s[p.pos] != '.' && s[p.pos] != '[' {
				p.pos++
			}
			if p.pos == start {
				return nil, p.fail("empty field name")
			}
			name := s[start:p.pos]
			out = append(out, fieldpath.PathElement{FieldName: &name})
		case '[':
			pe, err := p.bracket()
			if err != nil {
				return nil, err
			}
			out = append(out, pe)
		default:
			return nil, p.fail("expected '.' or '['")
		}
	}
	return out, nil
}

// MustParsePath is ParsePath for constant paths in code and tests: it panics on
// malformed input, so never call it with text that came from a server.
func MustParsePath(s string) fieldpath.Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

// pathParser is the cursor of one ParsePath call.
type pathParser struct {
	in  string
	pos int
}

func (p *pathParser) fail(reason string) error {
	return &PathError{Input: p.in, Offset: p.pos, Reason: reason}
}

// bracket parses one `[...]` element; p.pos is at the '['.
func (p *pathParser) bracket() (fieldpath.PathElement, error) {
	p.pos++ // '['
	if p.pos >= len(p.in) {
		return fieldpath.PathElement{}, p.fail("unterminated '['")
	}
	switch c := p.in[p.pos]; {
	case c == '=':
		p.pos++
		v, err := p.scalar()
		if err != nil {
			return fieldpath.PathElement{}, err
		}
		if err := p.expect(']'); err != nil {
			return fieldpath.PathElement{}, err
		}
		return fieldpath.PathElement{Value: &v}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if end := strings.IndexByte(p.in[p.pos:], ']'); end >= 0 {
			if i, err := strconv.Atoi(p.in[p.pos : p.pos+end]); err == nil {
				p.pos += end + 1
				return fieldpath.PathElement{Index: &i}, nil
			}
		}
	}
	var keys value.FieldList
	for {
		start := p.pos
		for p.pos < len(p.in) && p.in[p.pos] != '=' && p.in[p.pos] != ']' && p.in[p.pos] != ',' {
			p.pos++
		}
		if p.pos >= len(p.in) || p.in[p.pos] != '=' {
			return fieldpath.PathElement{}, p.fail("expected '=' after key name")
		}
		if p.pos == start {
			return fieldpath.PathElement{}, p.fail("empty key name")
		}
		name := p.in[start:p.pos]
		p.pos++ // '='
		v, err := p.scalar()
		if err != nil {
			return fieldpath.PathElement{}, err
		}
		for _, k := range keys {
			if k.Name == name {
				return fieldpath.PathElement{}, p.fail(fmt.Sprintf("duplicate key %q", name))
			}
		}
		keys = append(keys, value.Field{Name: name, Value: v})
		if p.pos >= len(p.in) {
			return fieldpath.PathElement{}, p.fail("unterminated '['")
		}
		if p.in[p.pos] == ']' {
			p.pos++
			break
		}
		if err := p.expect(','); err != nil {
			return fieldpath.PathElement{}, err
		}
	}
	keys.Sort()
	return fieldpath.PathElement{Key: &keys}, nil
}

// scalar parses one printed value: a Go-quoted string, an integer, a float,
// true, false or null. It stops before the ',' or ']' that follows.
func (p *pathParser) scalar() (value.Value, error) {
	if p.pos >= len(p.in) {
		return nil, p.fail("expected a value")
	}
	if p.in[p.pos] == '"' {
		q, err := strconv.QuotedPrefix(p.in[p.pos:])
		if err != nil {
			return nil, p.fail("unterminated or invalid quoted string")
		}
		s, err := strconv.Unquote(q)
		if err != nil {
			return nil, p.fail("invalid quoted string")
		}
		p.pos += len(q)
		return value.NewValueInterface(s), nil
	}
	start := p.pos
	for p.pos < len(p.in) && p.in[p.pos] != ',' && p.in[p.pos] != ']' {
		p.pos++
	}
	tok := p.in[start:p.pos]
	switch tok {
	case "null":
		return value.NewValueInterface(nil), nil
	case "true":
		return value.NewValueInterface(true), nil
	case "false":
		return value.NewValueInterface(false), nil
	}
	if i, err := strconv.ParseInt(tok, 10, 64); err == nil {
		return value.NewValueInterface(i), nil
	}
	if strings.ContainsAny(tok, "0123456789") {
		if f, err := strconv.ParseFloat(tok, 64); err == nil {
			return value.NewValueInterface(f), nil
		}
	}
	p.pos = start
	return nil, p.fail("expected a quoted string, number, true, false or null")
}

func (p *pathParser) expect(c byte) error {
	if p.pos >= len(p.in) || p.in[p.pos] != c {
		return p.fail(fmt.Sprintf("expected %q", c))
	}
	p.pos++
	return nil
}
