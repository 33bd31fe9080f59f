// Package cli is the command tree of the statusapply binary and of the kubectl
// plugin `kubectl statusapply`. Both mains call into it, so the two binaries
// differ only in the name their help shows.
//
// The ownership commands (owners, lint, migrate) reach the cluster through the
// usual kubeconfig flags and resolve resource arguments the way kubectl does;
// the pure parts (argument and flag parsing, rendering) live in files of their
// own so that they can be tested without an API server.
package cli
