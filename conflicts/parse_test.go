package conflicts

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/ownership"
)

// flat is a Conflict reduced to strings for comparison.
type flat struct {
	Manager, Operation, Subresource, APIVersion, Path, ConditionType string
}

func flatten(cs []Conflict) []flat {
	out := make([]flat, 0, len(cs))
	for _, c := range cs {
		out = append(out, flat{c.Manager, string(c.Operation), c.Subresource, c.APIVersion, c.Path.String(), c.ConditionType})
	}
	return out
}

const demoV1 = "demo.statusapply.io/v1alpha1"

var (
	wantSeveralByMessage = []flat{
		{"legacy", "Update", "status", demoV1, ".status.phase", ""},
		{"legacy", "Update", "status", demoV1, `.status.conditions[type="Synced"].status`, "Synced"},
		{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].status`, "Ready"},
	}
	wantSeveralByCauses = []flat{
		{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].status`, "Ready"},
		{"legacy", "Update", "status", demoV1, ".status.phase", ""},
		{"legacy", "Update", "status", demoV1, `.status.conditions[type="Synced"].status`, "Synced"},
	}
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want []flat
	}{
		{"Apply owner, several fields", msgApplyOwner, []flat{
			{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].message`, "Ready"},
			{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].reason`, "Ready"},
			{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].status`, "Ready"},
		}},
		{"Update owner with apiVersion", msgUpdateOwner, []flat{
			{"legacy", "Update", "status", demoV1, `.status.conditions[type="Ready"].status`, "Ready"},
		}},
		{"before-first-apply", msgBeforeFirstApply, []flat{
			{ownership.BeforeFirstApplyManager, "Update", "status", demoV1, `.status.conditions[type="Ready"].status`, "Ready"},
		}},
		{"several owners", msgSeveral, wantSeveralByMessage},
		{"main resource, Update owner with time", msgMainResource, []flat{
			{"foo", "Update", "", "v1", ".spec.replicas", ""},
		}},
		{"main resource, Apply owner", `Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`, []flat{
			{"kubectl", "Apply", "", "", ".spec.replicas", ""},
		}},
		{"quoted manager name", `Apply failed with 1 conflict: conflict with "a \"b\"" with subresource "scale" using apps/v1: .spec.replicas`, []flat{
			{`a "b"`, "Update", "scale", "apps/v1", ".spec.replicas", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMessage(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(flatten(got), tt.want) {
				t.Fatalf("got %+v\nwant %+v", flatten(got), tt.want)
			}
		})
	}
}

func TestParseMessageMalformed(t *testing.T) {
	for _, msg := range []string{
		"",
		msgStale,
		"Apply failed with ",
		"Apply failed with 0 conflicts: ",
		"Apply failed with 1 conflict: ",
		`Apply failed with 1 conflict: conflict with legacy: .status.phase`,
		`Apply failed with 1 conflict: conflict with "legacy .status.phase`,
		`Apply failed with 1 conflict: conflict with "legacy" .status.phase`,
		`Apply failed with 1 conflict: conflict with "legacy": status`,
		`Apply failed with 1 conflict: conflict with "legacy" with subresource status: .a`,
		`Apply failed with 1 conflict: conflict with "legacy" using v1 at yesterday: .a`,
		`Apply failed with 2 conflicts: conflicts with "a":` + "\n- .x",
		`Apply failed with 2 conflicts: - .x` + "\n- .y",
		`Apply failed with 2 conflicts: conflicts with "a"` + "\n- .x\n- .y",
		`Apply failed with 2 conflicts: conflicts with "a":` + "\n- .x\n- [",
		`Apply failed with 99999999999999999999999 conflicts: `,
	} {
		t.Run(msg, func(t *testing.T) {
			got, err := ParseMessage(msg)
			if err == nil {
				t.Fatalf("ParseMessage(%q) = %+v, want an error", msg, got)
			}
		})
	}
}

func TestParseUsesCausesFirst(t *testing.T) {
	got, err := Parse(recordedSeveral())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(flatten(got), wantSeveralByCauses) {
		t.Fatalf("got %+v\nwant %+v", flatten(got), wantSeveralByCauses)
	}
}

func TestParseFallsBackToMessage(t *testing.T) {
	got, err := Parse(conflictStatus(msgSeveral))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(flatten(got), wantSeveralByMessage) {
		t.Fatalf("got %+v\nwant %+v", flatten(got), wantSeveralByMessage)
	}
}

func TestParseWrappedAndJoined(t *testing.T) {
	for name, err := range map[string]error{
		"wrapped": fmt.Errorf("flushing: %w", recordedUpdateOwner()),
		"joined":  errors.Join(errors.New("other manager failed"), recordedStale(), fmt.Errorf("x: %w", recordedUpdateOwner())),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(err)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Manager != "legacy" || got[0].ConditionType != "Ready" {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestParseRefusesOtherErrors(t *testing.T) {
	for _, err := range []error{nil, errors.New("boom"), recordedStale()} {
		if _, perr := Parse(err); !errors.Is(perr, ErrNotFieldConflict) {
			t.Errorf("Parse(%v) error = %v, want ErrNotFieldConflict", err, perr)
		}
	}
}

func TestParseCause(t *testing.T) {
	c, err := ParseCause(metav1.StatusCause{
		Type:    metav1.CauseTypeFieldManagerConflict,
		Message: `conflict with "before-first-apply" using demo.statusapply.io/v1alpha1`,
		Field:   `.status.conditions[type="Ready"]`,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := flat{ownership.BeforeFirstApplyManager, "Update", "", demoV1, `.status.conditions[type="Ready"]`, "Ready"}
	if got := flatten([]Conflict{c})[0]; got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}

	for _, bad := range []metav1.StatusCause{
		{Message: `conflicts with "a"`, Field: ".a"},
		{Message: `conflict with "a" trailing`, Field: ".a"},
		{Message: `conflict with "a"`, Field: "a"},
		{Message: `conflict with "a`, Field: ".a"},
	} {
		if _, err := ParseCause(bad); err == nil || !strings.Contains(err.Error(), "conflict cause") {
			t.Errorf("ParseCause(%+v) error = %v, want a conflict cause error", bad, err)
		}
	}
}

func TestParseStatusReportsBrokenCauses(t *testing.T) {
	st := conflictStatus(msgUpdateOwner, metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: "garbage"})
	if _, err := ParseStatus(st.ErrStatus); err == nil {
		t.Fatal("want an error for an unparseable cause")
	}
}
