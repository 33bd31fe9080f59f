// Package widgets holds the Widget helpers that the envtest suites and the
// benchmarks share: mutators for the example API, an Applier that knows its
// schemas, and the raw reads and writes the specs set objects up with.
//
// The functions return errors instead of asserting, so that the benchmarks,
// which do not run under Ginkgo, can use them as well as the suites; each
// suite wraps the few it calls most in a Gomega one-liner. A shipped binary
// imports no package under test/: the demo keeps its own few helpers.
package widgets
