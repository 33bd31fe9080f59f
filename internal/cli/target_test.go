package cli

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    target
		wantErr string
	}{
		{name: "type only", args: []string{"widgets"}, want: target{Resource: "widgets"}},
		{name: "type and names", args: []string{"widget", "a", "b"}, want: target{Resource: "widget", Names: []string{"a", "b"}}},
		{name: "type/name", args: []string{"widgets.demo.statusapply.io/w1"},
			want: target{Resource: "widgets.demo.statusapply.io", Names: []string{"w1"}}},
		{name: "several type/name of one type", args: []string{"widget/a", "widget/b"},
			want: target{Resource: "widget", Names: []string{"a", "b"}}},
		{name: "no arguments", args: nil, wantErr: "resource type is required"},
		{name: "empty type", args: []string{""}, wantErr: "resource type is empty"},
		{name: "type/name after a type", args: []string{"widget", "widget/a"}, wantErr: "no need to give a resource type"},
		{name: "bare name after type/name", args: []string{"widget/a", "b"}, wantErr: "give every argument as TYPE/NAME"},
		{name: "two types", args: []string{"widget/a", "gadget/b"}, wantErr: "one resource type"},
		{name: "empty name", args: []string{"widget/"}, wantErr: "not of the form TYPE/NAME"},
		{name: "extra slash", args: []string{"widget/a/b"}, wantErr: "not of the form TYPE/NAME"},
		{name: "empty name after type", args: []string{"widget", ""}, wantErr: "name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTarget(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseTarget(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseTarget(%q): %v", tt.args, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseTarget(%q) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}
