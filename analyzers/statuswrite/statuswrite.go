// Package statuswrite defines an analyzer that finds the status writes that
// replace what they send whole, and names the statusapply form to use instead.
//
// It reports:
//
//   - Status().Update (or SubResource("status").Update): the whole status is
//     sent, and every list in it replaces the stored one;
//   - Status().Patch with client.MergeFrom or client.MergeFromWithOptions (with
//     or without the optimistic lock), client.Merge, or client.RawPatch of
//     types.MergePatchType: a JSON merge patch replaces every list it carries
//     whole, status.conditions included, so writers that share the list undo
//     each other's conditions;
//   - Cluster API's patch.Helper.Patch (sigs.k8s.io/cluster-api/util/patch) on
//     an object with GetConditions, when the object's status may have changed
//     since the helper was made.
//
// The helper sends a status patch only when the status differs from the copy
// it took, so its Patch is reported only when, between patch.NewHelper(obj,
// ...) and the Patch in the function that makes the helper (to that
// function's end when the Patch runs in a function literal, as a deferred one
// does), or anywhere in the function holding the Patch when the helper was
// not made there from obj, obj.Status is used, obj's Set...Conditions method
// is called or obj is passed as a conditions Setter (conditions.Set,
// MarkTrue, MarkFalse, SetSummary), obj or a variable it is reached through
// is passed to a function whose name contains Status or Condition or to a
// function value, or a patch option naming conditions (WithOwnedConditions,
// WithOwnedV1Beta1Conditions) is built. A Patch after a change of the spec,
// finalizers or metadata alone is not reported, nor one whose status change
// is made in a function of another name.
//
// Each report names the object's Go type, whether its status.conditions field
// is marked +listType=map (which server-side apply needs to merge conditions
// per type), and the statusapply call to use. A mutate-then-patch block
//
//	base := obj.DeepCopy()
//	obj.Status.Phase = "Ready"
//	err := c.Status().Patch(ctx, obj, client.MergeFrom(base))
//
// comes with a suggested fix that moves the mutations into an Edit:
//
//	base := obj.DeepCopy()
//	err := batcher.EditStatus(b, base, "MANAGER", func(obj *T) error {
//		obj.Status.Phase = "Ready"
//		return nil
//	})
//
// where b (the reconcile's batch) and "MANAGER" (the writer's field manager)
// are placeholders to fill in. Merge patches of the main resource (spec,
// metadata) and server-side applies are not reported.
package statuswrite

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/statusapply/statusapply/analyzers/internal/lookup"
)

const doc = `report status writes that replace what they send whole

statuswrite reports Status().Update, merge patches of the status subresource
(client.MergeFrom, MergeFromWithOptions, client.Merge, RawPatch of
types.MergePatchType) and Cluster API's patch.Helper.Patch on objects with
conditions when the code before it touches their status, naming the object's
type, whether its status.conditions is a map list (+listType=map) and the
statusapply form to use: batcher.EditStatus runs the same mutations as an
Edit, conditions.Status sets conditions, and batcher.Status applies an apply
configuration.`

// Analyzer is the statuswrite analyzer.
var Analyzer = &analysis.Analyzer{
	Name:      "statuswrite",
	Doc:       doc,
	URL:       "https://github.com/statusapply/statusapply/blob/main/docs/migration.md",
	Requires:  []*analysis.Analyzer{inspect.Analyzer},
	Run:       run,
	FactTypes: []analysis.Fact{new(ConditionsList)},
}

// ConditionsList is the fact recorded on a Conditions field of a struct: whether
// its doc comment carries the +listType=map marker.
type ConditionsList struct{ MapList bool }

// AFact marks ConditionsList as an analysis fact.
func (*ConditionsList) AFact() {}

func (c *ConditionsList) String() string {
	if c.MapList {
		return "conditions: map list"
	}
	return "conditions: not a map list"
}

// kind is what a reported write is.
type kind int

const (
	statusUpdate kind = iota
	statusMergePatch
	statusRawMergePatch
	capiHelper
)

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	exportConditionFacts(pass, ins)
	defs := lookup.NewDefs(pass.TypesInfo, ins)
	for cur := range ins.Root().Preorder((*ast.CallExpr)(nil)) {
		call := cur.Node().(*ast.CallExpr)
		fn := lookup.Callee(pass.TypesInfo, call)
		if fn == nil {
			continue
		}
		k, ok := classify(pass, defs, cur, call, fn)
		if !ok {
			continue
		}
		report(pass, defs, cur, call, k)
	}
	return nil, nil
}

// classify reports whether call is a status write that replaces what it
// sends, and which.
func classify(pass *analysis.Pass, defs *lookup.Defs, cur inspector.Cursor, call *ast.CallExpr, fn *types.Func) (kind, bool) {
	info := pass.TypesInfo
	switch {
	case lookup.IsMethod(fn, lookup.ClientPkg, "Update", "SubResourceWriter", "StatusWriter", "SubResourceClient"):
		if len(call.Args) >= 2 && onStatus(info, call) {
			return statusUpdate, true
		}
	case lookup.IsMethod(fn, lookup.ClientPkg, "Patch", "SubResourceWriter", "StatusWriter", "SubResourceClient"):
		if len(call.Args) < 3 || !onStatus(info, call) {
			return 0, false
		}
		return mergePatch(info, defs, call.Args[2])
	case lookup.IsMethod(fn, lookup.CAPIPatchPkg, "Patch", "Helper"):
		if len(call.Args) >= 2 && hasConditions(info.TypeOf(call.Args[1])) && helperWritesStatus(info, cur, call) {
			return capiHelper, true
		}
	}
	return 0, false
}

// onStatus reports whether the writer call is made on is the status
// subresource's: X.Status(), X.SubResource("status"), or a writer of any other
// origin (a variable, a field), which is taken for a status writer unless
// it is X.SubResource of another constant name.
func onStatus(info *types.Info, call *ast.CallExpr) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return true
	}
	inner, ok := ast.Unparen(sel.X).(*ast.CallExpr)
	if !ok {
		return true
	}
	fn := lookup.Callee(info, inner)
	if fn == nil || fn.Name() != "SubResource" || len(inner.Args) != 1 {
		return true
	}
	tv := info.Types[inner.Args[0]]
	return tv.Value == nil || tv.Value.Kind() != constant.String || constant.StringVal(tv.Value) == "status"
}

// mergePatch reports whether patch, followed through local variables, is a
// JSON merge patch.
func mergePatch(info *types.Info, defs *lookup.Defs, patch ast.Expr) (kind, bool) {
	patch = ast.Unparen(defs.Resolve(info, patch))
	switch p := patch.(type) {
	case *ast.CallExpr:
		fn := lookup.Callee(info, p)
		switch {
		case lookup.IsFunc(fn, lookup.ClientPkg, "MergeFrom", "MergeFromWithOptions"):
			return statusMergePatch, true
		case lookup.IsFunc(fn, lookup.ClientPkg, "RawPatch"):
			if len(p.Args) == 2 {
				tv := info.Types[p.Args[0]]
				if tv.Value != nil && tv.Value.Kind() == constant.String && constant.StringVal(tv.Value) == lookup.MergePatchType {
					return statusRawMergePatch, true
				}
			}
		}
	case *ast.SelectorExpr, *ast.Ident:
		var id *ast.Ident
		if s, ok := p.(*ast.SelectorExpr); ok {
			id = s.Sel
		} else {
			id = p.(*ast.Ident)
		}
		if v, ok := info.ObjectOf(id).(*types.Var); ok && v.Pkg() != nil && v.Pkg().Path() == lookup.ClientPkg && v.Name() == "Merge" {
			return statusRawMergePatch, true
		}
	}
	return 0, false
}

// hasConditions reports whether t (or a pointer to it) has a GetConditions method.
func hasConditions(t types.Type) bool {
	if t == nil {
		return false
	}
	if _, ok := t.Underlying().(*types.Pointer); !ok {
		t = types.NewPointer(t)
	}
	ms := types.NewMethodSet(t)
	for i := range ms.Len() {
		if ms.At(i).Obj().Name() == "GetConditions" {
			return true
		}
	}
	return false
}

// exportConditionFacts records, for every field named Conditions of a struct
// type declared in the package, whether it is marked +listType=map, so that
// packages using the type see the marker without its source.
func exportConditionFacts(pass *analysis.Pass, ins *inspector.Inspector) {
	ins.Preorder([]ast.Node{(*ast.Field)(nil)}, func(n ast.Node) {
		f := n.(*ast.Field)
		for _, name := range f.Names {
			if name.Name != "Conditions" {
				continue
			}
			v, ok := pass.TypesInfo.Defs[name].(*types.Var)
			if !ok || !v.IsField() {
				continue
			}
			pass.ExportObjectFact(v, &ConditionsList{MapList: hasMapMarker(f)})
		}
	})
}

// hasMapMarker reports whether the field's doc or line comment carries the
// +listType=map marker.
func hasMapMarker(f *ast.Field) bool {
	for _, g := range []*ast.CommentGroup{f.Doc, f.Comment} {
		if g == nil {
			continue
		}
		for _, c := range g.List {
			text := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"))
			if strings.HasPrefix(text, "+listType=map") || strings.HasPrefix(text, "+kubebuilder:validation:listType=map") {
				return true
			}
		}
	}
	return false
}

// conditionsField returns the status.conditions field of the object type t:
// Status, then Conditions, each possibly promoted from an embedded struct.
func conditionsField(t types.Type) *types.Var {
	if t == nil {
		return nil
	}
	status, _, _ := types.LookupFieldOrMethod(t, true, nil, "Status")
	sv, ok := status.(*types.Var)
	if !ok || !sv.IsField() {
		return nil
	}
	conds, _, _ := types.LookupFieldOrMethod(sv.Type(), true, nil, "Conditions")
	cv, ok := conds.(*types.Var)
	if !ok || !cv.IsField() {
		return nil
	}
	return cv
}

// conditionsNote says what the object's CRD makes of status.conditions, as
// far as the Go type's markers tell.
func conditionsNote(pass *analysis.Pass, t types.Type) string {
	f := conditionsField(t)
	if f == nil {
		switch types.Unalias(derefType(t)).Underlying().(type) {
		case *types.Interface, *types.Map:
			return "status.conditions: not known from the Go type"
		}
		if isUnstructured(t) {
			return "status.conditions: not known from the Go type"
		}
		return "no status.conditions field"
	}
	var fact ConditionsList
	if !pass.ImportObjectFact(f, &fact) {
		return "status.conditions: marker not known (the type's source was not analyzed)"
	}
	if fact.MapList {
		return "status.conditions is a map list (+listType=map)"
	}
	return "status.conditions is not marked +listType=map: make it a map list keyed by type first (statusapply lint), or server-side apply replaces it whole too"
}

func derefType(t types.Type) types.Type {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func isUnstructured(t types.Type) bool {
	n, ok := types.Unalias(derefType(t)).(*types.Named)
	return ok && n.Obj().Name() == "Unstructured"
}

// typeName prints t with package names, as code usually spells it.
func typeName(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Name() })
}

func report(pass *analysis.Pass, defs *lookup.Defs, cur inspector.Cursor, call *ast.CallExpr, k kind) {
	obj := call.Args[1]
	t := pass.TypesInfo.TypeOf(obj)
	name := typeName(t)
	var what, instead string
	switch k {
	case statusUpdate:
		what = "Status().Update of " + name + " replaces the whole status"
		instead = "queue the status function with batcher.EditStatus (the same mutations, applied as this writer's fields) or batcher.Status, and set conditions with conditions.Status"
	case statusMergePatch:
		what = "a merge patch (client.MergeFrom) of the status of " + name + " replaces every list it sends whole, status.conditions included"
		instead = "queue the mutations with batcher.EditStatus, and set conditions with conditions.Status"
	case statusRawMergePatch:
		what = "a raw merge patch of the status of " + name + " replaces every list it sends whole, status.conditions included"
		instead = "queue the change with batcher.Status (an apply configuration) or batcher.EditStatus"
	case capiHelper:
		what = "Cluster API's patch helper writes the status of " + name + " with merge patches and settles condition conflicts itself"
		instead = "set each writer's conditions with conditions.Status and other status fields with batcher.EditStatus, each under its own field manager"
	}
	d := analysis.Diagnostic{
		Pos:     call.Pos(),
		End:     call.End(),
		Message: fmt.Sprintf("%s; %s; instead, %s", what, conditionsNote(pass, t), instead),
	}
	if k == statusMergePatch {
		if fix, ok := editFix(pass, defs, cur, call); ok {
			d.SuggestedFixes = []analysis.SuggestedFix{fix}
		}
	}
	pass.Report(d)
}

// editFix returns the fix that moves a mutate-then-merge-patch block into an
// Edit, when the block is exactly
//
//	base := obj.DeepCopy()
//	...statements mutating obj...
//	[if err := ][return ][err := ]W.Patch(ctx, obj, client.MergeFrom(base))
//
// in one block, obj is a local variable not used after the patch, and the
// statements neither return, branch nor use base.
func editFix(pass *analysis.Pass, defs *lookup.Defs, cur inspector.Cursor, call *ast.CallExpr) (analysis.SuggestedFix, bool) {
	var none analysis.SuggestedFix
	info := pass.TypesInfo
	mf, ok := ast.Unparen(defs.Resolve(info, call.Args[2])).(*ast.CallExpr)
	if !ok || len(mf.Args) != 1 || !lookup.IsFunc(lookup.Callee(info, mf), lookup.ClientPkg, "MergeFrom") {
		return none, false
	}
	objID, ok := ast.Unparen(call.Args[1]).(*ast.Ident)
	baseID, ok2 := ast.Unparen(mf.Args[0]).(*ast.Ident)
	if !ok || !ok2 {
		return none, false
	}
	objVar, baseVar := info.ObjectOf(objID), info.ObjectOf(baseID)
	if objVar == nil || baseVar == nil {
		return none, false
	}
	// The statement holding the call, directly in a block.
	stmtCur, ok := enclosingStmt(cur, call)
	if !ok {
		return none, false
	}
	block, ok := stmtCur.Parent().Node().(*ast.BlockStmt)
	if !ok {
		return none, false
	}
	k := indexOf(block.List, stmtCur.Node().(ast.Stmt))
	// base := obj.DeepCopy(), earlier in the block.
	i := -1
	for j := k - 1; j >= 0; j-- {
		if isDeepCopyOf(info, block.List[j], baseVar, objVar) {
			i = j
			break
		}
	}
	if i < 0 || k-i < 2 {
		return none, false
	}
	mutations := block.List[i+1 : k]
	for _, s := range mutations {
		if !movable(info, s, baseVar) {
			return none, false
		}
	}
	if usedAfter(info, enclosingBody(stmtCur), objVar, stmtCur.Node().End()) {
		return none, false
	}
	// The Edit's parameter type, as this file names it.
	file := enclosingFile(cur)
	typ, ok := typeInFile(pass, file, objVar.Type())
	if !ok {
		return none, false
	}
	src, err := pass.ReadFile(pass.Fset.File(call.Pos()).Name())
	if err != nil {
		return none, false
	}
	tf := pass.Fset.File(call.Pos())
	body := string(src[tf.Offset(mutations[0].Pos()):tf.Offset(mutations[len(mutations)-1].End())])
	batcherName, importEdit := batcherImport(pass, file)
	newCall := fmt.Sprintf("%s.EditStatus(b, %s, \"MANAGER\", func(%s %s) error {\n%s\nreturn nil\n})",
		batcherName, baseID.Name, objID.Name, typ, body)
	edits := []analysis.TextEdit{
		{Pos: mutations[0].Pos(), End: stmtCur.Node().Pos()},
		{Pos: call.Pos(), End: call.End(), NewText: []byte(newCall)},
	}
	if importEdit != nil {
		edits = append([]analysis.TextEdit{*importEdit}, edits...)
	}
	return analysis.SuggestedFix{
		Message:   "queue the mutations as a batcher.EditStatus Edit (fill in the batch b and the field manager MANAGER)",
		TextEdits: edits,
	}, true
}

// enclosingStmt returns the statement of call when call is the statement (an
// expression statement, the single value of an assignment, a return, or an
// if statement's init assignment).
func enclosingStmt(cur inspector.Cursor, call *ast.CallExpr) (inspector.Cursor, bool) {
	p := cur.Parent()
	switch n := p.Node().(type) {
	case *ast.ExprStmt:
		return p, true
	case *ast.ReturnStmt:
		return p, len(n.Results) == 1
	case *ast.AssignStmt:
		if len(n.Rhs) != 1 || len(n.Lhs) != 1 {
			return p, false
		}
		if ifs, ok := p.Parent().Node().(*ast.IfStmt); ok {
			if ifs.Init == n {
				return p.Parent(), true
			}
			return p, false
		}
		return p, true
	}
	return p, false
}

func indexOf(list []ast.Stmt, s ast.Stmt) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// isDeepCopyOf reports whether s is `base := obj.DeepCopy()`.
func isDeepCopyOf(info *types.Info, s ast.Stmt, base, obj types.Object) bool {
	as, ok := s.(*ast.AssignStmt)
	if !ok || as.Tok != token.DEFINE || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
		return false
	}
	if id, ok := as.Lhs[0].(*ast.Ident); !ok || info.ObjectOf(id) != base {
		return false
	}
	c, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !ok || len(c.Args) != 0 {
		return false
	}
	sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "DeepCopy" {
		return false
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	return ok && info.ObjectOf(id) == obj
}

// movable reports whether s can move into a func literal unchanged: it
// declares nothing the rest of the block sees, neither returns nor branches
// out, and does not use base.
func movable(info *types.Info, s ast.Stmt, base types.Object) bool {
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			return false
		}
	case *ast.DeclStmt, *ast.LabeledStmt, *ast.DeferStmt, *ast.GoStmt:
		return false
	}
	ok := true
	ast.Inspect(s, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			ok = false
		case *ast.BranchStmt:
			// break and continue of loops inside s stay inside s.
			if n.Tok == token.GOTO || n.Label != nil || n.Tok == token.FALLTHROUGH {
				ok = false
			}
		case *ast.Ident:
			if info.ObjectOf(n) == base {
				ok = false
			}
		}
		return ok
	})
	if !ok {
		return false
	}
	// An unlabeled break or continue directly in s (not in a loop, switch or
	// select of s) would leave the block's own loop.
	return !branchesOut(s)
}

func branchesOut(s ast.Stmt) bool {
	out := false
	var walk func(n ast.Node, inLoop, inSwitch bool)
	walk = func(n ast.Node, inLoop, inSwitch bool) {
		switch n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			inLoop = true
		case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			inSwitch = true
		}
		ast.Inspect(n, func(m ast.Node) bool {
			if m == n {
				return true
			}
			switch m := m.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ForStmt, *ast.RangeStmt:
				walk(m, true, inSwitch)
				return false
			case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				walk(m, inLoop, true)
				return false
			case *ast.BranchStmt:
				if (m.Tok == token.CONTINUE && !inLoop) || (m.Tok == token.BREAK && !inLoop && !inSwitch) {
					out = true
				}
			}
			return true
		})
	}
	walk(s, false, false)
	return out
}

// enclosingBody returns the body of the function s is in.
func enclosingBody(cur inspector.Cursor) ast.Node {
	for c := range cur.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		switch n := c.Node().(type) {
		case *ast.FuncDecl:
			return n.Body
		case *ast.FuncLit:
			return n.Body
		}
	}
	return nil
}

func enclosingFile(cur inspector.Cursor) *ast.File {
	for c := range cur.Enclosing((*ast.File)(nil)) {
		return c.Node().(*ast.File)
	}
	return nil
}

// usedAfter reports whether obj is used in body after pos.
func usedAfter(info *types.Info, body ast.Node, obj types.Object, pos token.Pos) bool {
	if body == nil {
		return true
	}
	used := false
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Pos() > pos && info.ObjectOf(id) == obj {
			used = true
		}
		return !used
	})
	return used
}

// typeInFile prints t with package names as file imports them, or reports
// false when file does not import a package t needs.
func typeInFile(pass *analysis.Pass, file *ast.File, t types.Type) (string, bool) {
	if file == nil {
		return "", false
	}
	names := map[string]string{}
	for _, imp := range file.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if imp.Name != nil {
			names[path] = imp.Name.Name
			continue
		}
		if pn, ok := pass.TypesInfo.Implicits[imp].(*types.PkgName); ok {
			names[path] = pn.Imported().Name()
		}
	}
	ok := true
	s := types.TypeString(t, func(p *types.Package) string {
		if p == pass.Pkg {
			return ""
		}
		n, found := names[p.Path()]
		if !found || n == "_" || n == "." {
			ok = false
		}
		return n
	})
	return s, ok
}

// batcherImport returns the name the file uses for the batcher package, and
// the edit adding its import when the file has none.
func batcherImport(pass *analysis.Pass, file *ast.File) (string, *analysis.TextEdit) {
	for _, imp := range file.Imports {
		if strings.Trim(imp.Path.Value, `"`) == lookup.BatcherPkg {
			if imp.Name != nil {
				return imp.Name.Name, nil
			}
			return "batcher", nil
		}
	}
	if len(file.Imports) > 0 {
		// After the last import of the first import declaration.
		for _, d := range file.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT && g.Lparen.IsValid() {
				last := g.Specs[len(g.Specs)-1]
				return "batcher", &analysis.TextEdit{Pos: last.End(), End: last.End(), NewText: []byte("\n\t\"" + lookup.BatcherPkg + "\"")}
			}
		}
	}
	return "batcher", &analysis.TextEdit{Pos: file.Name.End(), End: file.Name.End(), NewText: []byte("\n\nimport \"" + lookup.BatcherPkg + "\"")}
}
