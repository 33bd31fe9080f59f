package docs_test

// TestCodeReferences and TestFuzzTable check what the prose and the tables of
// README.md and docs/*.md say about the code, where TestGoBlocksCompile checks
// the code blocks: a function, type, test or file the docs name must exist.
//
// Nothing is resolved through a hard-coded directory. The repository is
// parsed once (every .go file outside testdata, hidden directories and
// vendor, in every module of the tree), and a package is known by its name
// wherever it lives: a package that moves keeps its references valid, one
// that is renamed or split makes every reference to what left it fail, each
// listed with its file and line.
//
// What counts as a reference, in inline code spans outside fenced blocks and
// HTML comments:
//
//   - pkg.Name and pkg.Type.Member, where pkg is the name of a package of the
//     repository and Name is exported: Name must be declared at the top level
//     of a package of that name (its tests included), and Member must be a
//     method or a field of Type. Names of other modules' packages are listed in
//     externalPackages and not checked; a selector whose first part is neither
//     (a variable, a field path such as status.conditions) is not either.
//   - Type.Member, where Type is a type declared in the repository.
//   - FuzzXxx, TestXxx, BenchmarkXxx: a function of a _test.go file.
//   - A repository path: a span with a slash whose first element is an entry
//     at the root, or that ends with a slash or a file extension, and any
//     "./" word of a command; a bare file name such as cases_test.go must exist
//     somewhere in the tree, a glob must match something.
//   - A .go path followed by identifier spans (`ssa/owned.go` `get`, `put`):
//     each identifier must be declared in that file, as a function, method
//     (Type.method or method), type, variable, constant or field.
//
// The fuzz table of docs/design.md ("## Fuzzing") must list every fuzz
// target of the tree exactly once, as pkg.FuzzXxx, and nothing else.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// externalPackages are package names the docs use for packages of other
// modules: a selector starting with one is not looked up in the repository.
// A name that is also a package of the repository is resolved there.
var externalPackages = setOf(
	// standard library
	"bytes", "context", "errors", "fmt", "http", "io", "json", "log", "math", "os", "rand", "reflect", "slices",
	"sort", "strconv", "strings", "sync", "testing", "time", "atomic", "slog", "runtime", "filepath", "exec",
	// Kubernetes and controller-runtime
	"metav1", "apierrors", "meta", "unstructured", "schema", "types", "client", "ctrl", "manager", "reconcile",
	"builder", "predicate", "handler", "cache", "envtest", "fake", "interceptor", "record", "events", "retry",
	"metav1ac", "corev1", "corev1ac", "appsv1", "apiextensionsv1", "fieldpath", "managedfields", "typed", "value",
	"smdschema", "metav1validation", "validation", "leaderelection", "resourcelock", "kubernetes", "rest",
	"clientcmd", "wait", "klog", "logr", "funcr", "zap", "prometheus", "metrics", "uuid", "ptr", "admission",
	// other libraries the docs compare with
	"patch", "capiconditions", "k8sbatch", "gomega", "ginkgo", "cobra", "pflag", "jsoniter", "sigsjson",
)

// refFiles are the markdown files checked, relative to the module root.
func refFiles(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// goFile is what one parsed file declares.
type goFile struct {
	rel   string          // slash path relative to the root
	pkg   string          // package name, without _test
	names map[string]bool // top-level names, methods as Type.name and name, struct fields as Type.field and field
}

// repoIndex is what the tree declares.
type repoIndex struct {
	root    string
	files   map[string]*goFile         // by slash path
	pkgs    map[string][]string        // package name → directories (slash paths)
	decls   map[string]map[string]bool // directory → top-level names of its package
	members map[string]map[string]bool // "dir Type" → methods and fields
	types   map[string][]string        // type name → directories declaring it
	tests   map[string]bool            // Test, Benchmark, Fuzz and Example functions of _test.go files
	fuzz    map[string][]string        // "pkg.FuzzXxx" → files declaring it
	entries map[string]bool            // names at the root
	bases   map[string]bool            // base names of every file in the tree
	embeds  map[string]bool            // "dir Type" of struct types that embed another type
	paths   map[string]bool            // slash paths of every file and directory, testdata included
	ignored []string                   // directories .gitignore names from the root: made, not committed
}

var (
	indexOnce sync.Once
	index     *repoIndex
	indexErr  error
)

// loadIndex parses the tree under root once per test binary.
func loadIndex(t *testing.T, root string) *repoIndex {
	t.Helper()
	indexOnce.Do(func() { index, indexErr = buildIndex(root) })
	if indexErr != nil {
		t.Fatal(indexErr)
	}
	return index
}

func buildIndex(root string) (*repoIndex, error) {
	ix := &repoIndex{
		root: root, files: map[string]*goFile{}, pkgs: map[string][]string{}, decls: map[string]map[string]bool{},
		members: map[string]map[string]bool{}, types: map[string][]string{}, tests: map[string]bool{},
		fuzz: map[string][]string{}, entries: map[string]bool{}, bases: map[string]bool{}, embeds: map[string]bool{},
		paths: map[string]bool{},
	}
	if gi, err := os.ReadFile(filepath.Join(root, ".gitignore")); err == nil {
		for _, l := range strings.Split(string(gi), "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "/") && strings.HasSuffix(l, "/") {
				ix.ignored = append(ix.ignored, strings.Trim(l, "/"))
			}
		}
	}
	top, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, e := range top {
		ix.entries[e.Name()] = true
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if name == ".git" || d.IsDir() && p != root && (name == "vendor" || name == "node_modules") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git file
		}
		ix.paths[rel] = true
		if d.IsDir() {
			return nil
		}
		ix.bases[name] = true
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(rel, ".") ||
			strings.Contains("/"+rel, "/testdata/") || strings.Contains("/"+rel, "/.") {
			return nil // only the tree's own Go code is indexed, not its test inputs
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil // a file that does not parse is the compiler's business
		}
		ix.add(rel, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for name, dirs := range ix.pkgs {
		slices.Sort(dirs)
		ix.pkgs[name] = slices.Compact(dirs)
	}
	return ix, nil
}

func (ix *repoIndex) add(rel string, f *ast.File) {
	dir := path.Dir(rel)
	pkg := strings.TrimSuffix(f.Name.Name, "_test")
	gf := &goFile{rel: rel, pkg: pkg, names: map[string]bool{}}
	ix.files[rel] = gf
	ix.pkgs[pkg] = append(ix.pkgs[pkg], dir)
	if ix.decls[dir] == nil {
		ix.decls[dir] = map[string]bool{}
	}
	member := func(typ, name string) {
		key := dir + " " + typ
		if ix.members[key] == nil {
			ix.members[key] = map[string]bool{}
		}
		ix.members[key][name] = true
		gf.names[typ+"."+name] = true
		gf.names[name] = true
	}
	isTest := strings.HasSuffix(rel, "_test.go")
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv == nil || len(d.Recv.List) == 0 {
				ix.decls[dir][name] = true
				gf.names[name] = true
				if isTest && testFuncRE.MatchString(name) {
					ix.tests[name] = true
				}
				if isTest && strings.HasPrefix(name, "Fuzz") && takesTestingF(d) {
					key := pkg + "." + name
					ix.fuzz[key] = append(ix.fuzz[key], rel)
				}
				continue
			}
			member(receiverType(d.Recv.List[0].Type), name)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					name := s.Name.Name
					ix.decls[dir][name] = true
					gf.names[name] = true
					ix.types[name] = append(ix.types[name], dir)
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fld := range st.Fields.List {
							if len(fld.Names) == 0 {
								ix.embeds[dir+" "+name] = true
								member(name, receiverType(fld.Type))
							}
							for _, n := range fld.Names {
								member(name, n.Name)
							}
						}
					}
					if it, ok := s.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							for _, n := range m.Names {
								member(name, n.Name)
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						ix.decls[dir][n.Name] = true
						gf.names[n.Name] = true
					}
				}
			}
		}
	}
}

var testFuncRE = regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)[A-Z0-9_]`)

// receiverType is the name of the type of a receiver or embedded field:
// T, *T, T[P], pkg.T.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// takesTestingF reports whether fn's only parameter is a *testing.F.
func takesTestingF(fn *ast.FuncDecl) bool {
	ps := fn.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) > 1 {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}

// span is one inline code span of a unit.
type span struct {
	text       string
	line       int // 1-based line of the span in the markdown file
	start, end int // byte offsets of the backticks in the unit, end past the closing one
}

// unit is a paragraph of prose (its lines joined with newlines) or one table
// row: an identifier span may follow a path span on the next line of a
// paragraph, never in the next row.
type unit struct {
	text  string
	spans []span
}

var spanRE = regexp.MustCompile("`([^`]+)`")

// unitsOf returns the prose paragraphs and table rows of a markdown file with
// their inline code spans; fenced blocks, HTML comments and headings are
// left out.
func unitsOf(text string) []unit {
	var (
		out     []unit
		cur     unit
		fence   string
		comment bool
	)
	flush := func() {
		if len(cur.spans) > 0 {
			out = append(out, cur)
		}
		cur = unit{}
	}
	add := func(line string, n int) {
		if cur.text != "" {
			cur.text += "\n"
		}
		base := len(cur.text)
		cur.text += line
		for _, m := range spanRE.FindAllStringSubmatchIndex(line, -1) {
			cur.spans = append(cur.spans, span{text: line[m[2]:m[3]], line: n, start: base + m[0], end: base + m[1]})
		}
	}
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if closesFence(line, fence) {
				fence = ""
			}
			continue
		case comment:
			comment = !strings.Contains(line, "-->")
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			flush()
			fence = m[2]
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "<!--"):
			flush()
			comment = !strings.Contains(trimmed, "-->")
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			flush()
		case strings.HasPrefix(trimmed, "|"):
			flush()
			add(line, i+1)
			flush()
		case strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* "):
			flush() // a list item starts a unit of its own
			add(line, i+1)
		default:
			add(line, i+1)
		}
	}
	flush()
	return out
}

var (
	pathRE        = regexp.MustCompile(`^\.?[A-Za-z0-9_][A-Za-z0-9_.*-]*(/[A-Za-z0-9_.*-]+)*/?$`)
	fileExtRE     = regexp.MustCompile(`\.(go|md|mod|sum|yaml|yml|json|sh|txt|png|svg)$`)
	selectorRE    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+`)
	testNameRE    = regexp.MustCompile(`^(Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*$`)
	identRE       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
	identSepRE    = regexp.MustCompile(`^(?:'s)?[\s,(]*(?:(?:and|or)\s+)?[\s(]*$`) // a ")" ends the list
	tableTrailRE  = regexp.MustCompile(`^\s*\|`)
	placeholderRE = regexp.MustCompile(`/[A-Z][A-Z_]+(/|$)`)
)

// problem is one reference that does not resolve.
type problem struct {
	file string
	line int
	ref  string
	why  string
}

func (p problem) String() string { return fmt.Sprintf("%s:%d: `%s`: %s", p.file, p.line, p.ref, p.why) }

func TestCodeReferences(t *testing.T) {
	root := moduleRoot(t)
	ix := loadIndex(t, root)
	var problems []problem
	checked := 0
	for _, name := range refFiles(t, root) {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, name)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		for _, u := range unitsOf(string(text)) {
			for _, p := range ix.checkUnit(u) {
				checked++
				if p.why != "" {
					p.file = rel
					problems = append(problems, p)
				}
			}
		}
	}
	t.Logf("%d code references checked", checked)
	if len(problems) > 0 {
		var b strings.Builder
		for _, p := range problems {
			fmt.Fprintf(&b, "\n\t%s", p)
		}
		t.Errorf("%d code references in the docs name nothing in the repository; rename them to what the code "+
			"is called now, or drop them (a package of another module goes in externalPackages):%s", len(problems), b.String())
	}
}

// checkUnit checks the references of one unit's spans. Every reference
// checked is returned, with why set when it does not resolve.
func (ix *repoIndex) checkUnit(u unit) []problem {
	var out []problem
	spans, line := u.spans, u.text
	cur := 0
	report := func(ref, why string) { out = append(out, problem{ref: ref, why: why, line: spans[cur].line}) }
	boundTo := map[int]string{} // span index → the .go file it is bound to
	for i, s := range spans {
		cur = i
		text := strings.TrimSpace(s.text)
		if file, ok := boundTo[i]; ok {
			report(text, ix.checkInFile(file, text))
			continue
		}
		if p, ok := ix.pathOf(text); ok {
			why := ix.checkPath(p)
			report(text, why)
			if why == "" && strings.HasSuffix(p, ".go") && !strings.Contains(p, "*") {
				if _, isFile := ix.files[strings.TrimPrefix(p, "./")]; isFile {
					// Identifier spans right after a .go path name what it declares.
					for j := i + 1; j < len(spans); j++ {
						gap := line[spans[j-1].end:spans[j].start]
						if !identSepRE.MatchString(gap) || tableTrailRE.MatchString(gap) ||
							!identRE.MatchString(strings.TrimSpace(spans[j].text)) {
							break
						}
						boundTo[j] = strings.TrimPrefix(p, "./")
					}
				}
			}
			continue
		}
		if strings.HasPrefix(text, "go ") || strings.HasPrefix(text, "make ") {
			for _, word := range strings.Fields(text) {
				if strings.HasPrefix(word, "./") && !placeholderRE.MatchString(word) {
					word = strings.TrimSuffix(strings.TrimSuffix(word, "..."), "/")
					if word != "." {
						report(word, ix.checkPath(word))
					}
				}
			}
		}
		if testNameRE.MatchString(text) {
			if !ix.tests[text] {
				report(text, "no test function of that name in a _test.go file")
			} else {
				report(text, "")
			}
			continue
		}
		for _, sel := range selectorsIn(text) {
			if why, ok := ix.checkSelector(sel); ok {
				report(sel, why)
			}
		}
	}
	return out
}

// selectorsIn returns the pkg.Name, pkg.Type.Member and Type.Member
// candidates in text, leaving out field paths, paths, flags, domains and
// file names.
func selectorsIn(text string) []string {
	var out []string
	for _, m := range selectorRE.FindAllStringIndex(text, -1) {
		if m[0] > 0 && strings.ContainsRune("./-$", rune(text[m[0]-1])) {
			continue // a field path (.status.phase), a path or a flag
		}
		if m[1] < len(text) && (text[m[1]] == '/' || text[m[1]] == '-') {
			continue // a domain or a path
		}
		if sel := text[m[0]:m[1]]; !fileExtRE.MatchString(sel) {
			out = append(out, sel)
		}
	}
	return out
}

// pathOf returns text as a repository path when it reads as one.
func (ix *repoIndex) pathOf(text string) (string, bool) {
	p := strings.TrimSuffix(text, "/...")
	if !pathRE.MatchString(p) || strings.Contains(p, "..") {
		return "", false
	}
	p = strings.TrimPrefix(p, "./")
	first, _, hasSlash := strings.Cut(p, "/")
	if !hasSlash {
		// A bare file name: only one with a file extension and no other dot
		// (pkg.Name is not a file).
		return p, fileExtRE.MatchString(p) && strings.Count(p, ".") == 1
	}
	if ix.entries[first] {
		return p, true
	}
	if strings.Contains(first, ".") {
		return "", false // a domain: sigs.k8s.io/json
	}
	return p, strings.HasSuffix(p, "/") || fileExtRE.MatchString(p)
}

// checkPath says why p (slash path relative to the root, a path below some
// directory of the tree such as testdata/fuzz/, or a bare file name) does
// not exist, or "".
func (ix *repoIndex) checkPath(p string) string {
	p = strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
	wantDir := strings.HasSuffix(p, "/")
	for _, dir := range ix.ignored {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return "" // made by a target, not committed
		}
	}
	first, _, _ := strings.Cut(p, "/")
	if !ix.entries[first] {
		// Not from the root: a bare file name, or a path below any directory.
		for q := range ix.paths {
			if q == p || strings.HasSuffix(q, "/"+p) {
				return ""
			}
		}
		return "no file or directory of that name in the tree"
	}
	full := filepath.Join(ix.root, filepath.FromSlash(p))
	if strings.Contains(p, "*") {
		if m, _ := filepath.Glob(full); len(m) > 0 {
			return ""
		}
		return "the pattern matches no file"
	}
	fi, err := os.Stat(full)
	switch {
	case err != nil:
		return "no such file or directory"
	case wantDir && !fi.IsDir():
		return "not a directory"
	}
	return ""
}

// checkInFile says why ident is not declared in the .go file rel, or "".
func (ix *repoIndex) checkInFile(rel, ident string) string {
	gf := ix.files[rel]
	if gf.names[ident] {
		return ""
	}
	dir := path.Dir(rel)
	var elsewhere []string
	for other, f := range ix.files {
		if path.Dir(other) == dir && f.names[ident] {
			elsewhere = append(elsewhere, other)
		}
	}
	if len(elsewhere) > 0 {
		slices.Sort(elsewhere)
		return fmt.Sprintf("not declared in %s but in %s", rel, strings.Join(elsewhere, ", "))
	}
	return "not declared in " + rel
}

// checkSelector checks a selector: ok is false when it is not a reference
// this test judges (a variable, a field path, another module's package).
func (ix *repoIndex) checkSelector(sel string) (why string, ok bool) {
	parts := strings.Split(sel, ".")
	first := parts[0]
	if dirs, isPkg := ix.pkgs[first]; isPkg {
		if !isExported(parts[1]) {
			return "", false
		}
		var found []string
		for _, d := range dirs {
			if ix.decls[d][parts[1]] {
				found = append(found, d)
			}
		}
		if len(found) == 0 && len(parts) == 2 && ix.isMethodIn(dirs, parts[1]) {
			return "", true // pkg.Method, short for a method of one of its types
		}
		if len(found) == 0 {
			return fmt.Sprintf("%s is not declared in package %s (%s)", parts[1], first, strings.Join(dirs, ", ")), true
		}
		if len(parts) < 3 {
			return "", true
		}
		return ix.checkMember(found, parts[1], parts[2]), true
	}
	if externalPackages[first] || !isExported(first) {
		return "", false
	}
	dirs, isType := ix.types[first]
	if !isType {
		return "", false // another module's type: Result.Requeue
	}
	return ix.checkMember(dirs, first, parts[1]), true
}

// checkMember says why typ, declared in one of dirs, has no method or field
// member, or "". A struct that embeds another type may get it from there.
func (ix *repoIndex) checkMember(dirs []string, typ, member string) string {
	for _, d := range dirs {
		if ix.members[d+" "+typ][member] || ix.embeds[d+" "+typ] {
			return ""
		}
		if ix.decls[d][typ] && !slices.Contains(ix.types[typ], d) {
			return "" // not a type (a variable or function): not judged
		}
	}
	return fmt.Sprintf("%s has no method or field %s", typ, member)
}

// isMethodIn reports whether some type of dirs has a method or field name.
func (ix *repoIndex) isMethodIn(dirs []string, name string) bool {
	for key, members := range ix.members {
		dir, _, _ := strings.Cut(key, " ")
		if members[name] && slices.Contains(dirs, dir) {
			return true
		}
	}
	return false
}

func isExported(name string) bool { return name != "" && name[0] >= 'A' && name[0] <= 'Z' }

// TestFuzzTable checks that the table of docs/design.md's "## Fuzzing" lists
// the tree's fuzz targets, each once, and nothing else.
func TestFuzzTable(t *testing.T) {
	root := moduleRoot(t)
	ix := loadIndex(t, root)
	text, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed, err := fuzzTable(string(text))
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, target := range slices.Sorted(maps.Keys(ix.fuzz)) {
		switch n := listed[target]; {
		case n == 0:
			problems = append(problems, fmt.Sprintf("%s (%s) is not in the table: add a row with its input and the properties it checks",
				target, strings.Join(ix.fuzz[target], ", ")))
		case n > 1:
			problems = append(problems, fmt.Sprintf("%s has %d rows", target, n))
		}
	}
	for _, target := range slices.Sorted(maps.Keys(listed)) {
		if _, ok := ix.fuzz[target]; !ok {
			problems = append(problems, target+" is in the table but is no fuzz target of the tree (func "+
				strings.SplitN(target, ".", 2)[1]+"(f *testing.F) in a _test.go file of package "+strings.SplitN(target, ".", 2)[0]+")")
		}
	}
	if len(problems) > 0 {
		t.Errorf("docs/design.md's fuzz table does not match the fuzz targets:\n\t%s", strings.Join(problems, "\n\t"))
	}
	t.Logf("%d fuzz targets, all in the table", len(ix.fuzz))
}

var fuzzCellRE = regexp.MustCompile("^`([a-z][a-z0-9]*\\.Fuzz[A-Za-z0-9_]*)`$")

// fuzzTable returns the targets the "## Fuzzing" section's table rows name
// in their first cell, with how many rows name each.
func fuzzTable(text string) (map[string]int, error) {
	lines := strings.Split(text, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "## Fuzzing" })
	if start < 0 {
		return nil, fmt.Errorf(`docs/design.md has no "## Fuzzing" section listing the fuzz targets`)
	}
	listed := map[string]int{}
	rows := 0
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "# ") {
			break
		}
		if !strings.HasPrefix(strings.TrimSpace(l), "|") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		first := strings.TrimSpace(cells[0])
		if m := fuzzCellRE.FindStringSubmatch(first); m != nil {
			listed[m[1]]++
			rows++
		} else if strings.Contains(first, "Fuzz") {
			return nil, fmt.Errorf("docs/design.md: fuzz table row %q: the first cell must be `pkg.FuzzXxx`", l)
		}
	}
	if rows == 0 {
		return nil, fmt.Errorf(`docs/design.md's "## Fuzzing" section has no table rows naming a target`)
	}
	return listed, nil
}

// TestCodeReferencesBite runs the reference check on made-up markdown, so
// that a change to the heuristics that stops them from seeing a stale name
// fails here rather than passing silently.
func TestCodeReferencesBite(t *testing.T) {
	ix := loadIndex(t, moduleRoot(t))
	md := "| `ctrlbatch.Wrap` | `ctrlbatch.NoSuchWrap` | `shadow.Options.OnDivergence` | `shadow.Options.NoField` |\n" +
		"| `ssa/owned.go` `valuesMatch`, `noSuchFunc` | `ssa/nosuchfile.go` | `ssa/` | `nosuchdir/` |\n" +
		"\n" +
		"Prose: `FuzzReadMeta`, `FuzzNoSuchTarget`, `TestNoSuchTest`, `conditions.Status(b, obj, m, c)`,\n" +
		"`batcher/diff.go`\n(`diff`, `noSuchHelper`), `metav1.NoSuchThing`, `status.conditions`, `Batch.NoSuchMethod`,\n" +
		"`go test ./test/nosuchsuite/ -count=1`, `config/crd/*.yaml`, `config/crd/*.nosuch`.\n" +
		"\n" +
		"```go\nctrlbatch.InACodeBlock()\n```\n"
	want := []string{
		"ctrlbatch.NoSuchWrap", "shadow.Options.NoField", "noSuchFunc", "ssa/nosuchfile.go", "nosuchdir/",
		"FuzzNoSuchTarget", "TestNoSuchTest", "noSuchHelper", "Batch.NoSuchMethod", "./test/nosuchsuite",
		"config/crd/*.nosuch",
	}
	var got, passed []string
	for _, u := range unitsOf(md) {
		for _, p := range ix.checkUnit(u) {
			if p.why != "" {
				got = append(got, p.ref)
			} else {
				passed = append(passed, p.ref)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("stale references found:\n\t%q\nwant\n\t%q", got, want)
	}
	for _, ok := range []string{"ctrlbatch.Wrap", "shadow.Options.OnDivergence", "valuesMatch", "ssa/", "FuzzReadMeta",
		"conditions.Status", "diff", "config/crd/*.yaml"} {
		if !slices.Contains(passed, ok) {
			t.Errorf("%s was not checked and found: checked and found %q", ok, passed)
		}
	}
}

// TestDocCommentReferences checks the identifiers the comments of the tree's
// non-test Go files cite, by the rules of TestCodeReferences for pkg.Name,
// pkg.Type.Member and Type.Member: a doc comment that names what is gone, or
// what never was, misleads as a doc page does.
func TestDocCommentReferences(t *testing.T) {
	root := moduleRoot(t)
	ix := loadIndex(t, root)
	var problems []problem
	checked := 0
	fset := token.NewFileSet()
	for _, rel := range slices.Sorted(maps.Keys(ix.files)) {
		if strings.HasSuffix(rel, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(rel)), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err) // the index parsed it
		}
		for _, p := range ix.checkComments(fset, f) {
			checked++
			if p.why != "" {
				p.file = rel
				problems = append(problems, p)
			}
		}
	}
	t.Logf("%d references in Go comments checked", checked)
	if len(problems) > 0 {
		var b strings.Builder
		for _, p := range problems {
			fmt.Fprintf(&b, "\n\t%s", p)
		}
		t.Errorf("%d references in Go comments name nothing in the repository; rename them to what the code is "+
			"called now, or drop them:%s", len(problems), b.String())
	}
}

// checkComments checks the selectors cited in f's comments. Every reference
// checked is returned, with why set when it does not resolve.
func (ix *repoIndex) checkComments(fset *token.FileSet, f *ast.File) []problem {
	var out []problem
	for _, g := range f.Comments {
		for _, c := range g.List {
			for _, sel := range selectorsIn(c.Text) {
				if why, ok := ix.checkSelector(sel); ok {
					out = append(out, problem{line: fset.Position(c.Pos()).Line, ref: sel, why: why})
				}
			}
		}
	}
	return out
}

// TestDocCommentReferencesBite runs the comment check on a made-up file, so
// that a change that stops it from seeing a stale name fails here.
func TestDocCommentReferencesBite(t *testing.T) {
	ix := loadIndex(t, moduleRoot(t))
	src := "package x\n\n" +
		"// Run calls ctrlbatch.Wrap and shadow.Options.OnDivergence, not ctrlbatch.NoSuchWrap\n" +
		"// or shadow.Options.NoField; .status.conditions, --from-file, example.com/x and\n" +
		"// main.go are not references.\n" +
		"func Run() {} // Batch.NoSuchMethod\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var stale, found []string
	for _, p := range ix.checkComments(fset, f) {
		if p.why != "" {
			stale = append(stale, fmt.Sprintf("%d:%s", p.line, p.ref))
		} else {
			found = append(found, p.ref)
		}
	}
	if want := []string{"3:ctrlbatch.NoSuchWrap", "4:shadow.Options.NoField", "6:Batch.NoSuchMethod"}; !slices.Equal(stale, want) {
		t.Errorf("stale references found: %q, want %q", stale, want)
	}
	if want := []string{"ctrlbatch.Wrap", "shadow.Options.OnDivergence"}; !slices.Equal(found, want) {
		t.Errorf("references checked and found: %q, want %q", found, want)
	}
}
