package ssa

import (
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// acFromConditions converts content made of an object's identity and status
// conditions alone to a new apply configuration of lay's type, as
// runtime.DefaultUnstructuredConverter does, without its reflection. That is
// what a field manager that writes conditions owns, and an Applier that
// remembers nothing of the object (after a restart, or in a Flush of many
// objects) converts it for every entry it builds: the converter cost more
// than the rest of the build.
//
// ok is false, and nothing is built, for any other content: top-level fields
// other than apiVersion, kind, metadata and status; metadata other than a
// name and a namespace; a status other than its conditions; a condition
// field that is not one of metav1.Condition's, or a value of another type
// than unstructured content holds for it; a lastTransitionTime that does not
// parse. The general conversion takes those, and reports their errors.
// FuzzConditionsConversion holds the two to the same results.
func acFromConditions(lay *acLayout, content map[string]any) (ac any, ok bool) {
	if lay == nil || !lay.identityByName {
		return nil, false
	}
	var (
		apiVersion, kind *string
		meta             *metav1ac.ObjectMetaApplyConfiguration
		conds            []metav1ac.ConditionApplyConfiguration
		hasStatus        bool
	)
	for k, v := range content {
		switch k {
		case "apiVersion", "kind":
			s, isString := v.(string)
			if !isString {
				return nil, false
			}
			if k == "kind" {
				kind = &s
			} else {
				apiVersion = &s
			}
		case "metadata":
			if meta, ok = identityAC(v); !ok {
				return nil, false
			}
		case "status":
			if lay.conditions == nil || !lay.statusByName {
				return nil, false
			}
			if conds, ok = statusConditionsAC(v); !ok {
				return nil, false
			}
			hasStatus = true
		default:
			return nil, false
		}
	}
	out := reflect.New(lay.typ.Elem())
	v := out.Elem()
	if apiVersion != nil || kind != nil {
		tm, _ := v.FieldByIndex(lay.typeMeta).Addr().Interface().(*metav1ac.TypeMetaApplyConfiguration)
		tm.APIVersion, tm.Kind = apiVersion, kind
	}
	if meta != nil {
		v.FieldByIndex(lay.meta).Set(reflect.ValueOf(meta))
	}
	if hasStatus {
		status := reflect.New(v.Field(lay.conditions[0]).Type().Elem())
		status.Elem().Field(lay.conditions[1]).Set(reflect.ValueOf(conds))
		v.Field(lay.conditions[0]).Set(status)
	}
	return out.Interface(), true
}

// identityAC converts metadata holding at most a name and a namespace.
func identityAC(v any) (*metav1ac.ObjectMetaApplyConfiguration, bool) {
	md, isMap := v.(map[string]any)
	if !isMap {
		return nil, false
	}
	meta := &metav1ac.ObjectMetaApplyConfiguration{}
	for k, v := range md {
		s, isString := v.(string)
		if !isString {
			return nil, false
		}
		switch k {
		case "name":
			meta.Name = &s
		case "namespace":
			meta.Namespace = &s
		default:
			return nil, false
		}
	}
	return meta, true
}

// statusConditionsAC converts a status holding its conditions alone.
func statusConditionsAC(v any) ([]metav1ac.ConditionApplyConfiguration, bool) {
	status, isMap := v.(map[string]any)
	if !isMap || len(status) != 1 {
		return nil, false
	}
	items, isList := status["conditions"].([]any)
	if !isList {
		return nil, false
	}
	if items == nil {
		return nil, true // as the converter leaves a nil list
	}
	out := make([]metav1ac.ConditionApplyConfiguration, len(items))
	values := make([]conditionValues, len(items))
	for i, item := range items {
		if !conditionAt(item, &out[i], &values[i]) {
			return nil, false
		}
	}
	return out, true
}

// conditionAt converts one condition into c, its values kept in v.
func conditionAt(item any, c *metav1ac.ConditionApplyConfiguration, v *conditionValues) bool {
	fields, isMap := item.(map[string]any)
	if !isMap {
		return false
	}
	for k, x := range fields {
		if k == "observedGeneration" {
			n, isInt := x.(int64)
			if !isInt {
				return false
			}
			v.observedGeneration, c.ObservedGeneration = n, &v.observedGeneration
			continue
		}
		s, isString := x.(string)
		if !isString {
			return false
		}
		switch k {
		case "type":
			v.typ, c.Type = s, &v.typ
		case "status":
			v.status, c.Status = s, (*metav1.ConditionStatus)(&v.status)
		case "reason":
			v.reason, c.Reason = s, &v.reason
		case "message":
			v.message, c.Message = s, &v.message
		case "lastTransitionTime":
			// As metav1.Time's UnmarshalJSON reads it, which the converter
			// calls: an RFC 3339 time, in the local zone.
			at, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return false
			}
			v.lastTransitionTime, c.LastTransitionTime = metav1.NewTime(at.Local()), &v.lastTransitionTime
		default:
			return false
		}
	}
	return true
}
