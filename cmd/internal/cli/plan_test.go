package cli

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
)

func TestParseAssignments(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		want    map[string]string
		wantErr string
	}{
		{name: "none", values: nil, want: nil},
		{name: "several", values: []string{"legacy=summary", "old=readiness"},
			want: map[string]string{"legacy": "summary", "old": "readiness"}},
		{name: "spaces trimmed", values: []string{" Ready = readiness "}, want: map[string]string{"Ready": "readiness"}},
		{name: "same twice", values: []string{"a=b", "a=b"}, want: map[string]string{"a": "b"}},
		{name: "conflicting twice", values: []string{"a=b", "a=c"}, wantErr: `"a" is given to both "b" and "c"`},
		{name: "no equals", values: []string{"legacy"}, wantErr: "want KEY=MANAGER"},
		{name: "empty key", values: []string{"=summary"}, wantErr: "want KEY=MANAGER"},
		{name: "empty value", values: []string{"legacy="}, wantErr: "want KEY=MANAGER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAssignments("--from", tt.values)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--from") {
					t.Fatalf("error = %v, want one naming --from and containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlanFlags(t *testing.T) {
	tests := []struct {
		name        string
		flags       planFlags
		want        fleet.Plan
		wantErr     string
		invalidPlan bool
	}{
		{
			name:  "managers and conditions",
			flags: planFlags{from: []string{"legacy=summary"}, conditions: []string{"A=readiness"}},
			want: fleet.Plan{
				Managers: map[string]string{"legacy": "summary"}, Conditions: map[string]string{"A": "readiness"},
			},
		},
		{name: "release only", flags: planFlags{releaseShared: true}, want: fleet.Plan{ReleaseShared: true}},
		{name: "nothing", flags: planFlags{}, wantErr: "nothing to migrate"},
		{name: "bad condition", flags: planFlags{conditions: []string{"A"}}, wantErr: "--condition"},
		{
			name:        "before-first-apply as target",
			flags:       planFlags{from: []string{"legacy=" + ownership.BeforeFirstApplyManager}},
			wantErr:     "cannot be an apply manager",
			invalidPlan: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.flags.plan()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if tt.invalidPlan && !errors.Is(err, fleet.ErrInvalidPlan) {
					t.Fatalf("error = %v, want ErrInvalidPlan", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
