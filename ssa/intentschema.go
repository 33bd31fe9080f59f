package ssa

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// checkIntentSchema refuses, before any request, an intent that names a field
// the kind's schema lacks (a writer whose schema is older than the CRD it
// writes to): the fields it states are all its schema has to know.
func (a *Applier) checkIntentSchema(t Target, content map[string]any) error {
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(t.GVK)
	if _, err := a.tc.ObjectToTyped(u, typed.AllowDuplicates); err != nil {
		return intentSchemaError(t, err)
	}
	return nil
}

func intentSchemaError(t Target, err error) error {
	return fmt.Errorf("%w: %s: the intent does not match the schema of %s (a field it names is missing from the schema, "+
		"or has another type there): %w", ErrInvalidInput, t, t.GVK.Kind, err)
}

// checkIntentSchemaAC is checkIntentSchema for an intent in its apply
// configuration type, typed as it is, without decoding its body; what does not
// fit is typed again as content, through the converters, which gives the
// error (and lets one reading the cluster's schemas refresh them).
func (a *Applier) checkIntentSchemaAC(t Target, ac any, body []byte) error {
	if ks, err := a.tc.Kind(t.GVK); err == nil {
		pt := typed.ParseableType{Schema: ks.Schema, TypeRef: ks.TypeRef}
		if _, err := pt.FromStructured(ac, typed.AllowDuplicates); err == nil {
			return nil
		}
	}
	var content map[string]any
	if err := json.Unmarshal(body, &content); err != nil {
		return fmt.Errorf("decoding the apply configuration: %w", err)
	}
	return a.checkIntentSchema(t, content)
}

// mustTypeIntent reports whether ac, t's intent in its apply configuration
// type, must be typed with the kind's schema before it is sent. It need not
// when every value of its type fits the schema (the type's probe, below, was
// typed) and ac has none of the list elements typing may still refuse: a null
// one, or one that omits every key of a keyed list.
func (a *Applier) mustTypeIntent(t Target, ac any) bool {
	sh := a.shapes.of(a, reflect.TypeOf(ac), t.GVK)
	return !sh.fits || !sh.check.holds(reflect.ValueOf(ac))
}

// intentShapes caches an intentShape per apply configuration type and kind,
// dropped whenever the converters' SchemaVersion changes, as the kinds of kindschema.Converter are.
type intentShapes struct {
	mu      sync.Mutex
	version uint64
	m       map[shapeKey]*intentShape
}

type shapeKey struct {
	typ reflect.Type
	gvk schema.GroupVersionKind
}

// intentShape is what the kind's schema says of every value of one apply
// configuration type.
type intentShape struct {
	// fits is true when no value of the type names a field the schema lacks or
	// gives one another type there; false also when the probe cannot tell.
	fits bool
	// check is what must hold of a value for it to fit; nil for nothing.
	check *shapeCheck
}

func (s *intentShapes) of(a *Applier, typ reflect.Type, gvk schema.GroupVersionKind) *intentShape {
	version := a.tc.SchemaVersion()
	key := shapeKey{typ: typ, gvk: gvk}
	s.mu.Lock()
	if s.version != version {
		s.version, s.m = version, nil
	}
	sh := s.m[key]
	s.mu.Unlock()
	if sh != nil {
		return sh
	}
	sh = a.probeShape(typ, gvk)
	s.mu.Lock()
	if s.version == version {
		if s.m == nil {
			s.m = map[shapeKey]*intentShape{}
		}
		s.m[key] = sh
	}
	s.mu.Unlock()
	return sh
}

// maxProbeDepth bounds the probe of a deep type, which then is not probed.
const maxProbeDepth = 32

// errNoProbe is a type the probe cannot stand for: every value is typed.
var errNoProbe = errors.New("no probe")

// probeShape types a probe of typ, a value with every field set (and one
// element in each list, one entry in each map): whatever JSON field any value
// of typ can hold, the probe holds too, with a value of the same kind. Each
// list element is then typed alone at its emptiest (null, or only the fields
// encoding/json never omits) to learn what a value's elements must hold.
func (a *Applier) probeShape(typ reflect.Type, gvk schema.GroupVersionKind) *intentShape {
	pb := &prober{}
	probe, check, err := pb.fill(typ, 0)
	if err != nil {
		return &intentShape{}
	}
	fits := func() bool {
		body, err := json.Marshal(probe.Interface())
		if err != nil {
			return false
		}
		var content map[string]any
		if err := json.Unmarshal(body, &content); err != nil {
			return false
		}
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(gvk)
		tv, err := a.tc.ObjectToTyped(u, typed.AllowDuplicates)
		if err != nil {
			return false
		}
		if pb.maps && hasMixedMap(tv.Schema()) {
			// The probe's map key stands for every key only when no map of
			// the schema has both named fields and other keys.
			return false
		}
		return true
	}
	if !fits() {
		return &intentShape{}
	}
	for _, l := range pb.lists {
		if !l.learn(fits) {
			return &intentShape{}
		}
	}
	return &intentShape{fits: true, check: check.prune()}
}

// prober builds a probe and records its lists.
type prober struct {
	lists []*probeList
	maps  bool
	// onPath are the struct types being filled, outside in.
	onPath map[reflect.Type]bool
}

// probeList is one list of the probe, its one element, and what is learnt of it.
type probeList struct {
	elem reflect.Value // addressable, in the probe
	full reflect.Value // a copy of the element as probed
	// check is filled in by learn, for values' elements of this list.
	check *shapeCheck
}

var (
	microTimeType = reflect.TypeFor[metav1.MicroTime]()
	quantityType  = reflect.TypeFor[resource.Quantity]()
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// fill returns a probe of typ and what a value of typ must hold beyond its type.
func (pb *prober) fill(typ reflect.Type, depth int) (reflect.Value, *shapeCheck, error) {
	if depth > maxProbeDepth {
		return reflect.Value{}, nil, errNoProbe
	}
	v := reflect.New(typ).Elem()
	switch typ {
	case timeType:
		v.Set(reflect.ValueOf(metav1.Unix(1, 0)))
		return v, nil, nil
	case microTimeType:
		v.Set(reflect.ValueOf(metav1.NewMicroTime(metav1.Unix(1, 0).Time)))
		return v, nil, nil
	case quantityType:
		v.Set(reflect.ValueOf(resource.MustParse("1")))
		return v, nil, nil
	}
	if typ.Kind() != reflect.Pointer && (typ.Implements(jsonMarshaler) || reflect.PointerTo(typ).Implements(jsonMarshaler) ||
		typ.Implements(textMarshaler) || reflect.PointerTo(typ).Implements(textMarshaler)) {
		// Its JSON is its own: the probe cannot know every shape it takes.
		return reflect.Value{}, nil, errNoProbe
	}
	switch typ.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("probe")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		elem, check, err := pb.fill(typ.Elem(), depth+1)
		if err != nil {
			return reflect.Value{}, nil, err
		}
		p := reflect.New(typ.Elem())
		p.Elem().Set(elem)
		v.Set(p)
		if check != nil {
			return v, &shapeCheck{elem: check}, nil
		}
	case reflect.Struct:
		if pb.onPath[typ] {
			// A recursive type: no probe holds every depth of its values.
			return reflect.Value{}, nil, errNoProbe
		}
		if pb.onPath == nil {
			pb.onPath = map[reflect.Type]bool{}
		}
		pb.onPath[typ] = true
		defer delete(pb.onPath, typ)
		return pb.fillStruct(typ, v, depth)
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte{1}) // base64, a string
			return v, nil, nil
		}
		elem, check, err := pb.fill(typ.Elem(), depth+1)
		if err != nil {
			return reflect.Value{}, nil, err
		}
		v.Set(reflect.MakeSlice(typ, 1, 1))
		v.Index(0).Set(elem)
		l := &probeList{elem: v.Index(0), full: elem, check: &shapeCheck{elem: check}}
		pb.lists = append(pb.lists, l)
		return v, l.check, nil
	case reflect.Map:
		if typ.Key().Kind() != reflect.String {
			return reflect.Value{}, nil, errNoProbe
		}
		pb.maps = true
		elem, check, err := pb.fill(typ.Elem(), depth+1)
		if err != nil {
			return reflect.Value{}, nil, err
		}
		v.Set(reflect.MakeMapWithSize(typ, 1))
		v.SetMapIndex(reflect.ValueOf("statusapply.probe").Convert(typ.Key()), elem)
		if check != nil {
			return v, &shapeCheck{elem: check}, nil
		}
	default:
		// Arrays, interfaces, channels, functions, complex numbers.
		return reflect.Value{}, nil, errNoProbe
	}
	return v, nil, nil
}

func (pb *prober) fillStruct(typ reflect.Type, v reflect.Value, depth int) (reflect.Value, *shapeCheck, error) {
	var fields []fieldCheck
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		if !f.IsExported() {
			if f.Anonymous {
				// encoding/json promotes its exported fields; reflect cannot set them.
				return reflect.Value{}, nil, errNoProbe
			}
			continue
		}
		if strings.Contains(tag, "omitzero") {
			// Omitted by a method the probe does not know.
			return reflect.Value{}, nil, errNoProbe
		}
		fv, check, err := pb.fill(f.Type, depth+1)
		if err != nil {
			return reflect.Value{}, nil, err
		}
		v.Field(i).Set(fv)
		if check != nil {
			fields = append(fields, fieldCheck{index: i, check: check})
		}
	}
	if fields == nil {
		return v, nil, nil
	}
	return v, &shapeCheck{fields: fields}, nil
}

// learn types the probe with l's element at its emptiest, and each omittable
// field of it alone, to learn what an element must hold (typing refuses a null
// element of an associative list, and an element of a keyed list that omits
// every key). It reports false when no rule it can check says that.
func (l *probeList) learn(fits func() bool) bool {
	defer l.elem.Set(l.full)
	typ := l.elem.Type()
	if nullable(typ) {
		l.elem.SetZero()
		if !fits() {
			l.check.noNull = true
		}
	}
	st := typ
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct || st == timeType || st == microTimeType || st == quantityType {
		// A scalar element is never refused unless null; a list or map one
		// can only be null: neither omits keys.
		return true
	}
	elem := l.elem
	if typ.Kind() == reflect.Pointer {
		if typ.Elem().Kind() == reflect.Pointer {
			return false
		}
		l.elem.Set(reflect.New(st))
		elem = l.elem.Elem()
	}
	full := l.full
	if full.Kind() == reflect.Pointer {
		full = full.Elem()
	}
	elem.SetZero()
	if fits() {
		return true
	}
	// A keyed list: an element must hold one of the fields that alone make it fit.
	var keys []int
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" || !omittable(f) {
			continue
		}
		if f.Anonymous {
			return false // its fields are the element's: which one is a key?
		}
		elem.SetZero()
		elem.Field(i).Set(full.Field(i))
		if fits() {
			keys = append(keys, i)
		}
	}
	if keys == nil {
		return false
	}
	l.check.keys = keys
	return true
}

// shapeCheck is what typing may refuse in a value of one Go type although its
// probe was typed: list elements that are null or omit every key.
type shapeCheck struct {
	// fields are checks of a struct's fields.
	fields []fieldCheck
	// elem checks a pointer's target, a list's elements or a map's values.
	elem *shapeCheck
	// noNull: a list element must not be null.
	noNull bool
	// keys: a list element (a struct, or a pointer to one) must hold one of
	// these fields.
	keys []int
}

// prune returns c without the checks that require nothing; nil for none.
func (c *shapeCheck) prune() *shapeCheck {
	if c == nil {
		return nil
	}
	c.elem = c.elem.prune()
	var kept []fieldCheck
	for _, f := range c.fields {
		if f.check = f.check.prune(); f.check != nil {
			kept = append(kept, f)
		}
	}
	c.fields = kept
	if c.elem == nil && c.fields == nil && !c.noNull && c.keys == nil {
		return nil
	}
	return c
}

type fieldCheck struct {
	index int
	check *shapeCheck
}

// holds reports whether v, of the type c was made for, holds what c requires.
func (c *shapeCheck) holds(v reflect.Value) bool {
	if c == nil {
		return true
	}
	switch v.Kind() {
	case reflect.Pointer:
		return v.IsNil() || c.elem.holds(v.Elem())
	case reflect.Struct:
		for _, f := range c.fields {
			if !f.check.holds(v.Field(f.index)) {
				return false
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			if c.noNull && encodesNull(e) {
				return false
			}
			if c.keys != nil && !holdsOneOf(e, c.keys) {
				return false
			}
			if !c.elem.holds(e) {
				return false
			}
		}
	case reflect.Map:
		if c.elem != nil {
			for it := v.MapRange(); it.Next(); {
				if !c.elem.holds(it.Value()) {
					return false
				}
			}
		}
	}
	return true
}

// holdsOneOf reports whether the struct e (or e points to) encodes one of fields.
func holdsOneOf(e reflect.Value, fields []int) bool {
	for e.Kind() == reflect.Pointer {
		if e.IsNil() {
			return false
		}
		e = e.Elem()
	}
	for _, i := range fields {
		// Each is omitempty (learn chose it so): present unless empty.
		if !emptyJSON(e.Field(i)) {
			return true
		}
	}
	return false
}

// nullable reports whether a value of typ may encode as null.
func nullable(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return true
	}
	return typ == timeType || typ == microTimeType
}

// encodesNull reports whether encoding/json encodes v as null.
func encodesNull(v reflect.Value) bool {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return true
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	if v.Type() == timeType || v.Type() == microTimeType {
		// Both are a time.Time, null when zero.
		return v.Field(0).Interface().(time.Time).IsZero() //nolint:forcetypeassert // their one field is a time.Time
	}
	return false
}

// omittable reports whether encoding/json may leave f out (omitempty).
func omittable(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "omitempty" {
			return true
		}
	}
	return false
}

// emptyJSON reports whether omitempty leaves v out, as encoding/json decides.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// hasMixedMap reports whether a map of s has both named fields and an element
// type for other keys, where the type of a key depends on its name.
func hasMixedMap(s *smdschema.Schema) bool {
	var mixed func(a smdschema.Atom, depth int) bool
	inlined := func(tr smdschema.TypeRef, depth int) bool {
		return tr.NamedType == nil && mixed(tr.Inlined, depth+1)
	}
	mixed = func(a smdschema.Atom, depth int) bool {
		if depth > maxProbeDepth {
			return true
		}
		if a.List != nil && inlined(a.List.ElementType, depth) {
			return true
		}
		m := a.Map
		if m == nil {
			return false
		}
		if len(m.Fields) > 0 && m.ElementType != (smdschema.TypeRef{}) {
			return true
		}
		if inlined(m.ElementType, depth) {
			return true
		}
		for _, f := range m.Fields {
			if inlined(f.Type, depth) {
				return true
			}
		}
		return false
	}
	for _, td := range s.Types {
		if mixed(td.Atom, 0) {
			return true
		}
	}
	return false
}
