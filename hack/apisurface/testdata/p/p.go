// Package p is the input of apisurface's test: one of each kind of declaration.
package p

import "context"

// Kind is an enumeration.
type Kind int

// The kinds; the last is unexported.
const (
	KindA Kind = iota
	KindB
	kindC
)

// Untyped constants.
const (
	Name    = "p"
	Timeout = 3 * Second
	Second  = 1
)

// Exported vars.
var (
	ErrX    = errorString("x")
	Default = Config{Size: 1}
	hidden  int
)

type errorString string

func (e errorString) Error() string { return string(e) }

// Config is a struct with exported, embedded and unexported fields.
type Config struct {
	Size, Count int
	Hook        func(ctx context.Context, n int) (ok bool, err error)
	inner
	Kind
	private string
}

type inner struct{}

// Promoted is promoted from inner into Config.
func (inner) Promoted(n int) int { return n }

// Run is a method with named parameters.
func (c *Config) Run(ctx context.Context, names ...string) (n int, err error) { return 0, nil }

func (c *Config) hidden() {}

// New is a constructor.
func New(size int) *Config { return &Config{Size: size} }

// Map is generic.
func Map[T any, U comparable](in []T, f func(T) U) map[U]T { return nil }

// List is a generic type.
type List[T any] struct{ Items []T }

// Len has a generic receiver.
func (l *List[T]) Len() int { return len(l.Items) }

// Sealed has an unexported method.
type Sealed interface {
	context.Context
	Do(x int) error
	seal()
}

// Alias is an alias.
type Alias = Config

// Func is a func type.
type Func func(key string) (value string, ok bool)
