package cli

import (
	"bytes"
	"testing"
)

func TestOutputFormatSet(t *testing.T) {
	tests := []struct {
		value   string
		want    outputFormat
		wantErr bool
	}{
		{value: "table", want: outputTable},
		{value: "json", want: outputJSON},
		{value: "yaml", wantErr: true},
		{value: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			o := outputTable
			err := o.Set(tt.value)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Set(%q) error = %v, want error %v", tt.value, err, tt.wantErr)
			}
			if err == nil && o != tt.want {
				t.Fatalf("Set(%q) = %q, want %q", tt.value, o, tt.want)
			}
		})
	}
}

func TestTableAlignsAndDashesEmptyCells(t *testing.T) {
	var b bytes.Buffer
	tw := newTable(&b)
	tw.row("A", "LONGER", "C")
	tw.row("xx", "", "z")
	if err := tw.flush(); err != nil {
		t.Fatal(err)
	}
	want := "A   LONGER  C\nxx  -       z\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestWriteJSONKeepsAngleBrackets(t *testing.T) {
	var b bytes.Buffer
	if err := writeJSON(&b, map[string]string{"m": "+listMapKey=<field>"}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"m\": \"+listMapKey=<field>\"\n}\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}
