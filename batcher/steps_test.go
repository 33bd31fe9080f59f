package batcher

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

func TestSteps(t *testing.T) {
	typed := contribution{call: mutatorCaller[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration]{}}
	unstr := contribution{call: mutatorCaller[*v1alpha1.Widget, *unstructured.Unstructured]{}}
	edit := contribution{call: editCaller[*v1alpha1.Widget]{}}
	editU := contribution{call: editCaller[*unstructured.Unstructured]{}}
	cases := []struct {
		name     string
		contribs []contribution
		want     []step
	}{
		{"none", nil, nil},
		{"one", []contribution{typed}, []step{{0, 1}}},
		{"mutators of one type share a step", []contribution{typed, typed, typed}, []step{{0, 3}}},
		{"a new type starts a step", []contribution{typed, unstr, typed}, []step{{0, 1}, {1, 2}, {2, 3}}},
		{"edits of one type share a step", []contribution{edit, edit, typed}, []step{{0, 2}, {2, 3}}},
		{"edits of another type do not", []contribution{edit, editU, edit}, []step{{0, 1}, {1, 2}, {2, 3}}},
		{"a mutator between edits splits them", []contribution{edit, typed, edit}, []step{{0, 1}, {1, 2}, {2, 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := steps(tc.contribs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("steps = %v, want %v", got, tc.want)
			}
		})
	}
}
