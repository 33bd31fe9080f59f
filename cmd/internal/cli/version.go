package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionView is the document of the version command.
type versionView struct {
	typeMeta `json:",inline"`
	// Module is the main module's path, Version its version: a tag for
	// `go install ...@version`, "(devel)" for a build from a work tree.
	Module  string `json:"module"`
	Version string `json:"version"`
	// Commit, CommitTime and Modified describe the VCS state the binary was
	// built from; empty when the build recorded none (go build
	// -buildvcs=false, or a build outside a repository).
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	GoVersion  string `json:"goVersion"`
}

// buildVersion reads the version from the binary's build information.
func buildVersion(info *debug.BuildInfo, ok bool) versionView {
	v := versionView{typeMeta: documentType("Version"), Version: "unknown"}
	if !ok {
		return v
	}
	v.Module, v.Version, v.GoVersion = info.Main.Path, info.Main.Version, info.GoVersion
	if v.Version == "" {
		v.Version = "unknown"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// writeVersion prints v for people.
func writeVersion(w io.Writer, name string, v versionView) {
	fmt.Fprintf(w, "%s %s (%s)\n", name, v.Version, v.Module)
	switch {
	case v.Commit == "":
		fmt.Fprintln(w, "commit: not recorded in this build")
	case v.Modified:
		fmt.Fprintf(w, "commit: %s (%s), with uncommitted changes\n", v.Commit, v.CommitTime)
	default:
		fmt.Fprintf(w, "commit: %s (%s)\n", v.Commit, v.CommitTime)
	}
	fmt.Fprintf(w, "go: %s\n", v.GoVersion)
}

func newVersionCommand() *cobra.Command {
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the module version and VCS commit this binary was built from",
		Long: `version prints the module version (a tag for go install ...@VERSION, "(devel)"
for a build from a work tree) and the VCS commit, commit time and whether the
work tree had changes, as the Go toolchain recorded them in the binary. -o
json and -o yaml print a Version document (cli.statusapply.io/v1alpha1).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if m := out.mode(); m == modeName || m == modeWide {
				return withExitCode(exitUsage, errors.New("version prints text or a document: use -o json, yaml, jsonpath=TEMPLATE or go-template=TEMPLATE"))
			}
			v := buildVersion(debug.ReadBuildInfo())
			if out.mode() == modeDocument {
				return out.printDocument(cmd.OutOrStdout(), v)
			}
			writeVersion(cmd.OutOrStdout(), displayName(cmd), v)
			return nil
		},
	}
	out.addDocumentFlags(cmd, "text by default, or json, yaml, jsonpath=TEMPLATE, go-template=TEMPLATE")
	return cmd
}
