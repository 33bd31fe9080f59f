package ssa

import (
	"reflect"
	"testing"

	"github.com/statusapply/statusapply/conflicts"
)

func TestApplyOptions(t *testing.T) {
	yield := conflicts.Yield()
	fail := conflicts.Fail()
	cases := []struct {
		name string
		opts []ApplyOption
		want ApplyOptions
	}{
		{"none", nil, ApplyOptions{}},
		{"guarded", []ApplyOption{Guarded}, ApplyOptions{Guarded: true}},
		{"a false guard sets nothing", []ApplyOption{Guard(false)}, ApplyOptions{}},
		{"declarative", []ApplyOption{Declarative}, ApplyOptions{Mode: Declarative}},
		{"the last mode wins", []ApplyOption{Declarative, Incremental}, ApplyOptions{Mode: Incremental}},
		{"policy", []ApplyOption{OnConflict(conflicts.Yield())}, ApplyOptions{Policy: &yield}},
		{"the last policy wins", []ApplyOption{OnConflict(conflicts.Yield()), OnConflict(conflicts.Fail())}, ApplyOptions{Policy: &fail}},
		{"all", []ApplyOption{Guarded, Declarative, OnConflict(conflicts.Yield())}, ApplyOptions{Mode: Declarative, Guarded: true, Policy: &yield}},
		// Combining whole option sets, as a batch entry combines its
		// contributions: what one sets survives the next that does not.
		{"merged sets keep what is set", []ApplyOption{
			&ApplyOptions{Guarded: true, Policy: &yield}, &ApplyOptions{Mode: Declarative}, &ApplyOptions{},
		}, ApplyOptions{Mode: Declarative, Guarded: true, Policy: &yield}},
		{"dry run", []ApplyOption{DryRun}, ApplyOptions{DryRun: true}},
		{"dry run as owner", []ApplyOption{DryRunAsOwner}, ApplyOptions{DryRun: true, AsOwner: true}},
		{"the last dry run wins", []ApplyOption{DryRunAsOwner, DryRun}, ApplyOptions{DryRun: true}},
		{"a merged dry run as owner survives a set without one", []ApplyOption{
			&ApplyOptions{DryRun: true, AsOwner: true}, &ApplyOptions{Guarded: true},
		}, ApplyOptions{Guarded: true, DryRun: true, AsOwner: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := (&ApplyOptions{}).ApplyOptions(tc.opts)
			if got.Mode != tc.want.Mode || got.Guarded != tc.want.Guarded || got.DryRun != tc.want.DryRun || got.AsOwner != tc.want.AsOwner {
				t.Errorf("got %+v, want %+v", *got, tc.want)
			}
			switch {
			case (got.Policy == nil) != (tc.want.Policy == nil):
				t.Errorf("policy = %v, want %v", got.Policy, tc.want.Policy)
			case got.Policy != nil && !reflect.DeepEqual(*got.Policy, *tc.want.Policy):
				t.Errorf("policy = %v, want %v", *got.Policy, *tc.want.Policy)
			}
		})
	}
}

// Every use of an option gets its own copy of the policy: changing what one
// apply's options hold does not change the option for the next.
func TestOnConflictCopiesThePolicy(t *testing.T) {
	opt := OnConflict(conflicts.Yield())
	first := (&ApplyOptions{}).ApplyOptions([]ApplyOption{opt})
	*first.Policy = conflicts.Fail()
	second := (&ApplyOptions{}).ApplyOptions([]ApplyOption{opt})
	if !reflect.DeepEqual(*second.Policy, conflicts.Yield()) {
		t.Errorf("policy = %v, want Yield", *second.Policy)
	}
}
