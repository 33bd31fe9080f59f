package ssa

import (
	"fmt"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
)

// This file handles apply configurations in their own Go types (generated
// ones such as *WidgetApplyConfiguration, or client-go's), so that a typed
// entry never leaves the form its mutators edit: it is copied, compared and
// encoded as it is, without a detour through unstructured content.

// acIdentity is what every generated apply configuration tells about the
// object it names.
type acIdentity interface {
	GetName() *string
	GetNamespace() *string
	GetKind() *string
	GetAPIVersion() *string
}

// acLayout is where, in one apply configuration type, the object metadata and
// the status conditions live; found once per type by reflection.
type acLayout struct {
	// typ is the apply configuration type, a pointer to a struct.
	typ reflect.Type
	// meta is the index path of the embedded *ObjectMetaApplyConfiguration.
	meta []int
	// conditions is the index path of Status.Conditions when it is a list of
	// metav1 ConditionApplyConfiguration; nil otherwise.
	conditions []int
	// equal compares two values of the struct the type points to (see
	// acLayout.equalAC).
	equal equalFunc
}

var (
	objectMetaACType = reflect.TypeFor[*metav1ac.ObjectMetaApplyConfiguration]()
	conditionsACType = reflect.TypeFor[[]metav1ac.ConditionApplyConfiguration]()
)

// layouts caches acLayout per apply configuration type. Types are a closed,
// small set in a process, so the cache needs no bound.
type layouts struct{ m sync.Map }

// of returns typ's layout; ok is false when typ is not a pointer to a struct
// with embedded object metadata, which the typed path needs.
func (l *layouts) of(typ reflect.Type) (acLayout, bool) {
	return derefLayout(l.shared(typ))
}

// shared returns the one copy of typ's layout the cache keeps, which callers
// must not modify; nil when typ has none (see of).
func (l *layouts) shared(typ reflect.Type) *acLayout {
	if v, ok := l.m.Load(typ); ok {
		lay, _ := v.(*acLayout)
		return lay
	}
	v, _ := l.m.LoadOrStore(typ, findLayout(typ))
	lay, _ := v.(*acLayout)
	return lay
}

func derefLayout(l *acLayout) (acLayout, bool) {
	if l == nil {
		return acLayout{}, false
	}
	return *l, true
}

func findLayout(typ reflect.Type) *acLayout {
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return nil
	}
	st := typ.Elem()
	lay := &acLayout{typ: typ}
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Anonymous && f.Type == objectMetaACType {
			lay.meta = []int{i}
		}
		if f.Name == "Status" && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			if c, ok := f.Type.Elem().FieldByName("Conditions"); ok && c.Type == conditionsACType && len(c.Index) == 1 {
				lay.conditions = []int{i, c.Index[0]}
			}
		}
	}
	if lay.meta == nil {
		return nil
	}
	lay.equal = compileEqual(st)
	return lay
}

// equalAC reports whether two apply configurations of the layout's type
// would encode to the same JSON (see equalFunc), with the comparison
// compiled once for the type.
func (lay acLayout) equalAC(a, b any) bool {
	return equalPointees(lay.equal, a, b)
}

// objectMeta returns ac's object metadata, allocating it when asked to.
func (lay acLayout) objectMeta(ac any, create bool) *metav1ac.ObjectMetaApplyConfiguration {
	f := reflect.ValueOf(ac).Elem().FieldByIndex(lay.meta)
	if f.IsNil() {
		if !create {
			return nil
		}
		f.Set(reflect.ValueOf(&metav1ac.ObjectMetaApplyConfiguration{}))
	}
	m, _ := f.Interface().(*metav1ac.ObjectMetaApplyConfiguration)
	return m
}

// setObjectMeta makes m ac's object metadata.
func (lay acLayout) setObjectMeta(ac any, m *metav1ac.ObjectMetaApplyConfiguration) {
	reflect.ValueOf(ac).Elem().FieldByIndex(lay.meta).Set(reflect.ValueOf(m))
}

// statusConditions returns ac's status conditions; has is false when the
// type keeps no metav1 conditions there or the status is not set.
func (lay acLayout) statusConditions(ac any) (conds []metav1ac.ConditionApplyConfiguration, has bool) {
	if lay.conditions == nil {
		return nil, false
	}
	status := reflect.ValueOf(ac).Elem().Field(lay.conditions[0])
	if status.IsNil() {
		return nil, false
	}
	f := status.Elem().Field(lay.conditions[1])
	if f.IsNil() {
		return nil, false
	}
	conds, _ = f.Interface().([]metav1ac.ConditionApplyConfiguration)
	return conds, true
}

// setUID sets the uid the apply carries (see Applier.Apply).
func (lay acLayout) setUID(ac any, uid types.UID) {
	if uid != "" {
		lay.objectMeta(ac, true).UID = &uid
	}
}

// checkIdentity refuses an apply configuration that names another object
// than t's.
func checkIdentity(t Target, ac any) error {
	id, ok := ac.(acIdentity)
	if !ok {
		return invalidf("%T does not name its object (no GetName/GetKind)", ac)
	}
	gv, err := schema.ParseGroupVersion(ptr.Deref(id.GetAPIVersion(), ""))
	if err != nil {
		return invalidf("the apply configuration's apiVersion: %v", err)
	}
	got := gv.WithKind(ptr.Deref(id.GetKind(), ""))
	name, ns := ptr.Deref(id.GetName(), ""), ptr.Deref(id.GetNamespace(), "")
	if got != t.GVK || name != t.Name || ns != t.Namespace {
		return invalidf("the apply configuration names %s %s/%s, not the object it was queued for", got.Kind, ns, name)
	}
	return nil
}

// newACFrom returns a new apply configuration of type typ, whose layout is
// lay (nil when unknown), holding content, which must name the object.
func newACFrom(typ reflect.Type, lay *acLayout, content map[string]any) (any, error) {
	ac := reflect.New(typ.Elem()).Interface()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, ac); err != nil {
		return nil, fmt.Errorf("converting to %v: %w", typ, err)
	}
	return ac, nil
}

// withIdentity returns content (not modified) with apiVersion, kind, name
// and namespace of t, for converting owned fields to an apply configuration.
func withIdentity(t Target, content map[string]any) map[string]any {
	out := make(map[string]any, len(content)+3)
	for k, v := range content {
		out[k] = v
	}
	u := &unstructured.Unstructured{Object: out}
	if md, ok := content["metadata"].(map[string]any); ok {
		copied := make(map[string]any, len(md)+2)
		for k, v := range md {
			copied[k] = v
		}
		out["metadata"] = copied
	}
	u.SetGroupVersionKind(t.GVK)
	u.SetName(t.Name)
	if t.Namespace != "" {
		u.SetNamespace(t.Namespace)
	}
	return out
}

// deepCopyAC copies an apply configuration by reflection: generated apply
// configurations have no DeepCopy, and a JSON round trip would cost several
// times more. Structs are copied whole first (unexported fields, such as
// those of a metav1.Time, are values), then every exported pointer, slice,
// map and interface below is copied again.
func deepCopyAC(v any) any {
	return deepCopyValue(reflect.ValueOf(v)).Interface()
}

func deepCopyValue(v reflect.Value) reflect.Value {
	if v.Type() == conditionsACType {
		return reflect.ValueOf(copyConditions(conditionsOf(v)))
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(v.Elem())
		deepCopyFields(out.Elem())
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		deepCopyFields(out)
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(deepCopyValue(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), deepCopyValue(iter.Value()))
		}
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(deepCopyValue(v.Elem()))
		return out
	}
	return v
}

// deepCopyFields replaces, in a settable value that is a shallow copy, what
// the copy still shares with its original: the referenced values of its
// exported fields, and of its nested structs' fields. A time shares nothing.
// A value that is not a struct (a pointer to a string, say) is replaced whole.
func deepCopyFields(v reflect.Value) {
	if v.Kind() != reflect.Struct {
		v.Set(deepCopyValue(v))
		return
	}
	if v.Type() == timeType {
		return
	}
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() { // unexported: copied with the struct
			continue
		}
		switch f.Kind() {
		case reflect.Struct:
			deepCopyFields(f)
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			f.Set(deepCopyValue(f))
		}
	}
}

// conditionsOf reads a []ConditionApplyConfiguration value, through its
// address when it has one (boxing a slice header would allocate).
func conditionsOf(v reflect.Value) []metav1ac.ConditionApplyConfiguration {
	if v.CanAddr() {
		p, _ := v.Addr().Interface().(*[]metav1ac.ConditionApplyConfiguration)
		return *p
	}
	conds, _ := v.Interface().([]metav1ac.ConditionApplyConfiguration)
	return conds
}

var timeType = reflect.TypeFor[metav1.Time]()

// equalConditions compares lists of conditions as equalFunc does, without reflection.
func equalConditions(a, b []metav1ac.ConditionApplyConfiguration) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if !equalCondition(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// equalCondition compares one condition as equalFunc does, without reflection.
func equalCondition(x, y *metav1ac.ConditionApplyConfiguration) bool {
	if !equalPtr(x.Type, y.Type) || !equalPtr(x.Status, y.Status) || !equalPtr(x.Reason, y.Reason) ||
		!equalPtr(x.Message, y.Message) || !equalPtr(x.ObservedGeneration, y.ObservedGeneration) {
		return false
	}
	return equalTime(x.LastTransitionTime, y.LastTransitionTime)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// conditionValues holds what one condition's pointers point to, so that a
// copied condition takes one allocation instead of one per field.
type conditionValues struct {
	typ, status, reason, message string
	observedGeneration           int64
	lastTransitionTime           metav1.Time
}

// copyConditions deep-copies a list of conditions, the bulk of most status
// apply configurations, without reflection: every field of every copy points
// into one fresh backing array, so a mutator writing through a copy's
// pointers cannot reach the original.
func copyConditions(in []metav1ac.ConditionApplyConfiguration) []metav1ac.ConditionApplyConfiguration {
	if in == nil {
		return nil
	}
	out := make([]metav1ac.ConditionApplyConfiguration, len(in))
	values := make([]conditionValues, len(in))
	for i := range in {
		c, v := &in[i], &values[i]
		if c.Type != nil {
			v.typ = *c.Type
			out[i].Type = &v.typ
		}
		if c.Status != nil {
			v.status = string(*c.Status)
			out[i].Status = (*metav1.ConditionStatus)(&v.status)
		}
		if c.Reason != nil {
			v.reason = *c.Reason
			out[i].Reason = &v.reason
		}
		if c.Message != nil {
			v.message = *c.Message
			out[i].Message = &v.message
		}
		if c.ObservedGeneration != nil {
			v.observedGeneration = *c.ObservedGeneration
			out[i].ObservedGeneration = &v.observedGeneration
		}
		if c.LastTransitionTime != nil {
			v.lastTransitionTime = *c.LastTransitionTime
			out[i].LastTransitionTime = &v.lastTransitionTime
		}
	}
	return out
}
