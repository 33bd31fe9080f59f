package main

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestIsLibrary(t *testing.T) {
	for rel, want := range map[string]bool{
		"ssa":                       true,
		"batcher":                   true,
		"internal/objects":          true,
		"schemas/internal/kindset":  true,
		"schemas/crdschema":         true,
		"testing":                   true, // a name that starts like test, not under it
		"test/integration":          false,
		"cmd/internal/cli":          false,
		"api/v1alpha1":              false,
		"hack/funccount":            false,
		"docs":                      false,
		"config/crd":                false,
		"internal/apiserver":        false,
		"internal/metricstest":      false,
		"internal/ownershiptest":    false,
		"schemas/internal/gears":    false,
		"schemas/internal/gearsets": true,
	} {
		if got := isLibrary(rel); got != want {
			t.Errorf("isLibrary(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestPerReconcile(t *testing.T) {
	const funcs = `github.com/statusapply/statusapply/ssa/a.go:10:		Apply		50.0%
github.com/statusapply/statusapply/ssa/a.go:30:		mutate		100.0%
github.com/statusapply/statusapply/ssa/a.go:40:		mutate		0.0%
github.com/statusapply/statusapply/batcher/b.go:5:	Flush		75.0%
total:							(statements)	40.0%
`
	for _, tc := range []struct {
		name      string
		low, high string
		want      []string // file:line name
		files     int
		err       string
	}{
		{
			name: "a block that ran more often marks its function; one that ran as often does not",
			low:  "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 3\ngithub.com/statusapply/statusapply/ssa/a.go:31.2,32.3 1 1\n",
			high: "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 7\ngithub.com/statusapply/statusapply/ssa/a.go:31.2,32.3 1 1\n",
			want: []string{"ssa/a.go:10 Apply"}, files: 1,
		},
		{
			name: "a block goes to the function starting last before it, so same-named methods count apart",
			low:  "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:33.2,34.3 1 1\ngithub.com/statusapply/statusapply/ssa/a.go:41.2,41.9 1 0\n",
			high: "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:33.2,34.3 1 5\ngithub.com/statusapply/statusapply/ssa/a.go:41.2,41.9 1 4\n",
			want: []string{"ssa/a.go:30 mutate", "ssa/a.go:40 mutate"}, files: 1,
		},
		{
			name: "several blocks of one function count it once; files are counted",
			low: "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 1\ngithub.com/statusapply/statusapply/ssa/a.go:20.2,22.3 1 1\n" +
				"github.com/statusapply/statusapply/batcher/b.go:6.1,7.1 2 2\n",
			high: "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 2\ngithub.com/statusapply/statusapply/ssa/a.go:20.2,22.3 1 9\n" +
				"github.com/statusapply/statusapply/batcher/b.go:6.1,7.1 2 6\n",
			want: []string{"batcher/b.go:5 Flush", "ssa/a.go:10 Apply"}, files: 2,
		},
		{
			name: "a block listed twice adds its counts",
			low:  "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 2\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 2\n",
			high: "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 4\n",
		},
		{
			name: "nothing differs: nothing entered",
			low:  "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 2\n",
			high: "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:11.2,12.3 1 2\n",
		},
		{
			name: "a block before any function is an error",
			low:  "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:2.1,3.1 1 0\n",
			high: "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:2.1,3.1 1 1\n",
			err:  "no function holds block",
		},
		{
			name: "a malformed line is an error",
			low:  "mode: count\ngithub.com/statusapply/statusapply/ssa/a.go:2.1,3.1 1 x\n",
			high: "mode: count\n",
			err:  "malformed profile line",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := parseFuncs(strings.NewReader(funcs))
			if err != nil {
				t.Fatal(err)
			}
			low, errLow := parseProfile(strings.NewReader(tc.low))
			high, errHigh := parseProfile(strings.NewReader(tc.high))
			var entered []function
			if err = errLow; err == nil {
				if err = errHigh; err == nil {
					entered, err = perReconcile(low, high, fs)
				}
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range entered {
				got = append(got, f.file+":"+strconv.Itoa(f.line)+" "+f.name)
			}
			if !reflect.DeepEqual(got, tc.want) || countFiles(entered) != tc.files {
				t.Fatalf("entered %q in %d files, want %q in %d", got, countFiles(entered), tc.want, tc.files)
			}
		})
	}
}
