package ssa

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type recursiveAC struct {
	Name  *string        `json:"name,omitempty"`
	Inner []recursiveAC  `json:"inner,omitempty"`
	Next  *recursiveAC   `json:"next,omitempty"`
	Time  *metav1.Time   `json:"time,omitempty"`
	Bytes []byte         `json:"bytes,omitempty"`
	Tags  map[string]int `json:"tags,omitempty"`
}

type plainAC struct {
	Name  *string           `json:"name,omitempty"`
	Count int               `json:"count,omitempty"`
	Time  metav1.Time       `json:"time"`
	Bytes []byte            `json:"bytes,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
	Items []struct {
		Key *string `json:"key,omitempty"`
	} `json:"items,omitempty"`
	Skipped any `json:"-"`
	hidden  any //nolint:unused // an unexported field: encoding/json and the probe leave it out
}

// TestProbeFill checks which Go types the probe stands for, and that a probe
// holds every field: no omitempty leaves one out.
func TestProbeFill(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		want string // the probe's JSON; empty: no probe
	}{
		{"plain", reflect.TypeFor[*plainAC](), `{"name":"probe","count":1,"time":"1970-01-01T00:00:01Z","bytes":"AQ==",` +
			`"tags":{"statusapply.probe":"probe"},"items":[{"key":"probe"}]}`},
		{"recursive", reflect.TypeFor[*recursiveAC](), ""},
		{"interface", reflect.TypeFor[*struct {
			X any `json:"x"`
		}](), ""},
		{"JSON of its own", reflect.TypeFor[*struct {
			X json.RawMessage `json:"x"`
		}](), ""},
		{"int or string", reflect.TypeFor[*struct {
			X *intstr.IntOrString `json:"x,omitempty"`
		}](), ""},
		{"omitzero", reflect.TypeFor[*struct {
			X int `json:"x,omitzero"`
		}](), ""},
		{"int keys", reflect.TypeFor[*struct {
			X map[int]string `json:"x"`
		}](), ""},
		{"array", reflect.TypeFor[*struct {
			X [2]string `json:"x"`
		}](), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe, _, err := (&prober{}).fill(tc.typ, 0)
			if tc.want == "" {
				if !errors.Is(err, errNoProbe) {
					t.Fatalf("fill = %v, want errNoProbe", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(probe.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("probe %s, want %s", got, tc.want)
			}
		})
	}
}

func TestEncodesNull(t *testing.T) {
	var nilMap map[string]string
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{(*string)(nil), true},
		{nilMap, true},
		{map[string]string{}, false},
		{[]string(nil), true},
		{metav1.Time{}, true},
		{&metav1.Time{}, true},
		{metav1.Unix(1, 0), false},
		{metav1.MicroTime{}, true},
		{"", false},
		{struct{}{}, false},
	} {
		body, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodesNull(reflect.ValueOf(tc.v)); got != tc.want || (string(body) == "null") != tc.want {
			t.Errorf("encodesNull(%#v) = %v, JSON %s, want %v", tc.v, got, body, tc.want)
		}
	}
}
