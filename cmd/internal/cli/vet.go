package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// vetToolName is the go vet tool of the analyzers module, which the vet
// command runs: the CLI itself does not link the analyzers, so that the
// library's module does not depend on golang.org/x/tools.
const vetToolName = "statusapply-vet"

const vetLong = `Runs the statuswrite and statusfunc analyzers over Go packages, through
go vet -vettool=statusapply-vet:

  statuswrite  status writes that replace what they send whole (Status().Update,
               merge patches of the status, Cluster API's patch helper), with
               the statusapply call to use instead
  statusfunc   status functions queued with batcher.Status, Object, EditStatus
               and EditObject that make requests, write shared state, keep
               their parameters, start goroutines, use channels or call
               time.Now; field manager names that are not valid constants

PACKAGES are go package patterns (default ./...), resolved in the current
directory's module. The analyzers live in their own module; install the tool
with
  go install github.com/statusapply/statusapply/analyzers/cmd/statusapply-vet@latest
The tool is taken from --vettool, else from PATH, else from the directory of
this binary. go must be on PATH.

Findings go to stdout as file:line:col: message, the summary to stderr; --json
prints go vet's JSON instead (one document per package with findings,
suggested fixes included). Exit codes: 0 no finding, 1 findings, or no package
vetted at all (patterns that match none) unless --allow-empty, 2 a package that
does not build, a missing tool or go.`

// newVetCommand returns the vet command.
func newVetCommand() *cobra.Command {
	var asJSON, allowEmpty bool
	var tool string
	cmd := &cobra.Command{
		Use:   "vet [PACKAGES...] [--json] [--vettool PATH]",
		Short: "Find status writes to move to statusapply, and check status functions (go vet)",
		Long:  vetLong,
		Example: `  statusapply vet ./...
  statusapply vet ./internal/controller/... --json > findings.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := findVetTool(tool)
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			if len(args) == 0 {
				args = []string{"./..."}
			}
			var out bytes.Buffer
			run := exec.CommandContext(cmd.Context(), "go", append([]string{"vet", "-json", "-vettool=" + path}, args...)...)
			run.Stdout, run.Stderr = &out, cmd.ErrOrStderr()
			if err := run.Run(); err != nil {
				return withExitCode(exitUsage, fmt.Errorf("go vet: %w", err))
			}
			findings, packages, err := readVetJSON(out.Bytes())
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			if asJSON {
				if _, err := cmd.OutOrStdout().Write(out.Bytes()); err != nil {
					return withExitCode(exitUsage, err)
				}
			} else {
				for _, f := range findings {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (%s)\n", f.Posn, f.Message, f.Analyzer)
				}
			}
			fmt.Fprintln(cmd.ErrOrStderr(), plural(len(findings), "finding", "findings"))
			switch {
			case len(findings) > 0:
				return withExitCode(exitFindings, nil)
			case packages == 0 && !allowEmpty:
				return withExitCode(exitFindings, fmt.Errorf("no package vetted: %s matched none; %s",
					strings.Join(args, " "), allowEmptyHint))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print go vet's JSON: {package: {analyzer: [{posn, end, message, suggested_fixes}]}} per package")
	addAllowEmptyFlag(cmd, &allowEmpty, "the packages match no package")
	cmd.Flags().StringVar(&tool, "vettool", "", "path of the statusapply-vet binary (default: on PATH, else next to this binary)")
	return cmd
}

// findVetTool returns the vet tool's path: flag when set, else the tool on
// PATH, else the tool in this binary's directory.
func findVetTool(flag string) (string, error) {
	if flag != "" {
		if _, err := os.Stat(flag); err != nil {
			return "", fmt.Errorf("--vettool: %w", err)
		}
		return filepath.Abs(flag)
	}
	if p, err := exec.LookPath(vetToolName); err == nil {
		return filepath.Abs(p)
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), vetToolName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is neither on PATH nor next to this binary: install it with go install github.com/statusapply/statusapply/analyzers/cmd/%s@latest, or name it with --vettool", vetToolName, vetToolName)
}

// vetFinding is one diagnostic of go vet's JSON output.
type vetFinding struct {
	Analyzer string `json:"-"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
}

// readVetJSON reads go vet -json's output, a stream of documents mapping
// package paths to analyzer names to diagnostics (or to {"error": ...} when
// an analyzer failed), in order: one document per package vetted, {} for a
// package without findings. It returns the findings and the number of
// documents.
func readVetJSON(data []byte) (findings []vetFinding, packages int, err error) {
	var errs []error
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]map[string]json.RawMessage
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, 0, fmt.Errorf("reading go vet's output: %w", err)
		}
		packages++
		for pkg, analyzers := range doc {
			for name, raw := range analyzers {
				var diags []vetFinding
				if err := json.Unmarshal(raw, &diags); err != nil {
					var failed struct {
						Error string `json:"error"`
					}
					if json.Unmarshal(raw, &failed) == nil && failed.Error != "" {
						errs = append(errs, fmt.Errorf("%s: %s: %s", pkg, name, failed.Error))
						continue
					}
					return nil, 0, fmt.Errorf("reading go vet's output: %w", err)
				}
				for _, d := range diags {
					d.Analyzer = name
					findings = append(findings, d)
				}
			}
		}
	}
	sort.SliceStable(findings, func(i, j int) bool { return posnLess(findings[i].Posn, findings[j].Posn) })
	return findings, packages, errors.Join(errs...)
}

// posnLess orders file:line:col positions by file, then line and column
// as numbers.
func posnLess(a, b string) bool {
	fa, la, ca := splitPosn(a)
	fb, lb, cb := splitPosn(b)
	if fa != fb {
		return fa < fb
	}
	if la != lb {
		return la < lb
	}
	return ca < cb
}

func splitPosn(p string) (file string, line, col int) {
	parts := strings.Split(p, ":")
	if n := len(parts); n >= 3 {
		line, _ = strconv.Atoi(parts[n-2])
		col, _ = strconv.Atoi(parts[n-1])
		return strings.Join(parts[:n-2], ":"), line, col
	}
	return p, 0, 0
}
