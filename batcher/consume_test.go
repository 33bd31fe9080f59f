package batcher_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// Consume hands every entry over instead of applying it, each on the batch's
// observation with its combined options and a Build that applies it: an
// entry fn accepts is cleared, one it fails stays queued with the error
// returned, nothing is sent and the result hook is not called.
func TestConsumeHandsEntriesOver(t *testing.T) {
	ctx := context.Background()
	a, c, applies := countingFixture(t, "w1", "w2")
	hooked := 0
	b := batcher.New(a, batcher.WithResultHook(func(ssa.Target, ssa.Result, error) { hooked++ }))
	w1, w2 := widget(t, c, "w1"), widget(t, c, "w2")
	for _, q := range []error{
		batcher.Status(b, w1, "a", setPhase("A"), ssa.Declarative),
		batcher.Status(b, w1, "b", setPhase("B")),
		batcher.Status(b, w2, "a", setPhase("A2"), ssa.Guarded),
	} {
		if q != nil {
			t.Fatal(q)
		}
	}
	boom := errors.New("boom")
	var (
		mu   sync.Mutex
		seen = map[string]batcher.Entry{}
	)
	err := b.Consume(ctx, func(_ context.Context, e batcher.Entry) error {
		mu.Lock()
		seen[e.Target.Name+"/"+e.Target.Manager] = e
		mu.Unlock()
		if e.Target.Name == "w2" {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Consume = %v, want fn's error", err)
	}
	if p := b.Pending(); len(p) != 1 || p[0].Name != "w2" || p[0].Manager != "a" {
		t.Fatalf("pending %v, want the failed entry only", p)
	}
	if n := applies.count("w1") + applies.count("w2"); n != 0 || hooked != 0 {
		t.Fatalf("%d applies sent, hook called %d times, want none", n, hooked)
	}
	if len(seen) != 3 {
		t.Fatalf("entries handed over: %v", slices.Sorted(maps.Keys(seen)))
	}
	e := seen["w1/a"]
	if e.Options.Mode != ssa.Declarative || e.Options.Guarded || !seen["w2/a"].Options.Guarded || seen["w1/b"].Options.Mode != ssa.Incremental {
		t.Fatalf("options w1/a %+v, w1/b %+v, w2/a %+v", e.Options, seen["w1/b"].Options, seen["w2/a"].Options)
	}
	if e.Observed.GetName() != "w1" || e.Observed.GetResourceVersion() != w1.ResourceVersion {
		t.Fatalf("observed %s at %s, want w1 as queued (%s)", e.Observed.GetName(), e.Observed.GetResourceVersion(), w1.ResourceVersion)
	}
	// The Build is the entry's: applied through the batch's Applier, it writes
	// what the contributions state.
	if _, err := b.Applier().Apply(ctx, e.Target, e.Observed, e.Build, &e.Options); err != nil {
		t.Fatal(err)
	}
	if got := widget(t, c, "w1"); got.Status.Phase != "A" {
		t.Fatalf("phase %q after applying the handed-over entry, want A", got.Status.Phase)
	}
}

// A batch made with WithFlushFunc runs it for Flush and FlushInto instead of
// applying; DryRun still dry-runs. WithGuardedEntries guards every entry
// handed over.
func TestWithFlushFuncReplacesFlush(t *testing.T) {
	ctx := context.Background()
	a, c, applies := countingFixture(t, "w")
	var consumed []batcher.Entry
	var b *batcher.Batch
	b = batcher.New(a, batcher.WithGuardedEntries(), batcher.WithFlushFunc(func(ctx context.Context, got *batcher.Batch) error {
		if got != b {
			t.Error("the flush function was given another batch")
		}
		return got.Consume(ctx, func(_ context.Context, e batcher.Entry) error {
			consumed = append(consumed, e)
			return nil
		})
	}))
	if err := batcher.Status(b, widget(t, c, "w"), "m", setPhase("On")); err != nil {
		t.Fatal(err)
	}
	var flushErr error
	func() { defer b.FlushInto(ctx, &flushErr) }()
	if flushErr != nil {
		t.Fatal(flushErr)
	}
	if len(consumed) != 1 || !consumed[0].Options.Guarded || applies.count("w") != 0 {
		t.Fatalf("consumed %+v after %d applies, want one guarded entry and no apply", consumed, applies.count("w"))
	}
	if p := b.Pending(); len(p) != 0 {
		t.Fatalf("pending %v, want the consumed entry cleared", p)
	}
	if got := widget(t, c, "w"); got.Status.Phase != "" {
		t.Fatalf("phase %q: the flush function's Flush wrote", got.Status.Phase)
	}
	if err := b.Flush(ctx); err != nil || len(consumed) != 1 {
		t.Fatalf("an empty Flush: %v, %d consumed", err, len(consumed))
	}
	if err := batcher.Status(b, widget(t, c, "w"), "m", setPhase("On")); err != nil {
		t.Fatal(err)
	}
	results, err := b.DryRun(ctx)
	if err != nil || len(results) != 1 || !results[0].Result.Sent || applies.count("w") != 1 || len(consumed) != 1 {
		t.Fatalf("DryRun = %+v, %v after %d applies, want one dry run sent and nothing consumed", results, err, applies.count("w"))
	}
}
