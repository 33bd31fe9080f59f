package bench

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAuditBenchmark measures the fleet audit (statusapply audit) on its
// own envtest: wall time and peak heap of fleet.Audit over
// BENCH_AUDIT_OBJECTS Widgets (default 1000), read page by page and, as the
// baseline, as one whole list. It runs only when BENCH_AUDIT=1 (make
// bench-audit), writes results/audit-latest.json and logs a Markdown table;
// it does not touch docs/benchmarks.md.
func TestAuditBenchmark(t *testing.T) {
	if os.Getenv("BENCH_AUDIT") != "1" {
		t.Skip("set BENCH_AUDIT=1 (make bench-audit) to measure the fleet audit on envtest")
	}
	cfg := AuditConfig{Objects: 1000, PageSizes: []int64{500, 100}, Rounds: 3}
	if s := os.Getenv("BENCH_AUDIT_OBJECTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("BENCH_AUDIT_OBJECTS=%q: want a positive number", s)
		}
		cfg.Objects = n
	}
	ctx, env := startEnv(t, 30*time.Minute)
	ns, err := env.CreateNamespace(ctx, "audit")
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	if err := CreateAuditFleet(ctx, env.Client, ns, cfg.Objects, 8); err != nil {
		t.Fatal(err)
	}
	t.Logf("created %d objects in %v", cfg.Objects, time.Since(created).Round(time.Millisecond))
	rs, err := RunAudit(ctx, env, ns, cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if err := saveJSON(struct {
		Config  AuditConfig   `json:"config"`
		Machine Machine       `json:"machine"`
		Results []AuditResult `json:"results"`
	}{cfg, machine(t, env, false), rs}, "audit-latest.json"); err != nil {
		t.Fatal(err)
	}
	t.Logf("medians of %d rounds:\n\n%s", cfg.Rounds, strings.TrimSpace(AuditMarkdown(cfg, rs)))
}
