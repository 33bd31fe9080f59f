package ssa

import (
	"reflect"
	"slices"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// Comparing an intent with what its manager owns runs in every reconcile,
// and in most of them it is the last thing that happens: nothing changed, so
// nothing is sent. Walking both apply configurations with reflect.Value costs
// most of that comparison in making Values for fields that are nil on both
// sides (an object's metadata has a dozen, of which an intent sets two or
// three). So each apply configuration type is compiled once (see acLayout)
// into an equalFunc: a tree of closures that read fields at their offsets,
// and skip a pointer that is nil, or the same, on both sides without
// looking further.

// equalFunc reports whether the values of one type at a and b would encode to
// the same JSON: times compare to the second, as they encode; a struct with
// unexported fields (other than a time's) compares with reflect.DeepEqual, as
// does an interface's dynamic value.
type equalFunc func(a, b unsafe.Pointer) bool

// equalPointees reports whether a and b, pointers of one type, point to
// values that would encode to the same JSON, with equal the comparison
// compiled for that type. Compiling costs far more than comparing: callers
// keep what they compiled (acLayout per apply configuration type, the
// owned-state cache for object metadata).
func equalPointees(equal equalFunc, a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	pa, pb := reflect.ValueOf(a).UnsafePointer(), reflect.ValueOf(b).UnsafePointer()
	if pa == pb {
		return true
	}
	if pa == nil || pb == nil {
		return false
	}
	return equal(pa, pb)
}

// compileEqual returns the comparison of values of type t.
func compileEqual(t reflect.Type) equalFunc {
	return (&equalCompiler{done: map[reflect.Type]*equalFunc{}}).compile(t)
}

// equalCompiler compiles the comparison of one type and the types it holds,
// each once; a type that holds itself (through a pointer or a slice) calls
// its own comparison through the slot it is compiled into.
type equalCompiler struct {
	done map[reflect.Type]*equalFunc
}

var stringMapType = reflect.TypeFor[map[string]string]()

// sliceHeader is how Go lays out a slice value.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func (c *equalCompiler) compile(t reflect.Type) equalFunc {
	if slot, ok := c.done[t]; ok {
		return func(a, b unsafe.Pointer) bool { return (*slot)(a, b) }
	}
	slot := new(equalFunc)
	c.done[t] = slot
	*slot = c.build(t)
	return *slot
}

func (c *equalCompiler) build(t reflect.Type) equalFunc {
	switch t {
	case objectMetaACType.Elem():
		if equal, ok := c.objectMeta(t); ok {
			return equal
		}
	case typeMetaACType:
		if equal, ok := typeMeta(t); ok {
			return equal
		}
	case conditionsACType:
		return func(a, b unsafe.Pointer) bool {
			return equalConditions(*(*[]metav1ac.ConditionApplyConfiguration)(a), *(*[]metav1ac.ConditionApplyConfiguration)(b))
		}
	case timeType:
		return func(a, b unsafe.Pointer) bool {
			return (*metav1.Time)(a).Unix() == (*metav1.Time)(b).Unix()
		}
	case stringMapType:
		return func(a, b unsafe.Pointer) bool {
			return equalStringMaps(*(*map[string]string)(a), *(*map[string]string)(b))
		}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return c.pointer(t)
	case reflect.Struct:
		return c.structOf(t)
	case reflect.Slice:
		return c.slice(t)
	case reflect.Array:
		return c.array(t)
	case reflect.String:
		return func(a, b unsafe.Pointer) bool { return *(*string)(a) == *(*string)(b) }
	case reflect.Bool:
		return func(a, b unsafe.Pointer) bool { return *(*bool)(a) == *(*bool)(b) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return scalarEqual(t)
	case reflect.Map:
		return c.mapOf(t)
	}
	// Interfaces and anything else: as reflect.DeepEqual has it, which
	// errs on the side of "different" (an apply is sent).
	return deepEqualAt(t)
}

// pointer compares what two pointers point to; the same pointer, or two
// nil ones, are equal without a look.
func (c *equalCompiler) pointer(t reflect.Type) equalFunc {
	elem := c.compile(t.Elem())
	return func(a, b unsafe.Pointer) bool {
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if pa == pb {
			return true
		}
		if pa == nil || pb == nil {
			return false
		}
		return elem(pa, pb)
	}
}

// structOf compares field by field, leaving out fields of no size.
func (c *equalCompiler) structOf(t reflect.Type) equalFunc {
	type field struct {
		offset uintptr
		equal  equalFunc
	}
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			return deepEqualAt(t)
		}
		if f.Type.Size() == 0 {
			continue
		}
		fields = append(fields, field{f.Offset, c.compile(f.Type)})
	}
	return func(a, b unsafe.Pointer) bool {
		for _, f := range fields {
			if !f.equal(unsafe.Add(a, f.offset), unsafe.Add(b, f.offset)) {
				return false
			}
		}
		return true
	}
}

// slice compares lengths, nil-ness (nil encodes as null, empty as []) and
// items.
func (c *equalCompiler) slice(t reflect.Type) equalFunc {
	elem, size := c.compile(t.Elem()), t.Elem().Size()
	return func(a, b unsafe.Pointer) bool {
		sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
		if sa.len != sb.len || (sa.data == nil) != (sb.data == nil) {
			return false
		}
		if sa.data == sb.data || size == 0 {
			return true
		}
		for i := range uintptr(sa.len) {
			if !elem(unsafe.Add(sa.data, i*size), unsafe.Add(sb.data, i*size)) {
				return false
			}
		}
		return true
	}
}

func (c *equalCompiler) array(t reflect.Type) equalFunc {
	elem, size, n := c.compile(t.Elem()), t.Elem().Size(), uintptr(t.Len())
	return func(a, b unsafe.Pointer) bool {
		for i := range n {
			if !elem(unsafe.Add(a, i*size), unsafe.Add(b, i*size)) {
				return false
			}
		}
		return true
	}
}

// mapOf compares lengths, nil-ness and each key's value. Map values are not
// addressable: each is copied out to be compared. Apply configurations hold
// few maps, labels and annotations (map[string]string, compiled apart).
func (c *equalCompiler) mapOf(t reflect.Type) equalFunc {
	elem := c.compile(t.Elem())
	return func(a, b unsafe.Pointer) bool {
		ma, mb := reflect.NewAt(t, a).Elem(), reflect.NewAt(t, b).Elem()
		if ma.Len() != mb.Len() || ma.IsNil() != mb.IsNil() {
			return false
		}
		va, vb := reflect.New(t.Elem()).Elem(), reflect.New(t.Elem()).Elem()
		iter := ma.MapRange()
		for iter.Next() {
			other := mb.MapIndex(iter.Key())
			if !other.IsValid() {
				return false
			}
			va.Set(iter.Value())
			vb.Set(other)
			if !elem(va.Addr().UnsafePointer(), vb.Addr().UnsafePointer()) {
				return false
			}
		}
		return true
	}
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	if len(a) == 0 {
		return true // no iteration: most apply configurations hold no labels or annotations
	}
	for k, va := range a {
		if vb, ok := b[k]; !ok || va != vb {
			return false
		}
	}
	return true
}

// scalarEqual compares numbers of t's kind by value (a float NaN equals
// nothing, as encoding it fails anyway).
func scalarEqual(t reflect.Type) equalFunc {
	switch t.Kind() {
	case reflect.Int8, reflect.Uint8:
		return func(a, b unsafe.Pointer) bool { return *(*uint8)(a) == *(*uint8)(b) }
	case reflect.Int16, reflect.Uint16:
		return func(a, b unsafe.Pointer) bool { return *(*uint16)(a) == *(*uint16)(b) }
	case reflect.Int32, reflect.Uint32:
		return func(a, b unsafe.Pointer) bool { return *(*uint32)(a) == *(*uint32)(b) }
	case reflect.Float32:
		return func(a, b unsafe.Pointer) bool { return *(*float32)(a) == *(*float32)(b) }
	case reflect.Float64:
		return func(a, b unsafe.Pointer) bool { return *(*float64)(a) == *(*float64)(b) }
	}
	// int, int64, uint, uint64, uintptr: 8 bytes on the platforms Go
	// targets for Kubernetes clients; read them by size to be sure.
	if t.Size() == 4 {
		return func(a, b unsafe.Pointer) bool { return *(*uint32)(a) == *(*uint32)(b) }
	}
	return func(a, b unsafe.Pointer) bool { return *(*uint64)(a) == *(*uint64)(b) }
}

// deepEqualAt compares values of t with reflect.DeepEqual.
func deepEqualAt(t reflect.Type) equalFunc {
	return func(a, b unsafe.Pointer) bool {
		return reflect.DeepEqual(reflect.NewAt(t, a).Elem().Interface(), reflect.NewAt(t, b).Elem().Interface())
	}
}

// Every typed intent holds its object's identity (kind, apiVersion, name,
// namespace, uid), and every steady reconcile compares it: the metadata and
// type metadata are compared field by field in code rather than by a closure
// per field, whose scattered closures cost more to reach than to run. Each
// stands in for the compiled comparison only while the type has exactly the
// fields it compares (a client-go that adds one gets the compiled
// comparison), and compares as it would.

var typeMetaACType = reflect.TypeFor[metav1ac.TypeMetaApplyConfiguration]()

// objectMetaFields are the fields of ObjectMetaApplyConfiguration, in order,
// that objectMeta's comparison reads.
var objectMetaFields = []string{"Name", "GenerateName", "Namespace", "UID", "ResourceVersion", "Generation",
	"CreationTimestamp", "DeletionTimestamp", "DeletionGracePeriodSeconds", "Labels", "Annotations",
	"OwnerReferences", "Finalizers"}

// hasFields reports whether struct type t has exactly the fields named, in
// that order.
func hasFields(t reflect.Type, names []string) bool {
	if t.NumField() != len(names) {
		return false
	}
	for i, name := range names {
		if t.Field(i).Name != name {
			return false
		}
	}
	return true
}

// objectMeta compares ObjectMetaApplyConfiguration values.
func (c *equalCompiler) objectMeta(t reflect.Type) (equalFunc, bool) {
	if !hasFields(t, objectMetaFields) {
		return nil, false
	}
	owners := c.compile(reflect.TypeFor[[]metav1ac.OwnerReferenceApplyConfiguration]())
	return func(a, b unsafe.Pointer) bool {
		x, y := (*metav1ac.ObjectMetaApplyConfiguration)(a), (*metav1ac.ObjectMetaApplyConfiguration)(b)
		return equalPtr(x.Name, y.Name) && equalPtr(x.Namespace, y.Namespace) && equalPtr(x.UID, y.UID) &&
			equalPtr(x.GenerateName, y.GenerateName) && equalPtr(x.ResourceVersion, y.ResourceVersion) &&
			equalPtr(x.Generation, y.Generation) && equalTime(x.CreationTimestamp, y.CreationTimestamp) &&
			equalTime(x.DeletionTimestamp, y.DeletionTimestamp) &&
			equalPtr(x.DeletionGracePeriodSeconds, y.DeletionGracePeriodSeconds) &&
			equalStringMaps(x.Labels, y.Labels) && equalStringMaps(x.Annotations, y.Annotations) &&
			owners(unsafe.Pointer(&x.OwnerReferences), unsafe.Pointer(&y.OwnerReferences)) &&
			len(x.Finalizers) == len(y.Finalizers) && (x.Finalizers == nil) == (y.Finalizers == nil) &&
			slices.Equal(x.Finalizers, y.Finalizers)
	}, true
}

// typeMeta compares TypeMetaApplyConfiguration values.
func typeMeta(t reflect.Type) (equalFunc, bool) {
	if !hasFields(t, []string{"Kind", "APIVersion"}) {
		return nil, false
	}
	return func(a, b unsafe.Pointer) bool {
		x, y := (*metav1ac.TypeMetaApplyConfiguration)(a), (*metav1ac.TypeMetaApplyConfiguration)(b)
		return equalPtr(x.Kind, y.Kind) && equalPtr(x.APIVersion, y.APIVersion)
	}, true
}

// equalTime compares times as they encode, to the second.
func equalTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Unix() == b.Unix()
}
