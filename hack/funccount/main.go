// Command funccount counts the library functions and files one reconcile of
// the client-side benchmarks enters. It builds bench's test binary with
// count-mode coverage of the library's packages, runs each benchmark row for
// 2 and for 6 iterations, and takes a coverage block whose count differs
// between the two runs as entered on every reconcile; go tool cover -func maps
// each block to the function around it (a closure is part of it). Run it from
// the repository's root (make funccount); -v lists the functions.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const module = "github.com/statusapply/statusapply"

// rows are the benchmarks of bench's BenchmarkClient counted: a reconcile that
// changes nothing, one that changes every Mutator's condition, and one of Edits.
var rows = []string{"StatusapplySteady", "StatusapplyMutators", "StatusapplyEdits"}

// The two iteration counts a row runs for; a block entered per reconcile ran
// more often in the second.
const low, high = 2, 6

// notLibrary are the module's directories that hold no library code: tools,
// tests, examples, generated API types and test helpers.
var notLibrary = []string{"bench", "cmd", "examples", "test", "hack", "api", "analyzers", "docs", "config",
	"internal/apiserver", "internal/metricstest", "internal/ownershiptest", "internal/gears"}

func main() {
	verbose := flag.Bool("v", false, "list the functions each row enters")
	flag.Parse()
	if err := run(os.Stdout, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "funccount:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, verbose bool) error {
	listed, err := command(".", "go", "list", "./...")
	if err != nil {
		return err
	}
	pkgs := libraryPackages(strings.Fields(listed))
	tmp, err := os.MkdirTemp("", "funccount")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	bin := filepath.Join(tmp, "bench.test")
	if _, err := command("bench", "go", "test", "-c", "-covermode=count", "-coverpkg="+strings.Join(pkgs, ","), "-o", bin, "."); err != nil {
		return err
	}
	var funcs map[string][]function
	for _, row := range rows {
		var profiles [2]map[string]int
		for i, n := range []int{low, high} {
			path := filepath.Join(tmp, fmt.Sprintf("%s-%d.out", row, n))
			if _, err := command("bench", bin, "-test.run=^$", "-test.bench=^BenchmarkClient$/^"+row+"$",
				"-test.benchtime="+strconv.Itoa(n)+"x", "-test.coverprofile="+path); err != nil {
				return err
			}
			if profiles[i], err = readFile(path, parseProfile); err != nil {
				return err
			}
			if funcs == nil {
				// Every profile has the same blocks: one maps them all.
				listing, err := command("bench", "go", "tool", "cover", "-func="+path)
				if err != nil {
					return err
				}
				if funcs, err = parseFuncs(strings.NewReader(listing)); err != nil {
					return err
				}
			}
		}
		entered, err := perReconcile(profiles[0], profiles[1], funcs)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(out, "%-20s %3d functions in %2d files\n", row, len(entered), countFiles(entered))
		if verbose {
			for _, f := range entered {
				_, _ = fmt.Fprintf(out, "    %s:%d %s\n", f.file, f.line, f.name)
			}
		}
	}
	return nil
}

// command runs name in dir and returns its standard output; its standard
// error goes into the error when it fails.
func command(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

func readFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer func() { _ = f.Close() }()
	return parse(f)
}

// libraryPackages keeps the import paths of the library's packages.
func libraryPackages(paths []string) []string {
	var out []string
	for _, p := range paths {
		rel, ok := strings.CutPrefix(p, module+"/")
		if ok && isLibrary(rel) {
			out = append(out, p)
		}
	}
	return out
}

// isLibrary reports whether the package at rel (relative to the module's
// root) is the library's: not under a notLibrary directory at the root, and
// not one of its internal helpers wherever it is.
func isLibrary(rel string) bool {
	for _, dir := range notLibrary {
		if strings.Contains(dir, "/") {
			if rel == dir || strings.HasSuffix(rel, "/"+dir) || strings.HasPrefix(rel, dir+"/") ||
				strings.Contains(rel, "/"+dir+"/") {
				return false
			}
		} else if rel == dir || strings.HasPrefix(rel, dir+"/") {
			return false
		}
	}
	return true
}

// parseProfile reads a coverage profile into each block's count, by the
// block's file and position ("ssa/applier.go:12.3,15.4"), adding the counts
// of a block listed more than once.
func parseProfile(r io.Reader) (map[string]int, error) {
	blocks := map[string]int{}
	s := bufio.NewScanner(r)
	for first := true; s.Scan(); first = false {
		line := s.Text()
		if first && strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		// file.go:from.col,to.col statements count
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, fmt.Errorf("malformed profile line %q", line)
		}
		count, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("malformed profile line %q", line)
		}
		blocks[fields[0]] += count
	}
	return blocks, s.Err()
}

// function is one function of go tool cover -func's listing.
type function struct {
	file string // relative to the module's root
	line int    // where it starts
	name string
}

// parseFuncs reads go tool cover -func's listing into each file's functions,
// in the order of their lines.
func parseFuncs(r io.Reader) (map[string][]function, error) {
	funcs := map[string][]function{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		// path/file.go:line:	name	percent%
		fields := strings.Fields(s.Text())
		if len(fields) == 0 || fields[0] == "total:" {
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("malformed cover -func line %q", s.Text())
		}
		file, line, ok := strings.Cut(strings.TrimSuffix(fields[0], ":"), ":")
		n, err := strconv.Atoi(line)
		if !ok || err != nil {
			return nil, fmt.Errorf("malformed cover -func line %q", s.Text())
		}
		file = strings.TrimPrefix(file, module+"/")
		funcs[file] = append(funcs[file], function{file: file, line: n, name: fields[1]})
	}
	for _, fs := range funcs {
		slices.SortFunc(fs, func(a, b function) int { return a.line - b.line })
	}
	return funcs, s.Err()
}

// perReconcile returns the functions holding a block whose count differs
// between the two profiles, in file and line order: a function is the one of
// its file starting last at or before the block.
func perReconcile(lowProfile, highProfile map[string]int, funcs map[string][]function) ([]function, error) {
	entered := map[function]bool{}
	for block, n := range lowProfile {
		if highProfile[block] == n {
			continue
		}
		file, pos, ok := strings.Cut(block, ":")
		line, err := strconv.Atoi(strings.SplitN(pos, ".", 2)[0])
		if !ok || err != nil {
			return nil, fmt.Errorf("malformed block %q", block)
		}
		file = strings.TrimPrefix(file, module+"/")
		fs := funcs[file]
		i := len(fs) - 1
		for i >= 0 && fs[i].line > line {
			i--
		}
		if i < 0 {
			return nil, errors.New("no function holds block " + block)
		}
		entered[fs[i]] = true
	}
	out := make([]function, 0, len(entered))
	for f := range entered {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b function) int {
		if c := strings.Compare(a.file, b.file); c != 0 {
			return c
		}
		return a.line - b.line
	})
	return out, nil
}

func countFiles(fs []function) int {
	files := map[string]bool{}
	for _, f := range fs {
		files[f.file] = true
	}
	return len(files)
}
