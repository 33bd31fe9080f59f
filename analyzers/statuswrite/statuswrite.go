// Package statuswrite defines an analyzer that finds the status writes that
// can replace a whole list from a stale snapshot, and names the statusapply
// form to use instead.
//
// Each status write it finds falls in one of three classes:
//
//   - whole-list (reported): a write that sends a list whole, so that a
//     list another writer changed since the object was read is replaced:
//     Status().Update of controller-runtime's client, a generated clientset's
//     UpdateStatus, the dynamic client's UpdateStatus or Update(..., "status"),
//     a merge patch of the whole object (client.Merge), a raw merge patch
//     (client.RawPatch, a clientset's or the dynamic client's Patch with
//     types.MergePatchType and the "status" subresource) whose data carries a
//     list, and a merge patch computed from a snapshot (client.MergeFrom,
//     MergeFromWithOptions) when the code between the snapshot and the patch
//     may change a list of the object's status: an assignment to a list or
//     to an element of one, a setter such as SetConditions, or the object
//     handed to a function that may change its lists (meta.SetStatusCondition,
//     Cluster API's conditions.Set, a function of the project: the analyzer
//     records which functions may, as the ListWrites fact, across packages).
//     A merge patch carries a list only when the list changed since its
//     snapshot, so one that changes scalars alone is not reported. The Patch
//     of a patch helper (below) on an object without GetConditions (a Node,
//     an unstructured object) is such a merge patch, from the copy the
//     helper took when it was made;
//   - helper-managed (reported with -helpers): the Patch of Cluster API's
//     patch helper (sigs.k8s.io/cluster-api/util/patch, and the deprecated
//     util/deprecated/v1beta1/patch) or Flux's (Helper, SerialPatcher) on an
//     object with conditions whose status the code before it touches: the
//     helper merges conditions per type, but tracks no ownership per writer,
//     a candidate for migration rather than a lost update;
//   - skipped (reported with -skipped, under the category "skipped"): a
//     status write whose patch or data is built where the analyzer cannot
//     follow it, so that what it sends is not known, and a patch helper's
//     Patch whose helper is made elsewhere, in a function that does not
//     change the status: what it sends is what its callers changed.
//
// A patch built by a caller and sent by a function it is handed to (a
// deferred patchStatus(ctx, obj, patch)) is classified at the caller: the
// function carries the PatchSender fact. A patch variable assigned more than
// once is followed to its last assignment before the write.
//
// Each report says what the call sends, names the object's Go type, whether
// its status.conditions field is marked +listType=map (which server-side
// apply needs to merge conditions per type; a type of the Kubernetes API
// gets no advice about markers), and the statusapply call to use. A
// mutate-then-patch block
//
//	base := obj.DeepCopy()
//	obj.Status.Conditions = append(obj.Status.Conditions, ready)
//	err := c.Status().Patch(ctx, obj, client.MergeFrom(base))
//
// comes with a suggested fix that moves the mutations into an Edit:
//
//	base := obj.DeepCopy()
//	err := batcher.EditStatus(b, base, fieldManager, func(obj *T) error {
//		obj.Status.Conditions = append(obj.Status.Conditions, ready)
//		return nil
//	})
//
// where b (the reconcile's batch) and fieldManager (a constant naming the
// writer's field manager) are for the user to define: the fixed code does not
// compile until they are. With -skiptests, files ending in _test.go are not
// reported.
package statuswrite

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/statusapply/statusapply/analyzers/internal/lookup"
)

const doc = `report status writes that can replace a whole list from a stale snapshot

statuswrite reports Status().Update and a clientset's or the dynamic client's
UpdateStatus (the whole status), merge patches of the status (client.MergeFrom,
MergeFromWithOptions) when the code between the snapshot and the patch may
change a list, and raw merge patches whose data carries a list, naming the
object's type, whether its status.conditions is a map list (+listType=map)
and the statusapply form to use: batcher.EditStatus runs the same mutations
as an Edit, conditions.Status sets conditions, and batcher.Status applies an
apply configuration. With -helpers it also reports the Patch of Cluster API's
and Flux's patch helpers, which merge conditions per type (a migration
candidate); with -skipped, the status writes it could not analyze.`

// Flag names of the analyzer.
const (
	FlagHelpers   = "helpers"
	FlagSkipped   = "skipped"
	FlagSkipTests = lookup.FlagSkipTests
)

// Analyzer is the statuswrite analyzer.
var Analyzer = newAnalyzer()

func newAnalyzer() *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:      "statuswrite",
		Doc:       doc,
		URL:       "https://github.com/statusapply/statusapply/blob/main/docs/migration.md",
		Requires:  []*analysis.Analyzer{inspect.Analyzer},
		Run:       run,
		FactTypes: []analysis.Fact{new(ConditionsList), new(ListWrites), new(PatchSender)},
	}
	a.Flags.Bool(FlagHelpers, false, "also report the Patch of Cluster API's and Flux's patch helpers (helper-managed: conditions merged per type, no ownership per writer)")
	a.Flags.Bool(FlagSkipped, false, "also report, under the category \"skipped\", the status writes whose patch or data could not be followed")
	lookup.AddSkipTests(a)
	return a
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

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	exportConditionFacts(pass, ins)
	c := &classifier{pass: pass, lists: exportListWrites(pass, pass.Files), senders: map[*types.Func]PatchSender{}}
	c.exportSenders(pass.Files)
	lookup.SkipTests(pass)
	helpers, skippedToo := lookup.BoolFlag(pass.Analyzer, FlagHelpers), lookup.BoolFlag(pass.Analyzer, FlagSkipped)
	for cur := range ins.Root().Preorder((*ast.CallExpr)(nil)) {
		call := cur.Node().(*ast.CallExpr)
		fn := lookup.Callee(pass.TypesInfo, call)
		if fn == nil {
			continue
		}
		w, ok := c.classify(cur, call, fn)
		if !ok {
			continue
		}
		switch {
		case w.class == wholeList,
			w.class == helperManaged && helpers,
			w.class == skipped && skippedToo:
			report(pass, cur, call, w)
		}
	}
	return nil, nil
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
func conditionsNote(pass *analysis.Pass, t types.Type, builtin bool) string {
	if t == nil {
		return "status.conditions: the object's type is not known"
	}
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
	if builtin {
		return "status.conditions is not a map list in the Kubernetes API: server-side apply replaces it whole too, so give it one writer"
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

func report(pass *analysis.Pass, cur inspector.Cursor, call *ast.CallExpr, w write) {
	t := w.typ
	if w.obj != nil {
		t = pass.TypesInfo.TypeOf(w.obj)
	}
	name := "an object"
	if t != nil {
		name = typeName(t)
	}
	builtin := isBuiltin(t)
	d := analysis.Diagnostic{Pos: call.Pos(), End: call.End()}
	switch w.class {
	case wholeList:
		d.Category = CategoryWholeList
		var instead string
		switch {
		case builtin:
			instead = "apply this writer's fields with batcher.Status (the type's apply configuration from k8s.io/client-go/applyconfigurations) or batcher.EditStatus, under its own field manager"
		case strings.Contains(w.sends, "Update"):
			instead = "queue the status function with batcher.EditStatus (the same mutations, applied as this writer's fields) or batcher.Status, and set conditions with conditions.Status"
		case strings.HasPrefix(w.sends, "a raw"):
			instead = "queue the change with batcher.Status (an apply configuration) or batcher.EditStatus"
		default:
			instead = "queue the mutations with batcher.EditStatus, and set conditions with conditions.Status"
		}
		d.Message = fmt.Sprintf("%s %s: %s; %s; instead, %s", w.sends, name, w.why, conditionsNote(pass, t, builtin), instead)
		if w.fixable {
			if fix, ok := editFix(pass, cur, call); ok {
				d.SuggestedFixes = []analysis.SuggestedFix{fix}
			}
		}
	case helperManaged:
		d.Category = CategoryHelperManaged
		d.Message = fmt.Sprintf("%s %s merges conditions per type but tracks no owner per writer (helper-managed: a migration candidate); %s; to migrate, set each writer's conditions with conditions.Status and other status fields with batcher.EditStatus, each under its own field manager",
			w.sends, name, conditionsNote(pass, t, builtin))
	case skipped:
		d.Category = CategorySkipped
		d.Message = fmt.Sprintf("not analyzed: %s %s: %s", w.sends, name, w.why)
	default:
		return
	}
	pass.Report(d)
}

// isBuiltin reports whether t (or what it points to) is a type of the
// Kubernetes API, whose lists are as Kubernetes declares them.
func isBuiltin(t types.Type) bool {
	if t == nil {
		return false
	}
	n, ok := types.Unalias(derefType(t)).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	p := n.Obj().Pkg().Path()
	return strings.HasPrefix(p, "k8s.io/api/") || strings.HasPrefix(p, "k8s.io/apiextensions-apiserver/pkg/apis/") ||
		strings.HasPrefix(p, "k8s.io/kube-aggregator/pkg/apis/")
}
