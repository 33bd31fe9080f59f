// Package docs_test compiles the Go code blocks of README.md and docs/*.md,
// so that the documentation cannot drift from the API.
//
// TestGoBlocksCompile extracts every fenced block opened by ```go, turns each
// into a package of its own and builds them all with one `go build` of this
// module. The generated files are written to a temporary directory and shown
// to the go command through -overlay as docs/doccheckgen/bNN/snippet.go, so
// they resolve the module's imports without anything being written into the
// tree. Each piece of a block is preceded by a //line directive, so compiler
// errors name the markdown file and line. Inline code spans are not checked.
//
// A block becomes Go source deterministically:
//
//   - A block whose code starts with "package" is a whole file, kept as is.
//   - Otherwise it is split into declarations and statements. A line that
//     starts at column 1, outside any bracket, with func, type, var or const
//     begins a declaration, which runs to the end of its brackets; it is
//     placed at file level. The remaining lines, in order, form the body of a
//     func() without results (write a function when a snippet returns
//     values); the variables its top-level statements declare are marked
//     used. Glue code after a block's last line is attributed to its closing
//     fence.
//   - A line holding only "..." (elided code) becomes panic("elided"): it
//     stands for statements, a missing return included.
//   - The package names listed in knownImports are imported when the code
//     uses them without declaring them; other packages need an import at the
//     start of a prelude.
//
// HTML comments (invisible when rendered) right before the fence, blank lines
// allowed in between, tune a block:
//
//	<!-- doccheck: skip REASON -->  the block is not checked; say why
//	<!-- doccheck: struct -->       the block is a list of struct fields (with their markers)
//	<!-- doccheck: prelude
//	var mgr ctrl.Manager            file-level Go the block relies on, such as the names
//	-->                             a snippet takes from its surroundings
package docs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// knownImports maps the package names the docs use to their import paths.
var knownImports = map[string]string{
	"context":            "context",
	"errors":             "errors",
	"fmt":                "fmt",
	"log":                "log",
	"time":               "time",
	"ssa":                "github.com/statusapply/statusapply/ssa",
	"batcher":            "github.com/statusapply/statusapply/batcher",
	"conflicts":          "github.com/statusapply/statusapply/conflicts",
	"ownership":          "github.com/statusapply/statusapply/ownership",
	"fleet":              "github.com/statusapply/statusapply/fleet",
	"schemas":            "github.com/statusapply/statusapply/schemas",
	"crdschema":          "github.com/statusapply/statusapply/schemas/crdschema",
	"ctrlbatch":          "github.com/statusapply/statusapply/ctrlbatch",
	"shadow":             "github.com/statusapply/statusapply/shadow",
	"conditions":         "github.com/statusapply/statusapply/conditions",
	"v1alpha1":           "github.com/statusapply/statusapply/api/v1alpha1",
	"applyconfiguration": "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration",
	"acv1alpha1":         "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1",
	"crd":                "github.com/statusapply/statusapply/config/crd",
	"meta":               "k8s.io/apimachinery/pkg/api/meta",
	"apierrors":          "k8s.io/apimachinery/pkg/api/errors",
	"metav1":             "k8s.io/apimachinery/pkg/apis/meta/v1",
	"unstructured":       "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured",
	"schema":             "k8s.io/apimachinery/pkg/runtime/schema",
	"metav1ac":           "k8s.io/client-go/applyconfigurations/meta/v1",
	"ctrl":               "sigs.k8s.io/controller-runtime",
	"client":             "sigs.k8s.io/controller-runtime/pkg/client",
	"manager":            "sigs.k8s.io/controller-runtime/pkg/manager",
}

// genDir is the directory, relative to this one, under which the overlay
// shows the generated packages. It never exists on disk.
const genDir = "doccheckgen"

// block is one ```go block and the doccheck markers before it.
type block struct {
	file        string   // slash path relative to the module root
	line        int      // line of the first code line
	closeLine   int      // line of the closing fence
	code        []string // the code, fence indentation removed
	skip        string   // why the block is not checked, if it is not
	asStruct    bool     // the block lists struct fields
	prelude     []string // file-level Go the block relies on
	preludeLine int      // line of the prelude's first line
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

func TestGoBlocksCompile(t *testing.T) {
	root := moduleRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []block
	for _, name := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, name)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := extract(filepath.ToSlash(rel), string(text))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	if len(blocks) == 0 {
		t.Fatal("no ```go blocks found in README.md and docs/*.md")
	}

	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	generated := map[string]block{} // package directory name → block
	sources := map[string][]byte{}  // package directory name → source
	here := filepath.Join(root, "docs")
	for i, b := range blocks {
		if b.skip != "" {
			t.Logf("%s: skipped: %s", b, b.skip)
			continue
		}
		name := fmt.Sprintf("b%02d", i)
		src := generate(b)
		file := filepath.Join(tmp, name+".go")
		if err := os.WriteFile(file, src, 0o600); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(here, genDir, name, "snippet.go")] = file
		pkgs = append(pkgs, "./docs/"+genDir+"/"+name)
		generated[name] = b
		sources[name] = src
	}
	if len(pkgs) == 0 {
		return
	}
	ovl, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovlFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovlFile, ovl, 0o600); err != nil {
		t.Fatal(err)
	}

	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the doc snippets: %v", err)
	}
	cmd := exec.Command(goTool, append([]string{"build", "-overlay", ovlFile}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Logf("%d go blocks compile (%d skipped)", len(pkgs), len(blocks)-len(pkgs))
		return
	}
	msgs := splitBuildOutput(string(out))
	reported := false
	for _, pkg := range slices.Sorted(maps.Keys(msgs)) {
		if strings.TrimSpace(msgs[pkg]) == "" {
			continue
		}
		reported = true
		name := path.Base(pkg)
		b, ok := generated[name]
		if !ok || path.Base(path.Dir(pkg)) != genDir {
			t.Errorf("go build of the doc snippets:\n# %s\n%s", pkg, msgs[pkg]) // not a snippet's own error
			continue
		}
		t.Errorf("%s: the go block does not compile:\n%s\ngenerated from it:\n%s", b, msgs[pkg], numbered(sources[name]))
	}
	if !reported {
		t.Errorf("go build of the doc snippets: %v\n%s", err, out)
	}
}

// moduleRoot returns the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

var fenceRE = regexp.MustCompile("^([ \t]*)(```+|~~~+)[ \t]*([^ \t`]*)")

// extract returns the ```go blocks of a markdown file with their markers.
func extract(file, text string) ([]block, error) {
	lines := strings.Split(text, "\n")
	var (
		blocks  []block
		pending block
		marked  = 0 // line of the first pending marker, 0 when none
	)
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "<!-- doccheck") {
			end, err := parseMarker(file, lines, i, &pending)
			if err != nil {
				return nil, err
			}
			if marked == 0 {
				marked = i + 1
			}
			i = end
			continue
		}
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			if marked != 0 {
				return nil, fmt.Errorf("%s:%d: doccheck marker not followed by a ```go block", file, marked)
			}
			continue
		}
		indent, fence, lang := m[1], m[2], m[3]
		end := i + 1
		for end < len(lines) && !closesFence(lines[end], fence) {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: unclosed code fence", file, i+1)
		}
		if lang == "go" {
			b := pending
			b.file, b.line, b.closeLine = file, i+2, end+1
			for _, l := range lines[i+1 : end] {
				b.code = append(b.code, strings.TrimPrefix(l, indent))
			}
			blocks = append(blocks, b)
		} else if marked != 0 {
			return nil, fmt.Errorf("%s:%d: doccheck marker before a ```%s block", file, marked, lang)
		}
		pending, marked = block{}, 0
		i = end
	}
	if marked != 0 {
		return nil, fmt.Errorf("%s:%d: doccheck marker not followed by a ```go block", file, marked)
	}
	return blocks, nil
}

func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// parseMarker reads the doccheck comment starting at lines[start] into b and
// returns the index of its last line.
func parseMarker(file string, lines []string, start int, b *block) (int, error) {
	end := start
	for end < len(lines) && !strings.Contains(lines[end], "-->") {
		end++
	}
	if end == len(lines) {
		return 0, fmt.Errorf("%s:%d: unclosed doccheck comment", file, start+1)
	}
	body := slices.Clone(lines[start : end+1])
	last, rest, _ := strings.Cut(body[len(body)-1], "-->")
	if strings.TrimSpace(rest) != "" {
		return 0, fmt.Errorf("%s:%d: text after a doccheck comment", file, end+1)
	}
	body[len(body)-1] = last
	_, body[0], _ = strings.Cut(body[0], "<!-- doccheck")
	head, ok := strings.CutPrefix(body[0], ":")
	if !ok {
		return 0, fmt.Errorf("%s:%d: want <!-- doccheck: DIRECTIVE", file, start+1)
	}
	directive, arg, _ := strings.Cut(strings.TrimSpace(head), " ")
	switch directive {
	case "skip":
		reason := strings.TrimSpace(strings.Join(append([]string{arg}, body[1:]...), " "))
		if reason == "" {
			return 0, fmt.Errorf("%s:%d: doccheck: skip needs a reason", file, start+1)
		}
		b.skip = reason
	case "struct":
		if strings.TrimSpace(arg) != "" || len(body) > 1 {
			return 0, fmt.Errorf("%s:%d: doccheck: struct takes no argument", file, start+1)
		}
		b.asStruct = true
	case "prelude":
		code, first := body[1:], start+2
		if strings.TrimSpace(arg) != "" {
			code, first = append([]string{arg}, code...), start+1
		}
		if len(code) > 0 && strings.TrimSpace(code[len(code)-1]) == "" {
			code = code[:len(code)-1]
		}
		if b.prelude != nil {
			return 0, fmt.Errorf("%s:%d: a second doccheck prelude for one block", file, start+1)
		}
		b.prelude, b.preludeLine = code, first
	default:
		return 0, fmt.Errorf("%s:%d: unknown doccheck directive %q (want skip, struct or prelude)", file, start+1, directive)
	}
	return end, nil
}

// chunk is a run of a block's lines.
type chunk struct {
	line  int // markdown line of lines[0]
	lines []string
}

// generate turns a block into the source of package snippet.
func generate(b block) []byte {
	lineDir := func(line int) string { return fmt.Sprintf("//line %s:%d:1\n", b.file, line) }
	code := make([]string, len(b.code))
	for i, l := range b.code {
		if strings.TrimSpace(l) == "..." {
			l = strings.Replace(l, "...", `panic("elided")`, 1)
		}
		code[i] = l
	}
	if firstToken(code) == token.PACKAGE {
		return []byte(lineDir(b.line) + strings.Join(code, "\n") + "\n")
	}

	var decls, stmts []chunk
	if b.asStruct {
		decls = []chunk{{b.line, code}}
	} else {
		decls, stmts = split(code, b.line)
	}
	var top strings.Builder
	if len(b.prelude) > 0 {
		top.WriteString(lineDir(b.preludeLine) + strings.Join(b.prelude, "\n") + "\n")
	}
	for _, c := range decls {
		if b.asStruct {
			top.WriteString("type _ struct {\n" + lineDir(c.line) + strings.Join(c.lines, "\n") + "\n" + lineDir(b.closeLine) + "}\n")
			continue
		}
		top.WriteString(lineDir(c.line) + strings.Join(c.lines, "\n") + "\n")
	}
	var body strings.Builder
	for _, c := range stmts {
		body.WriteString(lineDir(c.line) + strings.Join(c.lines, "\n") + "\n")
	}
	tail := lineDir(b.closeLine)

	assemble := func(imports []string, used []string) []byte {
		var src bytes.Buffer
		src.WriteString("package snippet\n\n")
		for _, name := range imports {
			fmt.Fprintf(&src, "import %s %q\n", name, knownImports[name])
		}
		src.WriteString("\n" + top.String())
		if len(stmts) > 0 {
			src.WriteString("\nfunc _() {\n" + body.String() + tail)
			for _, name := range used {
				fmt.Fprintf(&src, "\t_ = %s\n", name)
			}
			src.WriteString("}\n")
		}
		return src.Bytes()
	}
	imports := missingImports(func(imports []string) []byte { return assemble(imports, nil) })
	return assemble(imports, declaredAtTop(assemble(imports, nil)))
}

// firstToken returns the first token of code.
func firstToken(code []string) token.Token {
	src := []byte(strings.Join(code, "\n"))
	var s scanner.Scanner
	s.Init(token.NewFileSet().AddFile("", -1, len(src)), src, nil, 0)
	_, tok, _ := s.Scan()
	return tok
}

// split sorts the lines of code into file-level declarations and statements.
func split(code []string, firstLine int) (decls, stmts []chunk) {
	n := len(code)
	depth := make([]int, n)         // bracket depth at the start of each line
	first := make([]token.Token, n) // the line's first token
	col := make([]int, n)           // and its column
	src := []byte(strings.Join(code, "\n"))
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile("", -1, len(src)), src, nil, 0) // errors are left to the compiler
	cur, next := 0, 0
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			break
		}
		p := fset.Position(pos)
		line := p.Line - 1
		for ; next <= line && next < n; next++ {
			depth[next] = cur
		}
		if line < n && first[line] == token.ILLEGAL {
			first[line], col[line] = tok, p.Column
		}
		switch tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			cur++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			cur--
		}
	}
	for ; next < n; next++ {
		depth[next] = cur
	}
	startsDecl := func(i int) bool {
		switch first[i] {
		case token.FUNC, token.TYPE, token.VAR, token.CONST:
			return depth[i] == 0 && col[i] == 1
		}
		return false
	}
	for i := 0; i < n; {
		j := i + 1
		if startsDecl(i) {
			for j < n && depth[j] > 0 {
				j++
			}
			decls = append(decls, chunk{firstLine + i, code[i:j]})
		} else {
			for j < n && !startsDecl(j) {
				j++
			}
			if slices.ContainsFunc(first[i:j], func(t token.Token) bool { return t != token.ILLEGAL }) {
				stmts = append(stmts, chunk{firstLine + i, code[i:j]})
			}
		}
		i = j
	}
	return decls, stmts
}

// missingImports returns, sorted, the names of knownImports that the source
// made by assemble uses without declaring. It type-checks the source against
// empty stand-ins of the imported packages, adding the names whose selectors
// resolve to nothing until none is left.
func missingImports(assemble func(imports []string) []byte) []string {
	var imports []string
	for range 5 {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "snippet.go", assemble(imports), 0)
		if err != nil {
			return imports // the compiler reports syntax errors
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: standIns{}, Error: func(error) {}}
		_, _ = conf.Check("snippet", fset, []*ast.File{f}, info)
		added := false
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if _, known := knownImports[id.Name]; known && info.Uses[id] == nil && !slices.Contains(imports, id.Name) {
				imports = append(imports, id.Name)
				added = true
			}
			return true
		})
		if !added {
			break
		}
		slices.Sort(imports)
	}
	return imports
}

// standIns imports every package as an empty one.
type standIns struct{}

func (standIns) Import(p string) (*types.Package, error) {
	name := path.Base(p)
	for n, ip := range knownImports {
		if ip == p {
			name = n
		}
	}
	pkg := types.NewPackage(p, name)
	pkg.MarkComplete()
	return pkg, nil
}

// declaredAtTop returns the variables declared by the top-level statements of
// the wrapper func, the last function of src.
func declaredAtTop(src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", src, 0)
	if err != nil || len(f.Decls) == 0 {
		return nil
	}
	fn, ok := f.Decls[len(f.Decls)-1].(*ast.FuncDecl)
	if !ok || fn.Name.Name != "_" || fn.Recv != nil || fn.Body == nil {
		return nil
	}
	var names []string
	add := func(id *ast.Ident) {
		if id.Name != "_" && !slices.Contains(names, id.Name) {
			names = append(names, id.Name)
		}
	}
	for _, s := range fn.Body.List {
		switch s := s.(type) {
		case *ast.AssignStmt:
			if s.Tok != token.DEFINE {
				continue
			}
			for _, e := range s.Lhs {
				if id, ok := e.(*ast.Ident); ok {
					add(id)
				}
			}
		case *ast.DeclStmt:
			if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						add(id)
					}
				}
			}
		}
	}
	return names
}

// splitBuildOutput splits go build's output into the messages of each
// package, keyed by import path.
func splitBuildOutput(out string) map[string]string {
	msgs := map[string]string{}
	pkg := ""
	for _, line := range strings.SplitAfter(out, "\n") {
		if p, ok := strings.CutPrefix(line, "# "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		msgs[pkg] += line
	}
	return msgs
}

// numbered prefixes the lines of src with their numbers.
func numbered(src []byte) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimRight(string(src), "\n"), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}

func TestExtractMarkers(t *testing.T) {
	md := strings.Join([]string{
		"<!-- doccheck: prelude",
		"var x int",
		"-->",
		"",
		"```go",
		"y := x",
		"",
		"func f() {",
		"\t...",
		"}",
		"```",
		"<!-- doccheck: skip not Go -->",
		"```go",
		"k8sbatch.Do()",
		"```",
		"<!-- doccheck: struct -->",
		"```go",
		"A int `json:\"a\"`",
		"```",
	}, "\n")
	bs, err := extract("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 || bs[0].line != 6 || bs[0].preludeLine != 2 || bs[1].skip != "not Go" || !bs[2].asStruct {
		t.Fatalf("extract = %+v", bs)
	}
	src := string(generate(bs[0]))
	for _, want := range []string{"//line x.md:2:1\nvar x int\n", "//line x.md:8:1\nfunc f() {\n\tpanic(\"elided\")\n}\n", "func _() {\n//line x.md:6:1\ny := x\n", "\t_ = y\n}\n"} {
		if !strings.Contains(src, want) {
			t.Errorf("generated source lacks %q:\n%s", want, src)
		}
	}
	if src := string(generate(bs[2])); !strings.Contains(src, "type _ struct {\n//line x.md:18:1\nA int") {
		t.Errorf("struct block generated as:\n%s", src)
	}

	for _, bad := range []string{
		"<!-- doccheck: frobnicate -->\n```go\nx\n```",
		"<!-- doccheck: skip -->\n```go\nx\n```",
		"<!-- doccheck: struct -->\n```sh\nx\n```",
		"<!-- doccheck: struct -->\ntext\n```go\nx\n```",
		"<!-- doccheck: struct -->",
		"```go\nx",
	} {
		if _, err := extract("bad.md", bad); err == nil {
			t.Errorf("extract(%q) = nil error", bad)
		}
	}
}
