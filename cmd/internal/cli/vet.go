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

  statuswrite  status writes that can replace a whole list from a stale
               snapshot (Status().Update, a clientset's or the dynamic
               client's UpdateStatus, merge patches of the status that carry
               a list changed since their snapshot), with the statusapply
               call to use instead; with --helpers also the writes of Cluster
               API's and Flux's patch helpers (helper-managed)
  statusfunc   status functions queued with batcher.Status, Object, EditStatus
               and EditObject that make requests, write shared state, keep
               their parameters, start goroutines, use channels or call
               time.Now; field manager names that are not valid constants

PACKAGES are go package patterns (default ./...), resolved in the current
directory's module. The analyzers live in their own module; build the tool
from a checkout of statusapply with
  cd analyzers && go build -o ../bin/statusapply-vet ./cmd/statusapply-vet
(or go install .../analyzers/cmd/statusapply-vet@latest once the module is
published). The tool is taken from --vettool, else from PATH, else from the
directory of this binary. go must be on PATH.

Findings go to stdout as file:line:col: message, with paths relative to the
current directory; the summary to stderr: the count, and the status writes
seen but not analyzed (a patch or data built where the analyzer cannot
follow it, a patch helper's Patch whose helper is made elsewhere), by kind. --skip-tests leaves files ending in _test.go out.
--json prints go vet's JSON instead (one document per package with findings,
suggested fixes included). Exit codes: 0 no finding, 1 findings, or no package
vetted at all (patterns that match none) unless --allow-empty, 2 a package
that does not build, a missing tool or go.`

// newVetCommand returns the vet command.
func newVetCommand() *cobra.Command {
	var asJSON, skipTests, helpers, allowEmpty bool
	var tool string
	cmd := &cobra.Command{
		Use:   "vet [PACKAGES...] [--json] [--skip-tests] [--helpers] [--vettool PATH] [--allow-empty]",
		Short: "Find status writes to move to statusapply, and check status functions (go vet)",
		Long:  vetLong,
		Example: `  statusapply vet ./...
  statusapply vet --skip-tests --helpers ./...
  statusapply vet ./internal/controller/... --json > findings.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := findVetTool(tool)
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			if len(args) == 0 {
				args = []string{"./..."}
			}
			vetArgs := []string{"vet", "-json", "-vettool=" + path}
			if skipTests {
				vetArgs = append(vetArgs, "-skiptests=true")
			}
			if helpers {
				vetArgs = append(vetArgs, "-statuswrite.helpers=true")
			}
			if !asJSON {
				vetArgs = append(vetArgs, "-statuswrite.skipped=true")
			}
			var out bytes.Buffer
			run := exec.CommandContext(cmd.Context(), "go", append(vetArgs, args...)...)
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
				var skipped []vetFinding
				findings, skipped = splitSkipped(findings)
				wd, _ := os.Getwd()
				for _, f := range findings {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (%s)\n", relPosn(wd, f.Posn), f.Message, f.Analyzer)
				}
				if len(skipped) > 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), skippedSummary(skipped))
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
	cmd.Flags().BoolVar(&skipTests, "skip-tests", false, "leave files ending in _test.go out (the tool's -skiptests)")
	cmd.Flags().BoolVar(&helpers, "helpers", false, "also report the writes of Cluster API's and Flux's patch helpers, which merge conditions per type but track no owner per writer (the tool's -statuswrite.helpers)")
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
	return "", fmt.Errorf("%s is neither on PATH nor next to this binary: build it from a checkout of statusapply (cd analyzers && go build -o ../bin/%s ./cmd/%s), or, once the analyzers module is published, go install github.com/statusapply/statusapply/analyzers/cmd/%s@latest; or name it with --vettool", vetToolName, vetToolName, vetToolName, vetToolName)
}

// vetFinding is one diagnostic of go vet's JSON output.
type vetFinding struct {
	Analyzer string `json:"-"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
	Category string `json:"category"`
}

// skippedCategory is the category of statuswrite's diagnostics for the
// status writes it saw but could not analyze (its -skipped flag).
const skippedCategory = "skipped"

// splitSkipped separates the findings from the skipped writes.
func splitSkipped(all []vetFinding) (findings, skipped []vetFinding) {
	for _, f := range all {
		if f.Category == skippedCategory {
			skipped = append(skipped, f)
			continue
		}
		findings = append(findings, f)
	}
	return findings, skipped
}

// skippedSummary says how many status writes were not analyzed, by kind:
// the message's text after "not analyzed: ", with the object's type left
// out.
func skippedSummary(skipped []vetFinding) string {
	counts := map[string]int{}
	for _, f := range skipped {
		kind := strings.TrimPrefix(f.Message, "not analyzed: ")
		if i := strings.Index(kind, ": "); i >= 0 {
			what, why := kind[:i], kind[i+2:]
			if j := strings.LastIndex(what, " of "); j >= 0 {
				what = what[:j]
			}
			kind = what + " (" + why + ")"
		}
		counts[kind]++
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if counts[kinds[i]] != counts[kinds[j]] {
			return counts[kinds[i]] > counts[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = strconv.Itoa(counts[k]) + " " + k
	}
	return plural(len(skipped), "status write", "status writes") + " not analyzed: " + strings.Join(parts, "; ")
}

// relPosn makes a file:line:col position relative to dir when the file is
// under it.
func relPosn(dir, posn string) string {
	file, line, col := splitPosn(posn)
	if dir == "" || !filepath.IsAbs(file) {
		return posn
	}
	rel, err := filepath.Rel(dir, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return posn
	}
	if line == 0 {
		return rel
	}
	return rel + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col)
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
