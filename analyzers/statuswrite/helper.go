package statuswrite

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ast/inspector"

	"github.com/statusapply/statusapply/analyzers/internal/lookup"
)

// helperWritesStatus reports whether the patch helper's Patch call (cur)
// may send a status patch: whether the status of the object it patches is
// touched in the code that runs before it, as the package doc states; made
// reports whether the helper was made in the function holding the Patch or
// one around it (otherwise the code before it is the callers' too).
func helperWritesStatus(info *types.Info, cur inspector.Cursor, call *ast.CallExpr) (touched, made bool) {
	obj := stripAddr(call.Args[1])
	body, from, to, made := helperSpan(info, cur, call)
	if body == nil {
		return true, made
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if touched || n == nil {
			return false
		}
		if n.End() <= from || n.Pos() >= to {
			return false // outside the span
		}
		if n.Pos() < from || n.End() > to {
			return true // around the span: look inside
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			// obj.Status..., read or written.
			if n.Sel.Name == "Status" && sameExpr(info, n.X, obj) {
				touched = true
			}
		case *ast.CallExpr:
			touched = callTouchesStatus(info, n, obj)
		case *ast.CompositeLit:
			touched = isConditionsOption(info.TypeOf(n))
		}
		return !touched
	})
	return touched, made
}

// helperSpan returns the function body and the positions between which the
// object's status is looked for: from the helper's creation by
// patch.NewHelper to the Patch call in the function that creates it (to the
// end of that function when the Patch is in a function literal, deferred or
// not, that runs later), or the whole outermost function holding the Patch
// when the helper's creation from that object is not found there; made
// reports whether the helper is made in that function, from the object or
// from another one the patched object is a copy of.
func helperSpan(info *types.Info, cur inspector.Cursor, call *ast.CallExpr) (_ ast.Node, from, to token.Pos, made bool) {
	var funcs []inspector.Cursor // innermost first
	for c := range cur.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		funcs = append(funcs, c)
	}
	if len(funcs) == 0 {
		return nil, token.NoPos, token.NoPos, false
	}
	outer := funcBody(funcs[len(funcs)-1].Node())
	if outer == nil {
		return nil, token.NoPos, token.NoPos, false
	}
	whole := func() (ast.Node, token.Pos, token.Pos, bool) { return outer, outer.Pos(), outer.End(), false }
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return whole()
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return whole()
	}
	helper, ok := info.ObjectOf(id).(*types.Var)
	if !ok {
		return whole()
	}
	// The last assignment of the helper variable before the Patch.
	rhs, last := lastAssign(info, outer, helper, call.Pos())
	if rhs == nil {
		return whole()
	}
	create, ok := ast.Unparen(rhs).(*ast.CallExpr)
	if !ok || !isNewHelper(lookup.Callee(info, create)) || len(create.Args) == 0 {
		return whole() // made elsewhere
	}
	if !sameExpr(info, create.Args[0], call.Args[1]) {
		// Made here from another object: what is patched is a copy,
		// whose changes are in this function.
		body, from, to, _ := whole()
		return body, from, to, true
	}
	// The function the creation is in, and whether the Patch is in the same one.
	creatorCur, ok := funcs[len(funcs)-1].FindNode(last)
	if !ok {
		return whole()
	}
	creator := innermostFunc(creatorCur)
	body := funcBody(creator)
	if body == nil {
		return whole()
	}
	if creator == funcs[0].Node() {
		return body, last.End(), call.End(), true
	}
	return body, last.End(), body.End(), true
}

// isNewHelper reports whether fn makes a patch helper: NewHelper of Cluster
// API's or Flux's patch package, or Flux's NewSerialPatcher.
func isNewHelper(fn *types.Func) bool {
	return fn != nil && fn.Pkg() != nil && lookup.IsHelperPkg(fn.Pkg().Path()) &&
		(lookup.IsFunc(fn, fn.Pkg().Path(), "NewHelper", "NewSerialPatcher"))
}

// isConditionsOption reports whether t is an option of the patch helper
// naming conditions: WithOwnedConditions, WithOwnedV1Beta1Conditions,
// WithForceOverwriteConditions. WithStatusObservedGeneration is not one: it
// changes status.observedGeneration only when the generation moved since the
// status was last written, which the spec patch it rides with does not do.
func isConditionsOption(t types.Type) bool {
	n, ok := types.Unalias(derefType(t)).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !lookup.IsHelperPkg(n.Obj().Pkg().Path()) {
		return false
	}
	return strings.Contains(n.Obj().Name(), "Conditions")
}

func funcBody(n ast.Node) *ast.BlockStmt {
	switch n := n.(type) {
	case *ast.FuncDecl:
		return n.Body
	case *ast.FuncLit:
		return n.Body
	}
	return nil
}

// callTouchesStatus reports whether call may change obj's status: a method of
// obj named Set...Conditions, obj passed as an interface with such a method
// (the conditions setters: conditions.Set, MarkTrue, SetSummary),
// or obj, or a variable or field it is reached through, passed to a function
// whose name contains Status or Condition or to a function value.
func callTouchesStatus(info *types.Info, call *ast.CallExpr, obj ast.Expr) bool {
	var name string
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.SelectorExpr:
		name = f.Sel.Name
		if isConditionsSetter(name) && sameExpr(info, f.X, obj) {
			return true
		}
	case *ast.Ident:
		name = f.Name
	case *ast.IndexExpr: // an explicit instantiation
		name = calleeName(f.X)
	case *ast.IndexListExpr:
		name = calleeName(f.X)
	}
	var sig *types.Signature
	if t := info.TypeOf(call.Fun); t != nil {
		sig, _ = t.Underlying().(*types.Signature)
	}
	byName := strings.Contains(name, "Status") || strings.Contains(name, "Condition")
	if tv := info.Types[call.Fun]; sig != nil && tv.IsValue() && lookup.Callee(info, call) == nil {
		// A function value (a parameter, an option): what it does is not
		// known here.
		byName = true
	}
	for i, arg := range call.Args {
		arg = ast.Unparen(arg)
		if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.AND {
			arg = ast.Unparen(u.X)
		}
		if sameExpr(info, arg, obj) {
			if byName {
				return true
			}
			if sig != nil && interfaceHas(paramType(sig, i), isConditionsSetter) {
				return true
			}
			continue
		}
		if byName && reachesThrough(info, arg, obj) {
			return true
		}
	}
	return false
}

func calleeName(e ast.Expr) string {
	switch e := ast.Unparen(e).(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// isConditionsSetter reports whether a method name is a conditions setter's:
// SetConditions, SetV1Beta1Conditions, SetV1Beta2Conditions.
func isConditionsSetter(name string) bool {
	return strings.HasPrefix(name, "Set") && strings.HasSuffix(name, "Conditions")
}

// interfaceHas reports whether t is an interface (a type parameter's
// constraint included) with a method whose name satisfies name: a
// conditions setter's (the Setter of Cluster API's conditions packages), a
// mutator's.
func interfaceHas(t types.Type, name func(string) bool) bool {
	if t == nil {
		return false
	}
	iface, ok := t.Underlying().(*types.Interface)
	if !ok {
		return false
	}
	for i := range iface.NumMethods() {
		if name(iface.Method(i).Name()) {
			return true
		}
	}
	return false
}

// paramType returns the type of the parameter argument i is passed to.
func paramType(sig *types.Signature, i int) types.Type {
	params := sig.Params()
	if params.Len() == 0 {
		return nil
	}
	if sig.Variadic() && i >= params.Len()-1 {
		if s, ok := params.At(params.Len() - 1).Type().(*types.Slice); ok {
			return s.Elem()
		}
		return nil
	}
	if i >= params.Len() {
		return nil
	}
	return params.At(i).Type()
}

// sameExpr reports whether e and obj denote the same object: the same
// variable, or the same selector or index expression.
func sameExpr(info *types.Info, e, obj ast.Expr) bool {
	e, obj = ast.Unparen(e), ast.Unparen(obj)
	if a, ok := e.(*ast.Ident); ok {
		b, ok := obj.(*ast.Ident)
		return ok && info.ObjectOf(a) != nil && info.ObjectOf(a) == info.ObjectOf(b)
	}
	if _, ok := obj.(*ast.Ident); ok {
		return false
	}
	return types.ExprString(e) == types.ExprString(obj)
}

// reachesThrough reports whether obj is reached through e: e is a proper
// prefix of obj's selector and index chain (s for s.cluster, cp for
// cp.Machines[name]).
func reachesThrough(info *types.Info, e, obj ast.Expr) bool {
	for {
		switch o := ast.Unparen(obj).(type) {
		case *ast.SelectorExpr:
			obj = o.X
		case *ast.IndexExpr:
			obj = o.X
		case *ast.StarExpr:
			obj = o.X
		default:
			return false
		}
		if sameExpr(info, e, obj) {
			return true
		}
	}
}
