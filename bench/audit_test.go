package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/statusapply/statusapply/internal/apiserver"
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
	log.SetLogger(logr.Discard())
	cfg := AuditConfig{Objects: 1000, PageSizes: []int64{500, 100}, Rounds: 3}
	if s := os.Getenv("BENCH_AUDIT_OBJECTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("BENCH_AUDIT_OBJECTS=%q: want a positive number", s)
		}
		cfg.Objects = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	env, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
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
	raw, err := json.MarshalIndent(struct {
		Config  AuditConfig   `json:"config"`
		Machine Machine       `json:"machine"`
		Results []AuditResult `json:"results"`
	}{cfg, machine(t, env, false), rs}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("results", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("results", "audit-latest.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("medians of %d rounds:\n\n%s", cfg.Rounds, strings.TrimSpace(AuditMarkdown(cfg, rs)))
}
