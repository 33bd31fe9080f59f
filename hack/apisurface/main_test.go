package main

import (
	"strings"
	"testing"
)

func TestSurface(t *testing.T) {
	lines, c, err := surface(pkgInfo{ImportPath: "example.com/p", Dir: "testdata/p", Name: "p", GoFiles: []string{"p.go"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `const KindA Kind
const KindB Kind
const Name = "p"
const Second = 1
const Timeout = 3 * Second
func Map[T any, U comparable]([]T, func(T) U) map[U]T
func New(int) *Config
method (*Config) Run(context.Context, ...string) (int, error)
method (*List[T]) Len() int
method (Config) Promoted(int) int
type Alias = Config
type Config struct
type Config struct, Count int
type Config struct, Hook func(context.Context, int) (bool, error)
type Config struct, Size int
type Config struct, embedded Kind
type Config struct, unexported fields
type Func func(string) (string, bool)
type Kind int
type List[T any] struct
type List[T any] struct, Items []T
type Sealed interface
type Sealed interface, Do(int) error
type Sealed interface, embedded context.Context
type Sealed interface, unexported methods
var Default = Config{...}
var ErrX = errorString("x")`
	if got := strings.Join(lines, "\n"); got != want {
		t.Errorf("got\n%s\n\nwant\n%s", got, want)
	}
	if want := (counts{types: 6, funcs: 2, methods: 3, consts: 5, vars: 2, fields: 5}); c != want {
		t.Errorf("counts %+v, want %+v", c, want)
	}
}

func TestLibrary(t *testing.T) {
	for rel, want := range map[string]bool{
		"/ssa": true, "/api/v1alpha1": true, "/fleet": true,
		"/internal/cli": false, "/cmd/internal/demo": false, "/test/suite": false,
		"/examples/widgets": false, "/hack/apisurface": false, "/api/v1alpha1/applyconfiguration/internal": false,
	} {
		if got := library(rel); got != want {
			t.Errorf("library(%q) = %v, want %v", rel, got, want)
		}
	}
}
