package statuswrite

import (
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/statusapply/statusapply/analyzers/internal/lookup"
)

// class is what the analyzer makes of a status write.
type class int

const (
	// notReported: the write cannot replace a list from a stale snapshot
	// (a merge patch that carries no list, an apply).
	notReported class = iota
	// wholeList: the write may replace a list whole from a snapshot
	// another writer's change is not in.
	wholeList
	// helperManaged: a patch helper that merges conditions per type, but
	// tracks no ownership per writer.
	helperManaged
	// skipped: a status write whose content is not analyzed here.
	skipped
)

// Categories of the diagnostics, one per reported class.
const (
	CategoryWholeList     = "whole-list"
	CategoryHelperManaged = "helper-managed"
	CategorySkipped       = "skipped"
)

// write is a status write found at a call, as classified.
type write struct {
	class class
	obj   ast.Expr   // the object written (its type names it in messages)
	typ   types.Type // the object's type when there is no obj
	// sends says what the call sends, as the message's subject: "a merge
	// patch (client.MergeFromWithOptions, optimistic lock) of the status of".
	sends string
	// why says how a list may be replaced, or why the write was skipped.
	why string
	// fixable: a client.MergeFrom of controller-runtime, which editFix may
	// turn into an Edit.
	fixable bool
}

// PatchSender is the fact recorded on a function that sends, to the status
// subresource, a patch it is handed: Patch is the parameter index of the
// patch, Obj that of the object (-1 when the object is not a parameter).
type PatchSender struct{ Patch, Obj int }

// AFact marks PatchSender as an analysis fact.
func (*PatchSender) AFact() {}

func (p *PatchSender) String() string { return "sends a status patch it is handed" }

// classifier classifies the calls of one package.
type classifier struct {
	pass    *analysis.Pass
	lists   *scanner
	senders map[*types.Func]PatchSender
}

// classify returns the status write call makes, if any.
func (c *classifier) classify(cur inspector.Cursor, call *ast.CallExpr, fn *types.Func) (write, bool) {
	info := c.pass.TypesInfo
	switch {
	case lookup.IsMethod(fn, lookup.ClientPkg, "Update", "SubResourceWriter", "StatusWriter", "SubResourceClient"):
		if len(call.Args) >= 2 && onStatus(info, call) {
			return write{class: wholeList, obj: call.Args[1], sends: "Status().Update of", why: "it sends the whole status, and every list in it replaces the stored one"}, true
		}
	case lookup.IsMethod(fn, lookup.ClientPkg, "Patch", "SubResourceWriter", "StatusWriter", "SubResourceClient"):
		if len(call.Args) < 3 || !onStatus(info, call) {
			return write{}, false
		}
		return c.controllerRuntimePatch(cur, call, call.Args[1], call.Args[2]), true
	case isHelperPatch(fn):
		if len(call.Args) < 2 {
			return write{}, false
		}
		if !hasConditions(info.TypeOf(call.Args[1])) {
			return c.helperMergePatch(cur, call, fn), true
		}
		touched, made := helperWritesStatus(info, cur, call)
		switch {
		case touched:
			return write{class: helperManaged, obj: call.Args[1], sends: helperName(fn) + ".Patch of"}, true
		case !made:
			return helperElsewhere(call.Args[1], fn), true
		}
	case isClientsetUpdateStatus(fn):
		if len(call.Args) >= 2 {
			return write{class: wholeList, obj: call.Args[1], sends: clientName(fn) + ".UpdateStatus of", why: "it sends the whole status, and every list in it replaces the stored one"}, true
		}
	case isClientsetUpdate(fn):
		if len(call.Args) >= 4 && hasStatusArg(info, call.Args[3:]) {
			return write{class: wholeList, obj: call.Args[1], sends: clientName(fn) + ".Update (subresource status) of", why: "it sends the whole status, and every list in it replaces the stored one"}, true
		}
	case isClientsetPatch(fn):
		if len(call.Args) >= 6 && hasStatusArg(info, call.Args[5:]) {
			w := c.rawPatch(cur, call, clientName(fn)+".Patch", nil, call.Args[2], call.Args[3])
			if sig, ok := fn.Type().(*types.Signature); ok && sig.Results().Len() > 0 {
				w.typ = sig.Results().At(0).Type()
			}
			return w, true
		}
	default:
		p, ok := c.sender(fn)
		if obj, patch := p.args(call); ok && patch != nil {
			w := c.controllerRuntimePatch(cur, call, obj, patch)
			if w.class == skipped {
				return write{}, false // the patch is its caller's: the sender's callers are classified
			}
			w.sends = strings.Replace(w.sends, " of the status of", " of the status, sent by "+fn.Name()+", of", 1)
			w.fixable = false
			return w, true
		}
	}
	return write{}, false
}

// sender returns the PatchSender fact of fn, this package's or imported.
func (c *classifier) sender(fn *types.Func) (PatchSender, bool) {
	if fn == nil {
		return PatchSender{}, false
	}
	if fn.Pkg() == c.pass.Pkg {
		p, ok := c.senders[fn]
		return p, ok
	}
	var p PatchSender
	if c.pass.ImportObjectFact(fn, &p) {
		return p, true
	}
	return PatchSender{}, false
}

// controllerRuntimePatch classifies a status Patch of controller-runtime's
// client: obj (nil when not known) patched with patch.
func (c *classifier) controllerRuntimePatch(cur inspector.Cursor, call *ast.CallExpr, obj, patch ast.Expr) write {
	info := c.pass.TypesInfo
	body := outerBody(cur)
	resolved, _ := resolveAt(info, body, patch, call.Pos())
	p, ok := ast.Unparen(resolved).(*ast.CallExpr)
	if !ok {
		if isClientVar(info, resolved, "Merge") {
			return write{class: wholeList, obj: obj, sends: "a merge patch (client.Merge) of the status of", why: "it sends the whole object, and every list in it replaces the stored one"}
		}
		if isClientVar(info, resolved, "Apply") {
			return write{class: notReported}
		}
		if isParam(info, cur, resolved) {
			// Handed in: the function is a PatchSender, and its callers'
			// patches are classified where they are built.
			return write{class: notReported}
		}
		return write{class: skipped, obj: obj, sends: "a status patch of", why: "its patch is built where it cannot be followed"}
	}
	fn := lookup.Callee(info, p)
	switch {
	case lookup.IsFunc(fn, lookup.ClientPkg, "MergeFrom", "MergeFromWithOptions"):
		if len(p.Args) == 0 {
			return write{class: skipped, obj: obj, sends: "a status patch of", why: "its patch is built where it cannot be followed"}
		}
		sends := "a merge patch (client." + fn.Name()
		if fn.Name() == "MergeFromWithOptions" && optimisticLock(info, p.Args[1:]) {
			sends += ", optimistic lock"
		}
		sends += ") of the status of"
		if obj == nil {
			obj = deepCopySource(info, body, p.Args[0], p.Pos())
		}
		if obj == nil {
			return write{class: skipped, sends: sends, why: "the object it is computed from is not known"}
		}
		ch := c.mergeChange(cur, body, call, obj, p)
		if ch == nil {
			return write{class: notReported}
		}
		pos := c.pass.Fset.Position(ch.pos)
		return write{
			class: wholeList, obj: obj, sends: sends,
			why:     "it carries a list whole when the list changed since its snapshot, and " + ch.how + " (line " + strconv.Itoa(pos.Line) + ")",
			fixable: fn.Name() == "MergeFrom",
		}
	case lookup.IsFunc(fn, lookup.ClientPkg, "RawPatch"):
		if len(p.Args) != 2 {
			return write{class: skipped, obj: obj, sends: "a status patch of", why: "its patch is built where it cannot be followed"}
		}
		return c.rawPatch(cur, call, "client.RawPatch", obj, p.Args[0], p.Args[1])
	case lookup.IsFunc(fn, lookup.ClientPkg, "StrategicMergeFrom"), lookup.IsFunc(fn, lookup.ClientPkg, "ApplyFrom"):
		return write{class: notReported}
	}
	return write{class: skipped, obj: obj, sends: "a status patch of", why: "its patch is built where it cannot be followed"}
}

// mergeChange returns the first change of a list of obj between the
// snapshot the merge patch mf is computed from and the call that sends it.
func (c *classifier) mergeChange(cur inspector.Cursor, body *ast.BlockStmt, call *ast.CallExpr, obj ast.Expr, mf *ast.CallExpr) *change {
	if body == nil {
		return &change{pos: call.Pos(), how: "the code before it is not known"}
	}
	info := c.pass.TypesInfo
	// The snapshot: where the base was copied, else where the patch was
	// built, else (a base from elsewhere) the start of the function.
	from := body.Pos()
	if _, pos, ok := deepCopyAt(info, body, mf.Args[0], mf.Pos()); ok {
		from = pos
	}
	to := call.Pos()
	// A patch sent later, in a function literal (deferred), sends what
	// the rest of the function changes too.
	if lit, ok := innermostFunc(cur).(*ast.FuncLit); ok && lit.Pos() > from {
		to = body.End()
	}
	t := newTarget(info, stripAddr(obj))
	// What the function holds aliases of before the snapshot counts too.
	c.lists.collectAliases(body, from, t)
	return c.lists.find(body, from, to, t)
}

// helperMergePatch classifies a patch helper's Patch of an object without
// conditions (a Node, an unstructured object): the helper has no conditions
// to merge per type, so it sends the status as a merge patch from the copy
// it took when it was made, which carries a list whole when the code between
// the two may change one.
func (c *classifier) helperMergePatch(cur inspector.Cursor, call *ast.CallExpr, fn *types.Func) write {
	info := c.pass.TypesInfo
	obj := call.Args[1]
	sends := helperName(fn) + ".Patch of"
	body, from, to, made := helperSpan(info, cur, call)
	if body == nil {
		return write{class: skipped, obj: obj, sends: sends, why: "the code before it is not known"}
	}
	t := newTarget(info, stripAddr(obj))
	c.lists.collectAliases(body, from, t)
	ch := c.lists.find(body, from, to, t)
	switch {
	case ch == nil && made:
		return write{class: notReported}
	case ch == nil:
		return helperElsewhere(obj, fn)
	}
	pos := c.pass.Fset.Position(ch.pos)
	return write{
		class: wholeList, obj: obj, sends: sends,
		why: "without conditions to merge per type, it sends a merge patch of the status from the copy the helper took, which carries a list whole when the list changed since, and " +
			ch.how + " (line " + strconv.Itoa(pos.Line) + ")",
	}
}

// helperElsewhere is a helper's Patch whose helper was not made in the
// function holding it (a scope's PatchObject), when that function does not
// change the status: what the Patch sends is what its callers changed,
// which is not followed.
func helperElsewhere(obj ast.Expr, fn *types.Func) write {
	return write{class: skipped, obj: obj, sends: helperName(fn) + ".Patch of",
		why: "its helper is made elsewhere and the status changes it sends are its callers', which are not followed"}
}

func stripAddr(e ast.Expr) ast.Expr {
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.AND {
		return u.X
	}
	return e
}

// rawPatch classifies a merge patch whose data is given: what it carries,
// when the patch type is the merge patch's.
func (c *classifier) rawPatch(cur inspector.Cursor, call *ast.CallExpr, name string, obj, patchType, data ast.Expr) write {
	info := c.pass.TypesInfo
	data, _ = resolveAt(info, outerBody(cur), data, call.Pos())
	tv := info.Types[patchType]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		return write{class: skipped, obj: obj, sends: "a " + name + " of the status of", why: "its patch type is not a constant"}
	}
	if constant.StringVal(tv.Value) != lookup.MergePatchType {
		return write{class: notReported} // apply, JSON patch, strategic merge
	}
	sends := "a raw merge patch (" + name + ") of the status of"
	lists, known, what := dataLists(info, data)
	if !known {
		return write{class: skipped, obj: obj, sends: sends, why: "its data is built where it cannot be followed"}
	}
	if !lists {
		return write{class: notReported}
	}
	return write{class: wholeList, obj: obj, sends: sends, why: "it carries " + what + ", and every list in it replaces the stored one"}
}

// dataLists reports whether the JSON data of a raw patch carries a list:
// known when the data is a constant, a conversion of one, or json.Marshal of
// a value whose type (or composite literal) tells.
func dataLists(info *types.Info, data ast.Expr) (lists, known bool, what string) {
	data = ast.Unparen(data)
	if tv := info.Types[data]; tv.Value != nil && tv.Value.Kind() == constant.String {
		var v any
		if json.Unmarshal([]byte(constant.StringVal(tv.Value)), &v) != nil {
			return false, false, ""
		}
		return jsonHasList(v), true, "a list in its constant data"
	}
	switch d := data.(type) {
	case *ast.CallExpr:
		if tv := info.Types[d.Fun]; tv.IsType() && len(d.Args) == 1 {
			return dataLists(info, d.Args[0])
		}
		fn := lookup.Callee(info, d)
		if fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "encoding/json" && fn.Name() == "Marshal" && len(d.Args) == 1 {
			v := ast.Unparen(stripAddr(d.Args[0]))
			if has, ok := literalLists(info, v); ok {
				return has, true, "the lists of the literal it marshals"
			}
			t := info.TypeOf(v)
			if t == nil || types.IsInterface(t) {
				return false, false, ""
			}
			return containsList(t), true, "the JSON of a " + typeName(t)
		}
	}
	return false, false, ""
}

// literalLists reports whether a composite literal may hold a list; ok is
// false when one of its values' types does not tell.
func literalLists(info *types.Info, e ast.Expr) (has, ok bool) {
	lit, isLit := e.(*ast.CompositeLit)
	if !isLit {
		return false, false
	}
	t := info.TypeOf(lit)
	if t == nil {
		return false, false
	}
	switch t.Underlying().(type) {
	case *types.Slice, *types.Array:
		return true, true
	}
	for _, elt := range lit.Elts {
		v := elt
		if kv, isKV := elt.(*ast.KeyValueExpr); isKV {
			v = kv.Value
		}
		v = ast.Unparen(stripAddr(v))
		if h, known := literalLists(info, v); known {
			if h {
				return true, true
			}
			continue
		}
		vt := info.TypeOf(v)
		if tv := info.Types[v]; tv.Value != nil {
			continue
		}
		if vt == nil || types.IsInterface(vt) {
			return false, false
		}
		if containsList(vt) {
			return true, true
		}
	}
	return false, true
}

func jsonHasList(v any) bool {
	switch v := v.(type) {
	case []any:
		return true
	case map[string]any:
		for _, x := range v {
			if jsonHasList(x) {
				return true
			}
		}
	}
	return false
}

// exportSenders records the functions of the package that send, to the
// status subresource through controller-runtime, a patch they are handed as
// a parameter, iterating so that a function handing its parameter to such
// a sender is one too.
func (c *classifier) exportSenders(files []*ast.File) {
	info := c.pass.TypesInfo
	for round := 0; round < 4; round++ {
		added := false
		for _, f := range files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				fn, ok := info.Defs[fd.Name].(*types.Func)
				if _, done := c.senders[fn]; !ok || done {
					continue
				}
				if p, ok := c.sendsHandedPatch(fd); ok {
					c.senders[fn] = p
					added = true
				}
			}
		}
		if !added {
			break
		}
	}
	for fn, p := range c.senders {
		c.pass.ExportObjectFact(fn, &PatchSender{Patch: p.Patch, Obj: p.Obj})
	}
}

// sendsHandedPatch returns the PatchSender fact of fd when its body sends a
// status patch that is one of its parameters: through a status writer's
// Patch, or through a sender known so far.
func (c *classifier) sendsHandedPatch(fd *ast.FuncDecl) (PatchSender, bool) {
	info := c.pass.TypesInfo
	ps := params(fd)[1:]
	var found PatchSender
	ok := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, isCall := n.(*ast.CallExpr)
		if ok || !isCall {
			return !ok
		}
		callee := lookup.Callee(info, call)
		var obj, patch ast.Expr
		if lookup.IsMethod(callee, lookup.ClientPkg, "Patch", "SubResourceWriter", "StatusWriter", "SubResourceClient") {
			if len(call.Args) >= 3 && onStatus(info, call) {
				obj, patch = call.Args[1], call.Args[2]
			}
		} else if p, isSender := c.sender(callee); isSender {
			obj, patch = p.args(call)
		}
		if pi := paramIndex(info, ps, patch); pi >= 0 {
			found, ok = PatchSender{Patch: pi, Obj: paramIndex(info, ps, stripAddr(obj))}, true
		}
		return !ok
	})
	return found, ok
}

// args returns the object (nil when it is not a parameter) and the patch
// that call hands to the sender.
func (p PatchSender) args(call *ast.CallExpr) (obj, patch ast.Expr) {
	if p.Patch >= len(call.Args) {
		return nil, nil
	}
	if p.Obj >= 0 && p.Obj < len(call.Args) {
		obj = call.Args[p.Obj]
	}
	return obj, call.Args[p.Patch]
}

// isParam reports whether e names a parameter of the function declaration
// holding cur.
func isParam(info *types.Info, cur inspector.Cursor, e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	for c := range cur.Enclosing((*ast.FuncDecl)(nil)) {
		fd := c.Node().(*ast.FuncDecl)
		return paramIndex(info, params(fd)[1:], id) >= 0
	}
	return false
}

// paramIndex returns the index of the parameter e names, or -1.
func paramIndex(info *types.Info, ps []*ast.Ident, e ast.Expr) int {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return -1
	}
	obj := info.ObjectOf(id)
	for i, p := range ps {
		if p != nil && info.ObjectOf(p) == obj {
			return i
		}
	}
	return -1
}

// isHelperPatch reports whether fn is the Patch of a patch helper that
// merges conditions per type: Cluster API's Helper (current or deprecated),
// Flux's Helper or SerialPatcher.
func isHelperPatch(fn *types.Func) bool {
	if fn == nil || fn.Name() != "Patch" {
		return false
	}
	pkg, recv := lookup.RecvName(fn)
	return lookup.IsHelperPkg(pkg) && (recv == "Helper" || recv == "SerialPatcher")
}

// helperName names the helper fn belongs to in messages.
func helperName(fn *types.Func) string {
	pkg, recv := lookup.RecvName(fn)
	switch pkg {
	case lookup.CAPIPatchPkg:
		return "Cluster API's patch." + recv
	case lookup.CAPIV1Beta1PatchPkg:
		return "Cluster API's deprecated v1beta1 patch." + recv
	}
	return "Flux's patch." + recv
}

// The generated clientsets' and the dynamic client's methods, known by their
// signatures: UpdateStatus(ctx, obj, metav1.UpdateOptions),
// Update(ctx, obj, metav1.UpdateOptions, subresources ...string),
// Patch(ctx, name, types.PatchType, []byte, metav1.PatchOptions, subresources ...string).

func isClientsetUpdateStatus(fn *types.Func) bool {
	return fn != nil && fn.Name() == "UpdateStatus" && hasParams(fn, false, "context.Context", "", lookup.MetaV1Pkg+".UpdateOptions")
}

func isClientsetUpdate(fn *types.Func) bool {
	return fn != nil && fn.Name() == "Update" && hasParams(fn, true, "context.Context", "", lookup.MetaV1Pkg+".UpdateOptions", "")
}

func isClientsetPatch(fn *types.Func) bool {
	return fn != nil && fn.Name() == "Patch" && hasParams(fn, true, "context.Context", "string", lookup.APITypesPkg+".PatchType", "[]byte", lookup.MetaV1Pkg+".PatchOptions", "")
}

// hasParams reports whether fn is a method whose parameters' types print as
// want ("" for any).
func hasParams(fn *types.Func, variadic bool, want ...string) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil || sig.Params().Len() != len(want) || sig.Variadic() != variadic {
		return false
	}
	for i, w := range want {
		if w != "" && types.TypeString(sig.Params().At(i).Type(), nil) != w {
			return false
		}
	}
	return true
}

// clientName names the client fn belongs to: "the dynamic client" or the
// clientset's interface.
func clientName(fn *types.Func) string {
	pkg, recv := lookup.RecvName(fn)
	if strings.HasPrefix(pkg, "k8s.io/client-go/dynamic") {
		return "the dynamic client's " + recv
	}
	if recv == "" {
		return "a clientset"
	}
	return recv
}

// hasStatusArg reports whether one of the subresource arguments is the
// constant "status".
func hasStatusArg(info *types.Info, args []ast.Expr) bool {
	for _, a := range args {
		tv := info.Types[a]
		if tv.Value != nil && tv.Value.Kind() == constant.String && constant.StringVal(tv.Value) == "status" {
			return true
		}
	}
	return false
}

// isClientVar reports whether e names the package variable name of
// controller-runtime's client package (client.Merge, client.Apply).
func isClientVar(info *types.Info, e ast.Expr, name string) bool {
	var id *ast.Ident
	switch x := ast.Unparen(e).(type) {
	case *ast.SelectorExpr:
		id = x.Sel
	case *ast.Ident:
		id = x
	default:
		return false
	}
	v, ok := info.ObjectOf(id).(*types.Var)
	return ok && v.Pkg() != nil && v.Pkg().Path() == lookup.ClientPkg && v.Name() == name
}

// optimisticLock reports whether MergeFromWithOptions' options include
// client.MergeFromWithOptimisticLock.
func optimisticLock(info *types.Info, opts []ast.Expr) bool {
	for _, o := range opts {
		if n, ok := types.Unalias(info.TypeOf(o)).(*types.Named); ok && n.Obj().Name() == "MergeFromWithOptimisticLock" {
			return true
		}
	}
	return false
}

// outerBody returns the body of the outermost function holding cur.
func outerBody(cur inspector.Cursor) *ast.BlockStmt {
	var body *ast.BlockStmt
	for c := range cur.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		body = funcBody(c.Node())
	}
	return body
}

// innermostFunc returns the innermost function declaration or literal
// holding cur, or nil.
func innermostFunc(cur inspector.Cursor) ast.Node {
	for c := range cur.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		return c.Node()
	}
	return nil
}

// resolveAt follows e, while it names a local variable, to the value last
// assigned to it in body before pos, and returns that value and the
// position of its assignment (NoPos when e was not followed).
func resolveAt(info *types.Info, body *ast.BlockStmt, e ast.Expr, pos token.Pos) (ast.Expr, token.Pos) {
	at := token.NoPos
	for range 4 {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok || body == nil {
			return e, at
		}
		v, ok := info.ObjectOf(id).(*types.Var)
		if !ok || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() {
			return e, at
		}
		rhs, n := lastAssign(info, body, v, pos)
		if rhs == nil {
			return e, at
		}
		e, at, pos = rhs, n.Pos(), n.Pos()
	}
	return e, at
}

// lastAssign returns the value last assigned to v in body before pos (in
// source order), and the assignment or declaration: the value is nil when
// that one is not a plain assignment of one value to v.
func lastAssign(info *types.Info, body *ast.BlockStmt, v *types.Var, pos token.Pos) (ast.Expr, ast.Node) {
	var rhs ast.Expr
	var at ast.Node
	// value is the i-th of lhs's values: one each, or the first result of
	// a single call (data, err := json.Marshal(v)).
	value := func(i, lhs int, values []ast.Expr) ast.Expr {
		switch {
		case lhs == len(values):
			return values[i]
		case len(values) == 1 && i == 0:
			if _, ok := ast.Unparen(values[0]).(*ast.CallExpr); ok {
				return values[0]
			}
		}
		return nil
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil || n.Pos() >= pos {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok && info.ObjectOf(id) == v {
					rhs, at = nil, n
					if n.Tok == token.ASSIGN || n.Tok == token.DEFINE {
						rhs = value(i, len(n.Lhs), n.Rhs)
					}
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if info.ObjectOf(name) == v {
					rhs, at = value(i, len(n.Names), n.Values), n
				}
			}
		}
		return true
	})
	return rhs, at
}

// deepCopyAt follows base to a copy of an object (X.DeepCopy(),
// X.DeepCopyObject(), possibly converted or asserted) made in body before
// pos, and returns X and where the copy was made.
func deepCopyAt(info *types.Info, body *ast.BlockStmt, base ast.Expr, pos token.Pos) (ast.Expr, token.Pos, bool) {
	e, at := resolveAt(info, body, base, pos)
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.TypeAssertExpr:
			e = x.X
			continue
		case *ast.CallExpr:
			if tv := info.Types[x.Fun]; tv.IsType() && len(x.Args) == 1 {
				e = x.Args[0]
				continue
			}
			sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr)
			if !ok || len(x.Args) != 0 || !strings.HasPrefix(sel.Sel.Name, "DeepCopy") {
				return nil, token.NoPos, false
			}
			if !at.IsValid() {
				at = x.Pos()
			}
			return sel.X, at, true
		}
		return nil, token.NoPos, false
	}
}

// deepCopySource returns the object base is a copy of, or nil.
func deepCopySource(info *types.Info, body *ast.BlockStmt, base ast.Expr, pos token.Pos) ast.Expr {
	src, _, ok := deepCopyAt(info, body, base, pos)
	if !ok {
		return nil
	}
	return src
}
