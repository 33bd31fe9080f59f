// Package bench measures statusapply against the approaches controller authors
// would pick instead: a GET and a merge patch per status function, one
// optimistic-lock merge patch per reconcile, Cluster API's patch helper, and
// hand-written server-side applies. It runs against a real API server
// (envtest), counts requests by verb, and renders docs/benchmarks.md and a
// chart from one run, so that every approach is measured side by side under
// the same load.
//
// It is a module of its own so that the library never depends on Cluster API
// or a plotting library. Run it with `make bench` (full) or `make bench-quick`
// from the repository root.
package bench
