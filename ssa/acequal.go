package ssa

import (
	"reflect"
	"slices"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// Every reconcile compares its intent with what the manager owns; walking them
// with reflect.Value spends most of that on fields nil on both sides. So each
// apply configuration type is compiled once into an equalFunc: closures that
// read fields at their offsets and skip pointers nil or the same on both sides.

// equalFunc reports whether the values at a and b would encode to the same
// JSON: times to the second; structs with unexported fields (times aside) and
// interfaces by reflect.DeepEqual.
type equalFunc func(a, b unsafe.Pointer) bool

// equalPointees compares what a and b, pointers of one type, point to with
// equal; compiling costs far more than comparing, so callers keep equal.
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

func compileEqual(t reflect.Type) equalFunc {
	return (&equalCompiler{done: map[reflect.Type]*equalFunc{}}).compile(t)
}

// equalCompiler compiles each type once; a recursive type calls its own
// comparison through the slot it is compiled into.
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

// pointer compares pointees; the same pointer, or two nil ones, are equal.
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

// slice compares lengths, nil-ness (null versus []) and items.
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

// mapOf compares lengths, nil-ness and values, each copied out as map values
// are not addressable; string maps are compiled apart.
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
	// int, int64, uint, uint64, uintptr: read by size.
	if t.Size() == 4 {
		return func(a, b unsafe.Pointer) bool { return *(*uint32)(a) == *(*uint32)(b) }
	}
	return func(a, b unsafe.Pointer) bool { return *(*uint64)(a) == *(*uint64)(b) }
}

func deepEqualAt(t reflect.Type) equalFunc {
	return func(a, b unsafe.Pointer) bool {
		return reflect.DeepEqual(reflect.NewAt(t, a).Elem().Interface(), reflect.NewAt(t, b).Elem().Interface())
	}
}

// Metadata and type metadata, in every typed intent, are compared in code:
// closures per field cost more to reach than to run. Each stands in for the
// compiled comparison only while the type has exactly the fields it compares.

var typeMetaACType = reflect.TypeFor[metav1ac.TypeMetaApplyConfiguration]()

// objectMetaFields are the ObjectMetaApplyConfiguration fields objectMeta reads.
var objectMetaFields = []string{"Name", "GenerateName", "Namespace", "UID", "ResourceVersion", "Generation",
	"CreationTimestamp", "DeletionTimestamp", "DeletionGracePeriodSeconds", "Labels", "Annotations",
	"OwnerReferences", "Finalizers"}

// hasFields reports whether struct type t has exactly names' fields, in order.
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
