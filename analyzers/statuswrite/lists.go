package statuswrite

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/statusapply/statusapply/analyzers/internal/lookup"
)

// ListWrites is the fact recorded on a function that may change a list
// reached through one of its parameters, outside the spec and metadata: bit
// 0 for the receiver, bit i+1 for parameter i.
type ListWrites struct{ Params uint64 }

// AFact marks ListWrites as an analysis fact.
func (*ListWrites) AFact() {}

func (w *ListWrites) String() string { return "writes lists" }

// change is a write that may change a list of the object a merge patch
// sends, found between its snapshot and the patch.
type change struct {
	pos token.Pos
	how string
}

// step is one step from an expression's root to it: a field, an element of
// a slice or array ("[]"), a map key ("[key]", "[?]" when not constant), or
// a dereference ("*"). An unstructured object's UnstructuredContent() is
// the step to its Object field, which it returns.
type step string

// path is an expression split into its root (an identifier, a call, any
// expression that is not a field selection, index or dereference) and the
// steps to it, a promoted field's embedded fields included (ObjectMeta,
// OwnerReferences for secret.OwnerReferences).
type path struct {
	root  ast.Expr
	steps []step
}

// splitPath splits e into its root and steps.
func splitPath(info *types.Info, e ast.Expr) path {
	var steps []step // from e back to its root
	done := func(root ast.Expr) path {
		slices.Reverse(steps)
		return path{root: root, steps: steps}
	}
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			sel := info.Selections[x]
			if sel == nil || sel.Kind() != types.FieldVal {
				return done(x)
			}
			steps = append(steps, step(x.Sel.Name))
			embedded := embeddedFields(sel)
			for i := len(embedded) - 1; i >= 0; i-- {
				steps = append(steps, step(embedded[i]))
			}
			e = x.X
		case *ast.IndexExpr:
			t := info.TypeOf(x.X)
			if t == nil {
				return done(x)
			}
			switch u := t.Underlying().(type) {
			case *types.Map:
				key := "[?]"
				if tv := info.Types[x.Index]; tv.Value != nil && tv.Value.Kind() == constant.String {
					key = "[" + constant.StringVal(tv.Value) + "]"
				}
				steps = append(steps, step(key))
			case *types.Slice, *types.Array:
				steps = append(steps, "[]")
			case *types.Pointer:
				if _, ok := u.Elem().Underlying().(*types.Array); !ok {
					return done(x)
				}
				steps = append(steps, "[]")
			default:
				return done(x)
			}
			e = x.X
		case *ast.StarExpr:
			steps = append(steps, "*")
			e = x.X
		case *ast.UnaryExpr:
			if x.Op != token.AND {
				return done(x)
			}
			e = x.X
		case *ast.SliceExpr:
			steps = append(steps, "[]")
			e = x.X
		case *ast.CallExpr:
			// u.UnstructuredContent() is u.Object, which it returns.
			sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr)
			if !ok || len(x.Args) != 0 || !lookup.IsMethod(lookup.Callee(info, x), lookup.UnstructuredPkg, "UnstructuredContent", "Unstructured") {
				return done(x)
			}
			steps = append(steps, "Object")
			e = sel.X
		default:
			return done(x)
		}
	}
}

// embeddedFields returns the embedded fields a promoted field is selected
// through, outermost first: ObjectMeta for secret.OwnerReferences.
func embeddedFields(sel *types.Selection) []string {
	index := sel.Index()
	var names []string
	t := sel.Recv()
	for _, i := range index[:len(index)-1] {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok || i >= st.NumFields() {
			return names
		}
		f := st.Field(i)
		names = append(names, f.Name())
		t = f.Type()
	}
	return names
}

// fields drops the dereferences of steps, which do not change what is reached.
func (p path) fields() []step {
	var out []step
	for _, s := range p.steps {
		if s != "*" {
			out = append(out, s)
		}
	}
	return out
}

// target is what a list change is looked for in: an object (a path) and the
// local variables that alias a part of it.
type target struct {
	info    *types.Info
	obj     path
	aliases map[types.Object][]step // a variable and the steps from obj to what it points at
	// param: obj is a parameter of the function scanned, which an
	// assignment to it rebinds without changing what the caller handed in.
	param bool
}

func newTarget(info *types.Info, obj ast.Expr) *target {
	return &target{info: info, obj: splitPath(info, obj), aliases: map[types.Object][]step{}}
}

// within returns the steps from the target's object to e when e is the
// object or a part of it.
func (t *target) within(e ast.Expr) ([]step, bool) {
	p := splitPath(t.info, e)
	if id, ok := p.root.(*ast.Ident); ok {
		if base, ok := t.aliases[t.info.ObjectOf(id)]; ok {
			return append(append([]step(nil), base...), p.fields()...), true
		}
	}
	if !sameExpr(t.info, p.root, t.obj.root) {
		return nil, false
	}
	of, pf := t.obj.fields(), p.fields()
	if len(pf) < len(of) {
		return nil, false
	}
	for i := range of {
		if of[i] != pf[i] {
			return nil, false
		}
	}
	return pf[len(of):], true
}

// rebinds reports whether an assignment to l sets a variable alone, without
// changing what it pointed at: l is an alias (val, ok = m[k] after var val
// any = obj) or, for a parameter, the parameter itself.
func (t *target) rebinds(l ast.Expr) bool {
	id, ok := ast.Unparen(l).(*ast.Ident)
	if !ok {
		return false
	}
	if _, ok := t.aliases[t.info.ObjectOf(id)]; ok {
		return true
	}
	return t.param && len(t.obj.steps) == 0 && sameExpr(t.info, id, t.obj.root)
}

// reaches reports whether the target's object is reached through e: e is a
// proper prefix of its path (s for s.cluster).
func (t *target) reaches(e ast.Expr) bool {
	p := splitPath(t.info, e)
	if !sameExpr(t.info, p.root, t.obj.root) {
		return false
	}
	of, pf := t.obj.fields(), p.fields()
	if len(pf) >= len(of) {
		return false
	}
	for i := range pf {
		if pf[i] != of[i] {
			return false
		}
	}
	return true
}

// outsideStatus reports whether steps lead into the spec or the metadata,
// which a status patch does not send.
func outsideStatus(steps []step) bool {
	for i, s := range steps {
		if i > 1 {
			break
		}
		switch s {
		case "Spec", "ObjectMeta", "TypeMeta", "[spec]", "[metadata]", "[apiVersion]", "[kind]":
			return true
		}
	}
	return false
}

// throughList reports whether steps go through an element of a list.
func throughList(steps []step) bool {
	for _, s := range steps {
		if s == "[]" {
			return true
		}
	}
	return false
}

// containsList reports whether a value of type t may hold a list: a slice
// (other than []byte), an array, or an interface (unstructured content),
// directly or in an exported field, a pointer or a map value.
func containsList(t types.Type) bool {
	return containsListSeen(t, map[types.Type]bool{})
}

func containsListSeen(t types.Type, seen map[types.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Slice:
		b, ok := u.Elem().Underlying().(*types.Basic)
		return !ok || b.Kind() != types.Byte
	case *types.Array:
		return true
	case *types.Interface:
		return true
	case *types.Pointer:
		return containsListSeen(u.Elem(), seen)
	case *types.Map:
		return containsListSeen(u.Elem(), seen)
	case *types.Struct:
		for i := range u.NumFields() {
			f := u.Field(i)
			if f.Exported() && containsListSeen(f.Type(), seen) {
				return true
			}
		}
	}
	return false
}

// metadataSetters are the setters of metav1.Object: they change metadata,
// which a status patch does not send.
func isMetadataSetter(name string) bool {
	switch name {
	case "SetFinalizers", "SetLabels", "SetAnnotations", "SetOwnerReferences", "SetManagedFields",
		"SetName", "SetNamespace", "SetGenerateName", "SetUID", "SetResourceVersion", "SetGeneration",
		"SetSelfLink", "SetCreationTimestamp", "SetDeletionTimestamp", "SetDeletionGracePeriodSeconds",
		"SetGroupVersionKind", "SetAPIVersion", "SetKind":
		return true
	}
	return false
}

// mutatorName reports whether an interface method of that name may change
// what it is called on: a setter other than metadata's, or a name that says
// it adds, removes or marks.
func mutatorName(name string) bool {
	if isMetadataSetter(name) {
		return false
	}
	for _, p := range []string{"Set", "Add", "Remove", "Delete", "Mark", "Update", "Append", "Clear", "Reset", "Merge"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// scanner finds list changes, with the facts of the package's functions as
// computed so far.
type scanner struct {
	pass  *analysis.Pass
	local map[*types.Func]uint64
}

// writes returns the ListWrites bits of fn: the package's own as computed,
// or the fact of an imported function; ok is false when fn is not known (an
// interface method, a function without a body).
func (s *scanner) writes(fn *types.Func) (bits uint64, known bool) {
	if fn == nil {
		return 0, false
	}
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
		return 0, false
	}
	if fn.Pkg() == s.pass.Pkg {
		bits, ok := s.local[fn]
		return bits, ok
	}
	var f ListWrites
	if s.pass.ImportObjectFact(fn, &f) {
		return f.Params, true
	}
	// A function of an analyzed package without the fact writes no list; a
	// package not analyzed (no facts at all) is not told apart here.
	return 0, true
}

// find returns the first change in body, between from and to, of a list
// reached through t's object.
func (s *scanner) find(body ast.Node, from, to token.Pos, t *target) *change {
	info := s.pass.TypesInfo
	var found *change
	ast.Inspect(body, func(n ast.Node) bool {
		if found != nil || n == nil {
			return false
		}
		if n.End() <= from || n.Pos() >= to {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE || n.Tok == token.ASSIGN {
				s.alias(t, n.Lhs, n.Rhs)
			}
			if n.Tok == token.DEFINE {
				return true
			}
			for _, l := range n.Lhs {
				if t.rebinds(l) {
					continue
				}
				if steps, ok := t.within(l); ok && !outsideStatus(steps) && (throughList(steps) || containsList(info.TypeOf(l))) {
					found = &change{pos: n.Pos(), how: describe(steps) + " is assigned"}
					return false
				}
			}
		case *ast.ValueSpec:
			var lhs []ast.Expr
			for _, name := range n.Names {
				lhs = append(lhs, name)
			}
			s.alias(t, lhs, n.Values)
		case *ast.IncDecStmt:
			if steps, ok := t.within(n.X); ok && !outsideStatus(steps) && throughList(steps) {
				found = &change{pos: n.Pos(), how: describe(steps) + " is changed"}
				return false
			}
		case *ast.CallExpr:
			if c := s.callChanges(n, t); c != nil {
				found = c
				return false
			}
		}
		return true
	})
	return found
}

// collectAliases records the aliases of t's object that body sets before pos.
func (s *scanner) collectAliases(body ast.Node, pos token.Pos, t *target) {
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil || n.Pos() >= pos {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE || n.Tok == token.ASSIGN {
				s.alias(t, n.Lhs, n.Rhs)
			}
		case *ast.ValueSpec:
			var lhs []ast.Expr
			for _, name := range n.Names {
				lhs = append(lhs, name)
			}
			s.alias(t, lhs, n.Values)
		}
		return true
	})
}

// alias records the variables set to a pointer, slice or map reached through
// t's object, which writes through them change.
func (s *scanner) alias(t *target, lhs, rhs []ast.Expr) {
	if len(lhs) != len(rhs) {
		return
	}
	info := s.pass.TypesInfo
	for i, l := range lhs {
		id, ok := l.(*ast.Ident)
		if !ok || id.Name == "_" {
			continue
		}
		rt := info.TypeOf(rhs[i])
		if rt == nil {
			continue
		}
		switch rt.Underlying().(type) {
		case *types.Pointer, *types.Slice, *types.Map:
		default:
			continue
		}
		if steps, ok := t.within(rhs[i]); ok {
			if obj := info.ObjectOf(id); obj != nil {
				t.aliases[obj] = steps
			}
		}
	}
}

// callChanges returns the change call may make to a list reached through
// t's object: a method that may write its receiver, or the object (a part
// of it, or what it is reached through) handed to a function that may write
// lists through that parameter.
func (s *scanner) callChanges(call *ast.CallExpr, t *target) *change {
	info := s.pass.TypesInfo
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := info.ObjectOf(id).(*types.Builtin); ok {
			if b.Name() == "copy" && len(call.Args) == 2 {
				if steps, ok := t.within(call.Args[0]); ok && !outsideStatus(steps) {
					return &change{pos: call.Pos(), how: describe(steps) + " is copied into"}
				}
			}
			return nil
		}
	}
	if tv := info.Types[call.Fun]; tv.IsType() {
		return nil // a conversion
	}
	fn := lookup.Callee(info, call)
	if fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == lookup.UnstructuredPkg && strings.HasPrefix(fn.Name(), "SetNested") {
		return s.setNested(call, fn, t)
	}
	bits, known := s.writes(fn)
	name := calleeName(call.Fun)
	// The receiver.
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if selection := info.Selections[sel]; selection != nil && selection.Kind() == types.MethodVal {
			steps, in := t.within(sel.X)
			if in && !outsideStatus(steps) && !isMetadataSetter(name) {
				if (known && bits&1 != 0) || (!known && mutatorName(name)) {
					return &change{pos: call.Pos(), how: name + " changes " + describe(steps)}
				}
			}
		}
	}
	var sig *types.Signature
	if ft := info.TypeOf(call.Fun); ft != nil {
		sig, _ = ft.Underlying().(*types.Signature)
	}
	if sig == nil {
		return nil
	}
	for i, arg := range call.Args {
		steps, in := t.within(arg)
		if in && outsideStatus(steps) {
			continue
		}
		if !in && !t.reaches(arg) {
			continue
		}
		pt := paramType(sig, i)
		if pt == nil || isEmptyInterface(pt) {
			continue
		}
		param := i
		if sig.Variadic() && i >= sig.Params().Len()-1 {
			param = sig.Params().Len() - 1
		}
		var may bool
		switch {
		case known:
			may = param+1 < 64 && bits&(1<<(param+1)) != 0
		case types.IsInterface(pt):
			// A parameter of an interface type with a mutator method
			// (conditions.Setter's SetConditions) lets the function change
			// a list through it.
			may = interfaceHas(pt, mutatorName)
		default:
			may = referenceType(info.TypeOf(arg)) && containsList(info.TypeOf(arg))
		}
		if !may {
			continue
		}
		what := "the object"
		if in && len(steps) > 0 {
			what = describe(steps)
		}
		if name == "" {
			name = "a function value"
		}
		return &change{pos: call.Pos(), how: what + " is handed to " + name + ", which may change its lists"}
	}
	return nil
}

// setNested returns the change unstructured.SetNested... makes to t's object:
// one when the map it writes is the object's, the path is not the spec's
// or metadata's, and the value may hold a list (a slice setter, or a value
// whose type or literal may).
func (s *scanner) setNested(call *ast.CallExpr, fn *types.Func, t *target) *change {
	info := s.pass.TypesInfo
	if len(call.Args) < 2 {
		return nil
	}
	if _, in := t.within(call.Args[0]); !in && !t.reaches(call.Args[0]) {
		return nil
	}
	var fields []string
	for _, a := range call.Args[2:] {
		tv := info.Types[a]
		if tv.Value == nil || tv.Value.Kind() != constant.String {
			break
		}
		fields = append(fields, constant.StringVal(tv.Value))
	}
	if len(fields) > 0 && (fields[0] == "spec" || fields[0] == "metadata") {
		return nil
	}
	value := ast.Unparen(call.Args[1])
	if id, ok := value.(*ast.Ident); ok {
		if lit := s.literalOf(id); lit != nil {
			value = lit
		}
	}
	lists := strings.HasSuffix(fn.Name(), "Slice")
	if !lists {
		if tv := info.Types[value]; tv.Value != nil {
			return nil
		}
		if has, ok := literalLists(info, stripAddr(value)); ok {
			lists = has
		} else {
			lists = containsList(info.TypeOf(value))
		}
	}
	if !lists {
		return nil
	}
	what := "the object"
	if len(fields) > 0 {
		what = strings.Join(fields, ".")
	}
	return &change{pos: call.Pos(), how: what + " is set by " + fn.Name() + " to a value that may hold a list"}
}

// literalOf returns the composite literal the local variable id names was
// declared with, when nothing can have changed the variable since: it is
// not assigned again, and every other use of it is the value of an
// unstructured.SetNested... call, which copies it. It returns nil
// otherwise: a map handed to a function, or written by index, may hold a
// list its literal does not show.
func (s *scanner) literalOf(id *ast.Ident) *ast.CompositeLit {
	info := s.pass.TypesInfo
	v, ok := info.Uses[id].(*types.Var)
	if !ok || v.Pkg() == nil || v.Parent() == nil || v.Parent() == v.Pkg().Scope() || v.IsField() {
		return nil
	}
	scope := v.Parent()
	var file *ast.File
	for _, f := range s.pass.Files {
		if f.FileStart <= v.Pos() && v.Pos() < f.FileEnd {
			file = f
		}
	}
	if file == nil || !scope.Pos().IsValid() {
		return nil
	}
	var decl ast.Expr
	bad := false
	copied := map[*ast.Ident]bool{}
	var uses []*ast.Ident
	declare := func(lhs []*ast.Ident, rhs []ast.Expr) {
		for i, l := range lhs {
			if info.ObjectOf(l) != v {
				continue
			}
			if info.Defs[l] != v || len(lhs) != len(rhs) {
				bad = true
				continue
			}
			decl = rhs[i]
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if bad || n == nil || n.End() <= scope.Pos() || n.Pos() >= scope.End() {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			var lhs []*ast.Ident
			for _, l := range n.Lhs {
				if lid, ok := ast.Unparen(l).(*ast.Ident); ok {
					lhs = append(lhs, lid)
				} else {
					lhs = append(lhs, ast.NewIdent("_"))
				}
			}
			if n.Tok == token.DEFINE {
				declare(lhs, n.Rhs)
			}
		case *ast.ValueSpec:
			declare(n.Names, n.Values)
		case *ast.CallExpr:
			if len(n.Args) < 2 {
				break
			}
			if a, ok := ast.Unparen(n.Args[1]).(*ast.Ident); ok && info.Uses[a] == v {
				if fn := lookup.Callee(info, n); fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == lookup.UnstructuredPkg && strings.HasPrefix(fn.Name(), "SetNested") {
					copied[a] = true
				}
			}
		case *ast.Ident:
			if info.Uses[n] == v {
				uses = append(uses, n)
			}
		}
		return true
	})
	if bad {
		return nil
	}
	for _, u := range uses {
		if !copied[u] {
			return nil
		}
	}
	lit, _ := ast.Unparen(decl).(*ast.CompositeLit)
	return lit
}

func isEmptyInterface(t types.Type) bool {
	iface, ok := t.Underlying().(*types.Interface)
	return ok && iface.Empty()
}

// referenceType reports whether a value of type t lets a function that is
// handed it change what it points at.
func referenceType(t types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Interface:
		return true
	}
	return false
}

// describe names steps as a JSON path would, for messages: status.conditions.
func describe(steps []step) string {
	if len(steps) == 0 {
		return "the object"
	}
	var b strings.Builder
	for i, s := range steps {
		switch {
		case s == "[]":
			b.WriteString("[i]")
		case strings.HasPrefix(string(s), "["):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(strings.Trim(string(s), "[]"))
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(lowerFirst(string(s)))
		}
	}
	return b.String()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// exportListWrites computes, for every function and method of the package,
// whether it may change a list through each of its parameters, iterating to
// a fixed point over the package's own calls, and exports the fact for those
// that may. It returns the scanner holding the package's results.
func exportListWrites(pass *analysis.Pass, files []*ast.File) *scanner {
	s := &scanner{pass: pass, local: map[*types.Func]uint64{}}
	var decls []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					decls = append(decls, fd)
					s.local[fn] = 0
				}
			}
		}
	}
	for round := 0; round < 8; round++ {
		changed := false
		for _, fd := range decls {
			fn := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			bits := s.local[fn]
			for i, p := range params(fd) {
				if i >= 64 || p == nil || bits&(1<<i) != 0 {
					continue
				}
				t := newTarget(pass.TypesInfo, p)
				t.param = true
				if s.find(fd.Body, fd.Body.Pos(), fd.Body.End(), t) != nil {
					bits |= 1 << i
				}
			}
			if bits != s.local[fn] {
				s.local[fn] = bits
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for fn, bits := range s.local {
		if bits != 0 {
			pass.ExportObjectFact(fn, &ListWrites{Params: bits})
		}
	}
	return s
}

// params returns the identifiers of fd's receiver (first, nil when none or
// unnamed) and parameters, one per ListWrites bit.
func params(fd *ast.FuncDecl) []*ast.Ident {
	out := []*ast.Ident{nil}
	if fd.Recv != nil && len(fd.Recv.List) == 1 && len(fd.Recv.List[0].Names) == 1 {
		out[0] = fd.Recv.List[0].Names[0]
	}
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			out = append(out, nil)
			continue
		}
		for _, n := range f.Names {
			if n.Name == "_" {
				out = append(out, nil)
				continue
			}
			out = append(out, n)
		}
	}
	return out
}
