package ssa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/statusapply/statusapply/ownership"

	"github.com/statusapply/statusapply/internal/objects"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// answer is the API server's response to an apply: its JSON, the object
// decoded from it unless deferred, and the metadata remember needs. Decoding
// is costly and most responses are never read, hence the deferral.
type answer struct {
	raw  []byte        // the response; nil when the client decoded it itself
	obj  client.Object // the decoded response; nil while deferred
	meta answerMeta    // read from raw when obj is nil
}

// answerMeta is the part of a response's metadata the Applier needs. The
// managedFields entries have no time: nothing here reads it.
type answerMeta struct {
	ResourceVersion string
	UID             types.UID
	ManagedFields   []metav1.ManagedFieldsEntry
}

// newAnswer wraps a response, decoded into like's type unless deferDecode.
func newAnswer(raw []byte, like client.Object, t Target, deferDecode bool) (*answer, error) {
	a := &answer{raw: raw}
	if !deferDecode {
		obj := newObjectLike(like, t)
		if err := objects.Decode(raw, obj); err != nil {
			return nil, err
		}
		a.obj = obj
	} else if err := readMeta(raw, &a.meta); err != nil {
		return nil, err
	}
	if a.resourceVersion() == "" {
		return nil, errors.New("the API server's response to the apply names no resourceVersion")
	}
	return a, nil
}

func (a *answer) resourceVersion() string {
	if a.obj != nil {
		return a.obj.GetResourceVersion()
	}
	return a.meta.ResourceVersion
}

func (a *answer) uid() types.UID {
	if a.obj != nil {
		return a.obj.GetUID()
	}
	return a.meta.UID
}

func (a *answer) hasManagedFields() bool {
	if a.obj != nil {
		return ownership.HasManagedFields(a.obj)
	}
	return len(a.meta.ManagedFields) > 0
}

// holdsBeforeFirstApply is holdsBeforeFirstApply on the response.
func (a *answer) holdsBeforeFirstApply() bool {
	if a.obj != nil {
		return holdsBeforeFirstApply(a.obj)
	}
	return ownership.HoldsBeforeFirstApply(a.meta.ManagedFields)
}

// object returns the response as an object, decoding a deferred one as
// unstructured content (with its managedFields whole, unlike meta).
func (a *answer) object() (client.Object, error) {
	if a.obj != nil {
		return a.obj, nil
	}
	u := &unstructured.Unstructured{}
	if err := objects.Decode(a.raw, u); err != nil {
		return nil, err
	}
	return u, nil
}

// entry is appliedEntry on the response.
func (a *answer) entry(manager string, sub Subresource) ([]byte, bool, error) {
	if a.obj != nil {
		return appliedEntry(a.obj, manager, sub)
	}
	return appliedEntryIn(a.meta.ManagedFields, manager, sub)
}

// readMeta reads resourceVersion, uid and the managedFields entries of an
// object's JSON into m without decoding the rest of the response: it stops
// after the metadata, which the API server writes before spec and status.
// raw was checked by the client; malformed input is refused where the walk
// notices (skipped values are not checked), and it never panics.
func readMeta(raw []byte, m *answerMeta) error {
	s := &jsonScan{b: raw}
	found := false
	err := s.object([]string{"metadata"}, func(key string) error {
		if key != "metadata" {
			return s.skip()
		}
		found = true
		err := s.object([]string{"resourceVersion", "uid", "managedFields"}, func(key string) error {
			switch key {
			case "resourceVersion":
				return s.str(&m.ResourceVersion)
			case "uid":
				var uid string
				err := s.str(&uid)
				m.UID = types.UID(uid)
				return err
			case "managedFields":
				return s.array(func() error {
					var e metav1.ManagedFieldsEntry
					var operation string
					err := s.object([]string{"manager", "operation", "subresource", "fieldsType", "fieldsV1"}, func(key string) error {
						switch key {
						case "manager":
							return s.str(&e.Manager)
						case "operation":
							return s.str(&operation)
						case "subresource":
							return s.str(&e.Subresource)
						case "fieldsType":
							return s.str(&e.FieldsType)
						case "fieldsV1":
							start := s.i
							if err := s.skip(); err != nil {
								return err
							}
							// A copy, so what the Applier remembers does not
							// keep the whole response alive. null is no fields.
							if fields := s.b[start:s.i]; string(fields) != "null" {
								e.FieldsV1 = &metav1.FieldsV1{}
								e.FieldsV1.SetRawBytes(fields) // copies
							}
							return nil
						}
						return s.skip()
					})
					e.Operation = metav1.ManagedFieldsOperationType(operation)
					m.ManagedFields = append(m.ManagedFields, e)
					return err
				})
			}
			return s.skip()
		})
		if err == nil {
			// What follows the metadata is not read.
			return errMetadataRead
		}
		return err
	})
	if errors.Is(err, errMetadataRead) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("decoding the API server's response: %w", err)
	}
	if !found {
		return errors.New("decoding the API server's response: it has no metadata")
	}
	return nil
}

// jsonScan walks JSON text, decoding only the strings asked for.
type jsonScan struct {
	b []byte
	i int
}

var (
	errBadJSON      = errors.New("malformed JSON")
	errMetadataRead = errors.New("the metadata is read")
)

func (s *jsonScan) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *jsonScan) peek() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// object walks an object, calling member for each key with the scanner at
// its value; member must consume the value. A null is an empty object. Keys
// not in reads are passed as "", sparing a string for each.
func (s *jsonScan) object(reads []string, member func(key string) error) error {
	return s.collection('{', '}', func() error {
		key, err := s.key(reads)
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return errBadJSON
		}
		s.i++
		s.space()
		return member(key)
	})
}

// array walks an array, calling item with the scanner at each element; item
// must consume it. A null is an empty array.
func (s *jsonScan) array(item func() error) error {
	return s.collection('[', ']', item)
}

func (s *jsonScan) collection(open, closing byte, each func() error) error {
	switch s.peek() {
	case open:
	case 'n':
		return s.literal("null")
	default:
		return errBadJSON
	}
	s.i++
	if s.peek() == closing {
		s.i++
		return nil
	}
	for {
		if err := each(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case closing:
			s.i++
			return nil
		default:
			return errBadJSON
		}
	}
}

// key reads an object key: the one of reads it is, or "" for any other,
// without allocating unless the key has escapes.
func (s *jsonScan) key(reads []string) (string, error) {
	if s.peek() != '"' {
		return "", errBadJSON
	}
	start := s.i
	if err := s.skipString(); err != nil {
		return "", err
	}
	body := s.b[start+1 : s.i-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		var decoded string
		if err := json.Unmarshal(s.b[start:s.i], &decoded); err != nil {
			return "", err
		}
		body = []byte(decoded)
	}
	for _, k := range reads {
		if string(body) == k { // compared, not converted
			return k, nil
		}
	}
	return "", nil
}

// str decodes a string into *out; a null leaves it empty.
func (s *jsonScan) str(out *string) error {
	switch s.peek() {
	case '"':
	case 'n':
		return s.literal("null")
	default:
		return errBadJSON
	}
	start := s.i
	if err := s.skipString(); err != nil {
		return err
	}
	body := s.b[start+1 : s.i-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		*out = string(body)
		return nil
	}
	// Escapes or invalid UTF-8: decode it as encoding/json does.
	return json.Unmarshal(s.b[start:s.i], out)
}

func (s *jsonScan) literal(lit string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return errBadJSON
	}
	s.i += len(lit)
	return nil
}

// skip consumes one value without decoding it. Inside objects and arrays it
// only follows strings and nesting, checking nothing (the client did).
func (s *jsonScan) skip() error {
	switch c := s.peek(); c {
	case '{', '[':
		depth := 0
		for ; s.i < len(s.b); s.i++ {
			switch s.b[s.i] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return nil
				}
			case '"':
				if err := s.skipString(); err != nil {
					return err
				}
				s.i-- // the loop steps past the closing quote
			}
		}
		return errBadJSON
	case '"':
		return s.skipString()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	return s.skipNumber()
}

// skipNumber consumes a number, checking it as encoding/json would.
func (s *jsonScan) skipNumber() error {
	start := s.i
	for s.i < len(s.b) && strings.IndexByte("+-.0123456789eE", s.b[s.i]) >= 0 {
		s.i++
	}
	if !json.Valid(s.b[start:s.i]) {
		return errBadJSON
	}
	return nil
}

func (s *jsonScan) skipString() error {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return nil
		}
	}
	return errBadJSON
}
