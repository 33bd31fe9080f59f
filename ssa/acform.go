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

	"github.com/statusapply/statusapply/internal/conditionac"
	"github.com/statusapply/statusapply/internal/objects"
)

// A typed entry stays in the apply configuration type its mutators edit: it is
// copied, compared and encoded as is, never through unstructured content.

// acIdentity is what every generated apply configuration tells of its object.
type acIdentity interface {
	GetName() *string
	GetNamespace() *string
	GetKind() *string
	GetAPIVersion() *string
}

// acLayout is where one apply configuration type keeps its object metadata and
// status conditions, found once per type by reflection.
type acLayout struct {
	typ reflect.Type
	// meta is the index path of the embedded *ObjectMetaApplyConfiguration.
	meta []int
	// conditions is the index path of metav1 Status.Conditions, or nil.
	conditions []int
}

var (
	objectMetaACType = reflect.TypeFor[*metav1ac.ObjectMetaApplyConfiguration]()
	conditionsACType = reflect.TypeFor[[]metav1ac.ConditionApplyConfiguration]()
)

// layouts caches acLayout per type; a process has few types, so no bound.
type layouts struct{ m sync.Map }

// shared returns the cache's one copy of typ's layout, not to be modified, or nil.
func (l *layouts) shared(typ reflect.Type) *acLayout {
	if v, ok := l.m.Load(typ); ok {
		lay, _ := v.(*acLayout)
		return lay
	}
	v, _ := l.m.LoadOrStore(typ, findLayout(typ))
	lay, _ := v.(*acLayout)
	return lay
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
	}
	if sl, ok := objects.FindStatusList(typ, "conditions", conditionsACType); ok && sl.StatusPtr {
		lay.conditions = []int{sl.Status, sl.List}
	}
	if lay.meta == nil {
		return nil
	}
	return lay
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

// checkIdentity refuses an apply configuration naming another object than t's.
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

// newACFrom returns a new typ holding content, which must name the object.
func newACFrom(typ reflect.Type, lay *acLayout, content map[string]any) (any, error) {
	ac := reflect.New(typ.Elem()).Interface()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, ac); err != nil {
		return nil, fmt.Errorf("converting to %v: %w", typ, err)
	}
	return ac, nil
}

// withIdentity returns a copy of content carrying t's identity.
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

// deepCopyAC copies an apply configuration by reflection, since generated ones
// have no DeepCopy and JSON is slower. Structs are copied whole (a time's
// unexported fields are values), then every exported reference below again.
func deepCopyAC(v any) any {
	return deepCopyValue(reflect.ValueOf(v)).Interface()
}

func deepCopyValue(v reflect.Value) reflect.Value {
	if v.Type() == conditionsACType {
		return reflect.ValueOf(conditionac.Copy(conditionsOf(v)))
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

// deepCopyFields replaces what v, a settable shallow copy, still shares with
// its original. A time shares nothing; a non-struct is replaced whole.
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

// conditionsOf reads v through its address when it can: boxing a slice allocates.
func conditionsOf(v reflect.Value) []metav1ac.ConditionApplyConfiguration {
	if v.CanAddr() {
		p, _ := v.Addr().Interface().(*[]metav1ac.ConditionApplyConfiguration)
		return *p
	}
	conds, _ := v.Interface().([]metav1ac.ConditionApplyConfiguration)
	return conds
}

var timeType = reflect.TypeFor[metav1.Time]()
