package statuswrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/statusapply/statusapply/analyzers/internal/lookup"
)

// FieldManagerConst is the name the suggested fix gives the field manager:
// a constant the user defines (const fieldManager = "..."), so that the fixed
// code does not compile until the writer is named.
const FieldManagerConst = "fieldManager"

// editFix returns the fix that moves a mutate-then-merge-patch block into an
// Edit, when the block is exactly
//
//	base := obj.DeepCopy()
//	...statements mutating obj...
//	[if err := ][return ][err := ]W.Patch(ctx, obj, client.MergeFrom(base))
//
// in one block, obj is a local variable not used after the patch, and the
// statements neither return, branch nor use base.
func editFix(pass *analysis.Pass, cur inspector.Cursor, call *ast.CallExpr) (analysis.SuggestedFix, bool) {
	var none analysis.SuggestedFix
	info := pass.TypesInfo
	resolved, _ := resolveAt(info, outerBody(cur), call.Args[2], call.Pos())
	mf, ok := ast.Unparen(resolved).(*ast.CallExpr)
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
	if usedAfter(info, funcBody(innermostFunc(stmtCur)), objVar, stmtCur.Node().End()) {
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
	newCall := fmt.Sprintf("%s.EditStatus(b, %s, %s, func(%s %s) error {\n%s\nreturn nil\n})",
		batcherName, baseID.Name, FieldManagerConst, objID.Name, typ, body)
	edits := []analysis.TextEdit{
		{Pos: mutations[0].Pos(), End: stmtCur.Node().Pos()},
		{Pos: call.Pos(), End: call.End(), NewText: []byte(newCall)},
	}
	if importEdit != nil {
		edits = append([]analysis.TextEdit{*importEdit}, edits...)
	}
	return analysis.SuggestedFix{
		Message:   "queue the mutations as a batcher.EditStatus Edit (define the batch b and the constant " + FieldManagerConst + ", the writer's field manager)",
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

func enclosingFile(cur inspector.Cursor) *ast.File {
	for c := range cur.Enclosing((*ast.File)(nil)) {
		return c.Node().(*ast.File)
	}
	return nil
}

// usedAfter reports whether obj is used in body after pos.
func usedAfter(info *types.Info, body *ast.BlockStmt, obj types.Object, pos token.Pos) bool {
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
