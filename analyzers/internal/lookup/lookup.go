// Package lookup holds what the analyzers share: naming callees by package
// path and name, and finding what a local variable was set to.
package lookup

import (
	"go/ast"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// Package paths the analyzers match callees against.
const (
	ClientPkg     = "sigs.k8s.io/controller-runtime/pkg/client"
	BatcherPkg    = "github.com/statusapply/statusapply/batcher"
	ConditionsPkg = "github.com/statusapply/statusapply/conditions"
	CAPIPatchPkg  = "sigs.k8s.io/cluster-api/util/patch"
	// CAPIV1Beta1PatchPkg is Cluster API's deprecated patch helper, for
	// objects with v1beta1 conditions.
	CAPIV1Beta1PatchPkg = "sigs.k8s.io/cluster-api/util/deprecated/v1beta1/patch"
	FluxPatchPkg        = "github.com/fluxcd/pkg/runtime/patch"
	APITypesPkg         = "k8s.io/apimachinery/pkg/types"
	MetaV1Pkg           = "k8s.io/apimachinery/pkg/apis/meta/v1"
	UnstructuredPkg     = "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	MergePatchType      = "application/merge-patch+json"
)

// FlagSkipTests is the flag, of each analyzer, that leaves files ending in
// _test.go out of its reports.
const FlagSkipTests = "skiptests"

// AddSkipTests adds the FlagSkipTests flag to a; SkipTests honours it.
func AddSkipTests(a *analysis.Analyzer) {
	a.Flags.Bool(FlagSkipTests, false, "do not report in files ending in _test.go")
}

// SkipTests makes pass drop the diagnostics in files ending in _test.go when
// its analyzer's FlagSkipTests flag is set.
func SkipTests(pass *analysis.Pass) {
	if !BoolFlag(pass.Analyzer, FlagSkipTests) {
		return
	}
	report := pass.Report
	pass.Report = func(d analysis.Diagnostic) {
		if !strings.HasSuffix(pass.Fset.Position(d.Pos).Filename, "_test.go") {
			report(d)
		}
	}
}

// BoolFlag returns the value of a's boolean flag name.
func BoolFlag(a *analysis.Analyzer, name string) bool {
	f := a.Flags.Lookup(name)
	return f != nil && f.Value.String() == "true"
}

// IsHelperPkg reports whether path is the package of a patch helper that
// merges conditions per type: Cluster API's, current and deprecated, or
// Flux's.
func IsHelperPkg(path string) bool {
	switch path {
	case CAPIPatchPkg, CAPIV1Beta1PatchPkg, FluxPatchPkg:
		return true
	}
	return false
}

// Callee returns the function or method call calls, its generic origin when
// it is an instantiation, or nil (a builtin, a conversion, a func value).
func Callee(info *types.Info, call *ast.CallExpr) *types.Func {
	fn, _ := typeutil.Callee(info, call).(*types.Func)
	if fn == nil {
		return nil
	}
	return fn.Origin()
}

// IsFunc reports whether fn is a package-level function of pkg named one of names.
func IsFunc(fn *types.Func, pkg string, names ...string) bool {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != pkg {
		return false
	}
	if sig, ok := fn.Type().(*types.Signature); !ok || sig.Recv() != nil {
		return false
	}
	return slices.Contains(names, fn.Name())
}

// RecvName returns the name of the type declaring method fn, without
// pointer, and the path of its package; "" when fn is not a method of a named
// type.
func RecvName(fn *types.Func) (pkg, name string) {
	if fn == nil {
		return "", ""
	}
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return "", ""
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		if t.Obj().Pkg() == nil {
			return "", t.Obj().Name()
		}
		return t.Obj().Pkg().Path(), t.Obj().Name()
	}
	return "", ""
}

// IsMethod reports whether fn is a method named name of a type of pkg named
// one of recvs (any type of pkg when recvs is empty).
func IsMethod(fn *types.Func, pkg, name string, recvs ...string) bool {
	if fn == nil || fn.Name() != name {
		return false
	}
	p, r := RecvName(fn)
	return p == pkg && (len(recvs) == 0 || slices.Contains(recvs, r))
}

// Defs maps each local variable assigned exactly once, by its declaration,
// to the expression it was set to.
type Defs struct {
	init  map[types.Object]ast.Expr
	multi map[types.Object]bool
}

// NewDefs records the single assignments of the files ins walks.
func NewDefs(info *types.Info, ins *inspector.Inspector) *Defs {
	d := &Defs{init: map[types.Object]ast.Expr{}, multi: map[types.Object]bool{}}
	record := func(id *ast.Ident, rhs ast.Expr) {
		obj := info.ObjectOf(id)
		if obj == nil {
			return
		}
		if _, seen := d.init[obj]; seen || rhs == nil {
			d.multi[obj] = true
			return
		}
		d.init[obj] = rhs
	}
	ins.Preorder([]ast.Node{(*ast.AssignStmt)(nil), (*ast.ValueSpec)(nil)}, func(n ast.Node) {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				id, ok := ast.Unparen(l).(*ast.Ident)
				if !ok {
					continue
				}
				var rhs ast.Expr
				if len(n.Lhs) == len(n.Rhs) {
					rhs = n.Rhs[i]
				}
				record(id, rhs)
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				var rhs ast.Expr
				if len(n.Names) == len(n.Values) {
					rhs = n.Values[i]
				}
				record(id, rhs)
			}
		}
	})
	return d
}

// Resolve follows e, when it names a local variable set once, to what it was
// set to, and returns e otherwise.
func (d *Defs) Resolve(info *types.Info, e ast.Expr) ast.Expr {
	for range 4 {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return e
		}
		obj := info.ObjectOf(id)
		v, ok := obj.(*types.Var)
		if !ok || v.Parent() == nil || v.Parent() == v.Pkg().Scope() || d.multi[obj] {
			return e
		}
		init, ok := d.init[obj]
		if !ok {
			return e
		}
		e = init
	}
	return e
}
