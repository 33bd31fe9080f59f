// Package statusfunc defines an analyzer that checks the status functions
// queued with statusapply, and the field manager names they are queued under.
//
// A Mutator or Edit runs at Flush, not when queued, and again against a fresh
// read on each retry of a guarded entry, so it must be a deterministic
// function of what it is handed. For each function literal, named function or
// method value passed to batcher.Status, batcher.Object, batcher.EditStatus
// or batcher.EditObject, statusfunc reports:
//
//   - requests through a controller-runtime client (Get, List, Create, Update,
//     Patch, Apply, Delete, DeleteAllOf on a client.Client, Reader, Writer or
//     StatusWriter);
//   - writes to variables declared outside the function (captured locals,
//     package variables, a method value's receiver), and keeping one of its
//     parameters (the observed object, the apply configuration) in one;
//   - go statements and channel operations;
//   - calls to time.Now and metav1.Now: statusapply sets a condition's
//     lastTransitionTime itself, when its status changes.
//
// It also reports field manager arguments (to the four calls above and to
// conditions.Status and conditions.StatusUnstructured) that are not constants,
// or are constants that ssa.ValidateFieldManager refuses: a manager's name is
// its identity in managedFields across restarts.
package statusfunc

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/statusapply/statusapply/analyzers/internal/lookup"
	"github.com/statusapply/statusapply/ssa"
)

const doc = `check statusapply status functions for side effects, and field manager names

statusfunc checks the functions passed to batcher.Status, Object, EditStatus
and EditObject: no requests through a client, no writes to variables from
outside the function, no keeping the observed object or the apply
configuration, no goroutines or channel operations, no time.Now. Field
manager arguments of those calls and of conditions.Status must be constants
that ssa.ValidateFieldManager accepts.`

// FlagSkipTests is the analyzer's flag that leaves files ending in _test.go
// out of its reports.
const FlagSkipTests = lookup.FlagSkipTests

// Analyzer is the statusfunc analyzer.
var Analyzer = newAnalyzer()

func newAnalyzer() *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:     "statusfunc",
		Doc:      doc,
		URL:      "https://github.com/statusapply/statusapply/blob/main/docs/migration.md",
		Requires: []*analysis.Analyzer{inspect.Analyzer},
		Run:      run,
	}
	lookup.AddSkipTests(a)
	return a
}

// isClientRequest reports whether a method of controller-runtime's client
// types of that name sends a request.
func isClientRequest(name string) bool {
	switch name {
	case "Get", "List", "Create", "Update", "Patch", "Apply", "Delete", "DeleteAllOf":
		return true
	}
	return false
}

func run(pass *analysis.Pass) (any, error) {
	lookup.SkipTests(pass)
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	defs := lookup.NewDefs(pass.TypesInfo, ins)
	decls := funcDecls(pass)
	m := managers{pass: pass, forwarded: map[*types.Func]map[int]string{}}
	for cur := range ins.Root().Preorder((*ast.CallExpr)(nil)) {
		call := cur.Node().(*ast.CallExpr)
		fn := lookup.Callee(pass.TypesInfo, call)
		switch {
		case lookup.IsFunc(fn, lookup.BatcherPkg, "Status", "Object", "EditStatus", "EditObject"):
			if len(call.Args) < 4 {
				continue
			}
			m.check(cur, qualified(fn), call.Args[2])
			checkFunc(pass, defs, decls, fn, call.Args[3])
		case lookup.IsFunc(fn, lookup.ConditionsPkg, "Status", "StatusUnstructured"):
			if len(call.Args) >= 3 {
				m.check(cur, qualified(fn), call.Args[2])
			}
		}
	}
	// A helper of the package that hands its own parameter on as the
	// manager has its callers' arguments checked instead, through as many
	// helpers as hand it on.
	for checked := map[*ast.CallExpr]bool{}; len(m.forwarded) > 0; {
		before := len(checked)
		for cur := range ins.Root().Preorder((*ast.CallExpr)(nil)) {
			call := cur.Node().(*ast.CallExpr)
			fn := lookup.Callee(pass.TypesInfo, call)
			if checked[call] || m.forwarded[fn] == nil {
				continue
			}
			checked[call] = true
			for i, contrib := range m.forwarded[fn] {
				if i < len(call.Args) {
					m.check(cur, contrib+" through "+fn.Name(), call.Args[i])
				}
			}
		}
		if len(checked) == before {
			break
		}
	}
	return nil, nil
}

// managers checks field manager arguments.
type managers struct {
	pass *analysis.Pass
	// forwarded maps the package's functions that hand a parameter on as a
	// manager to the parameter's index and the call it reaches.
	forwarded map[*types.Func]map[int]string
}

// check reports a manager argument that is not a constant the API server
// accepts, unless it is a parameter of the function it is in, whose callers
// are checked instead.
func (m *managers) check(cur inspector.Cursor, contrib string, arg ast.Expr) {
	info := m.pass.TypesInfo
	tv := info.Types[arg]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		if fn, i, ok := paramOf(info, cur, arg); ok {
			if m.forwarded[fn] == nil {
				m.forwarded[fn] = map[int]string{}
			}
			m.forwarded[fn][i] = contrib
			return
		}
		m.pass.Reportf(arg.Pos(), "the field manager of %s is not a constant: a manager's name is its identity in managedFields across restarts and releases, so name each writer with a constant", contrib)
		return
	}
	if err := ssa.ValidateFieldManager(constant.StringVal(tv.Value)); err != nil {
		m.pass.Reportf(arg.Pos(), "the field manager of %s is refused: %v", contrib, err)
	}
}

// paramOf reports whether arg names a parameter of the function declaration
// the call is in, and which.
func paramOf(info *types.Info, cur inspector.Cursor, arg ast.Expr) (*types.Func, int, bool) {
	id, ok := ast.Unparen(arg).(*ast.Ident)
	if !ok {
		return nil, 0, false
	}
	obj := info.ObjectOf(id)
	for c := range cur.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		fd, ok := c.Node().(*ast.FuncDecl)
		if !ok {
			continue
		}
		fn, _ := info.Defs[fd.Name].(*types.Func)
		i := 0
		for _, f := range fd.Type.Params.List {
			for _, n := range f.Names {
				if info.Defs[n] == obj && fn != nil {
					_, variadic := f.Type.(*ast.Ellipsis)
					return fn, i, !variadic
				}
				i++
			}
			if len(f.Names) == 0 {
				i++
			}
		}
		return nil, 0, false
	}
	return nil, 0, false
}

func qualified(fn *types.Func) string { return fn.Pkg().Name() + "." + fn.Name() }

// funcDecls maps the package's functions and methods to their declarations.
func funcDecls(pass *analysis.Pass) map[*types.Func]*ast.FuncDecl {
	m := map[*types.Func]*ast.FuncDecl{}
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					m[fn] = fd
				}
			}
		}
	}
	return m
}

// checkFunc finds the function arg passes (a literal, perhaps through a local
// variable, or a function or method of this package) and checks its body.
func checkFunc(pass *analysis.Pass, defs *lookup.Defs, decls map[*types.Func]*ast.FuncDecl, contrib *types.Func, arg ast.Expr) {
	arg = ast.Unparen(defs.Resolve(pass.TypesInfo, arg))
	c := checker{pass: pass, contrib: qualified(contrib)}
	switch a := arg.(type) {
	case *ast.CallExpr:
		// A function of the package returning the status function: each
		// literal it returns.
		fn := lookup.Callee(pass.TypesInfo, a)
		if fd := decls[fn]; fd != nil {
			for _, lit := range returnedLits(fd) {
				checkFunc(pass, defs, decls, contrib, lit)
			}
		}
	case *ast.FuncLit:
		c.scope = a
		c.params = params(pass.TypesInfo, a.Type)
		c.check(a.Body)
	case *ast.Ident, *ast.SelectorExpr:
		var id *ast.Ident
		if s, ok := a.(*ast.SelectorExpr); ok {
			id = s.Sel
		} else {
			id = a.(*ast.Ident)
		}
		fn, ok := pass.TypesInfo.ObjectOf(id).(*types.Func)
		if !ok {
			return
		}
		fd := decls[fn]
		if fd == nil {
			return
		}
		// A method value's receiver is shared with whoever else holds it:
		// it counts as outside the function.
		c.scope = fd.Type.Params
		if fd.Type.Results != nil {
			c.results = fd.Type.Results
		}
		c.body = fd.Body
		c.params = params(pass.TypesInfo, fd.Type)
		c.check(fd.Body)
	}
}

// returnedLits returns the function literals fd returns directly.
func returnedLits(fd *ast.FuncDecl) []*ast.FuncLit {
	var lits []*ast.FuncLit
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) == 1 {
				if lit, ok := ast.Unparen(n.Results[0]).(*ast.FuncLit); ok {
					lits = append(lits, lit)
				}
			}
		}
		return true
	})
	return lits
}

func params(info *types.Info, ft *ast.FuncType) map[types.Object]bool {
	m := map[types.Object]bool{}
	if ft.Params == nil {
		return m
	}
	for _, f := range ft.Params.List {
		for _, n := range f.Names {
			if obj := info.Defs[n]; obj != nil {
				m[obj] = true
			}
		}
	}
	return m
}

type checker struct {
	pass    *analysis.Pass
	contrib string
	// scope, body and results are the nodes whose ranges hold what the
	// function declares: the literal, or a declaration's parameters, body and
	// results (its receiver is outside).
	scope   ast.Node
	body    ast.Node
	results ast.Node
	params  map[types.Object]bool
}

// local reports whether obj is declared inside the function (its
// parameters included).
func (c *checker) local(obj types.Object) bool {
	p := obj.Pos()
	if c.scope.Pos() <= p && p < c.scope.End() {
		return true
	}
	for _, n := range []ast.Node{c.body, c.results} {
		if n != nil && n.Pos() <= p && p < n.End() {
			return true
		}
	}
	return false
}

func (c *checker) report(n ast.Node, format string, args ...any) {
	c.pass.Report(analysis.Diagnostic{
		Pos:     n.Pos(),
		End:     n.End(),
		Message: fmt.Sprintf("in a status function queued with %s: ", c.contrib) + fmt.Sprintf(format, args...),
	})
}

func (c *checker) check(body ast.Node) {
	info := c.pass.TypesInfo
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			c.report(n, "a go statement: the function runs at Flush and on each retry, and must have no side effects")
		case *ast.SendStmt:
			c.report(n, "a channel send: the function runs at Flush and on each retry, and must have no side effects")
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				c.report(n, "a channel receive: the function must be a deterministic function of what it is handed")
			}
		case *ast.SelectStmt:
			c.report(n, "a select statement: the function must be a deterministic function of what it is handed")
			return true
		case *ast.RangeStmt:
			if t := info.TypeOf(n.X); t != nil {
				if _, ok := t.Underlying().(*types.Chan); ok {
					c.report(n.X, "a range over a channel: the function must be a deterministic function of what it is handed")
				}
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				return true
			}
			for i, l := range n.Lhs {
				var rhs ast.Expr
				if len(n.Lhs) == len(n.Rhs) {
					rhs = n.Rhs[i]
				}
				c.write(l, rhs)
			}
		case *ast.IncDecStmt:
			c.write(n.X, nil)
		case *ast.CallExpr:
			c.call(n)
		}
		return true
	})
}

// write reports an assignment to lhs when it writes to a variable declared
// outside the function.
func (c *checker) write(lhs, rhs ast.Expr) {
	root := rootIdent(lhs)
	if root == nil || root.Name == "_" {
		return
	}
	obj, ok := c.pass.TypesInfo.ObjectOf(root).(*types.Var)
	if !ok || c.local(obj) {
		return
	}
	if rhs != nil {
		if p := rootIdent(rhs); p != nil && c.params[c.pass.TypesInfo.ObjectOf(p)] && reference(c.pass.TypesInfo.TypeOf(rhs)) {
			c.report(lhs, "keeps its parameter %s in %s, declared outside the function: the observed object and the apply configuration must not outlive the call", p.Name, root.Name)
			return
		}
	}
	c.report(lhs, "writes to %s, declared outside the function: the function runs at Flush and on each retry, and must have no side effects", root.Name)
}

// reference reports whether a value of type t shares what it points to.
func reference(t types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Interface, *types.Chan, *types.Signature:
		return true
	}
	return false
}

// rootIdent returns the variable e selects, indexes or dereferences into.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.UnaryExpr:
			if x.Op != token.AND {
				return nil
			}
			e = x.X
		case *ast.SliceExpr:
			e = x.X
		default:
			return nil
		}
	}
}

func (c *checker) call(call *ast.CallExpr) {
	info := c.pass.TypesInfo
	fn := lookup.Callee(info, call)
	if fn == nil {
		if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && id.Name == "close" {
			if _, ok := info.ObjectOf(id).(*types.Builtin); ok {
				c.report(call, "closes a channel: the function runs at Flush and on each retry, and must have no side effects")
			}
		}
		return
	}
	switch {
	case lookup.IsFunc(fn, "time", "Now"), lookup.IsFunc(fn, lookup.MetaV1Pkg, "Now"):
		c.report(call, "calls %s: statusapply sets a condition's lastTransitionTime itself, when its status changes, and the function must be a deterministic function of what it is handed", qualified(fn))
		return
	}
	if pkg, recv := lookup.RecvName(fn); pkg == lookup.ClientPkg && recv != "" && isClientRequest(fn.Name()) {
		c.report(call, "a request through the client (%s): the function runs at Flush and on each retry; read what it needs before queuing it, and write only what it is handed", fn.Name())
	}
}
