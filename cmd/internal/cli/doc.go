// Package cli is the command tree of the statusapply binary and of the kubectl
// plugin `kubectl statusapply`. Both mains call into it, so the two binaries
// differ only in the name their help shows.
//
// The ownership commands (owners, lint, migrate) reach the cluster through
// kubectl's connection flags and select objects with cli-runtime's resource
// builder, as kubectl get does; they print through cli-runtime's printers:
// kubectl-style tables, or a versioned document (DocumentGroupVersion) for
// -o json, yaml, jsonpath and go-template. The pure parts (flag checks, views
// and rendering) live in files of their own so that they can be tested
// without an API server. Every command exits 0, 1 for findings, or 2 for
// usage and tool errors (ExitCode).
package cli
