package ssa

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/statusapply/statusapply/conflicts"
)

// lines is a logger that keeps what it is given, at every verbosity the
// Applier uses.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) logger() logr.Logger {
	return funcr.New(func(_, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.got = append(l.got, args)
	}, funcr.Options{Verbosity: 1})
}

func (l *lines) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}

// applyLogging makes applies that log at V(0) and V(1): one applied, one
// that yields after a 409.
func applyLogging(t *testing.T, ctx context.Context, opts ...Option) {
	t.Helper()
	h := newHarness(t, opts...)
	if _, err := h.a.Apply(ctx, h.t, h.observe(t), widgetBuild("On", nil)); err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, opts...)
	h.fail = func(n int) error {
		if n == 1 {
			return fieldConflict()
		}
		return nil
	}
	b := widgetBuild("On", map[string]string{"a": "1"})
	b.Typed = nil
	res, err := h.a.Apply(ctx, h.t, h.observe(t), b, OnConflict(conflicts.Yield()))
	if err != nil || len(res.Yielded) != 1 {
		t.Fatalf("err %v, yielded %v; want a yield", err, res.Yielded)
	}
}

// An Applier used outside a controller-runtime manager, with a context that
// carries no logger, logs nothing anywhere: not to controller-runtime's
// global logger (which prints a warning with a stack trace when nothing set
// it), and not to stderr. The global logger is set here to one that keeps
// what it is given, and shown to keep a line logged through it: a spec that
// could not see the Applier use it would prove nothing.
func TestApplierWithoutALoggerLogsNothing(t *testing.T) {
	global := &lines{}
	log.SetLogger(global.logger())
	log.Log.Info("probe")
	if got := global.take(); len(got) != 1 {
		t.Fatalf("control: the global logger kept %q, want the probe", got)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	func() {
		defer func() { os.Stderr = stderr }()
		applyLogging(t, context.Background())
	}()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	printed, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(printed) != 0 {
		t.Fatalf("printed to stderr: %s", printed)
	}
	if got := global.take(); len(got) != 0 {
		t.Fatalf("logged to controller-runtime's global logger: %q", got)
	}
}

// WithLogger's logger gets every line, also when the context carries a
// logger of its own; without it, the context's logger does.
func TestApplierLogsToWithLogger(t *testing.T) {
	set, inCtx := &lines{}, &lines{}
	ctx := logr.NewContext(context.Background(), inCtx.logger())

	applyLogging(t, context.Background(), WithLogger(set.logger()))
	applyLogging(t, ctx, WithLogger(set.logger()))
	got := set.take()
	if len(got) != 4 || len(inCtx.take()) != 0 {
		t.Fatalf("WithLogger's logger got %q, want 2 lines from each of two runs, and the context's nothing", got)
	}
	for _, want := range []string{`"msg"="applied"`, `"msg"="yielded contested fields to their owners"`} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Fatalf("WithLogger's logger got %q, want a line with %s", got, want)
		}
	}

	applyLogging(t, ctx)
	if got := inCtx.take(); len(got) != 2 {
		t.Fatalf("the context's logger got %q, want 2 lines", got)
	}
}
