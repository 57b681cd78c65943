package service_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReferenceErrorTableListsEveryCode scans the service's Go source for every
// error code it can return (error envelopes and error events) and fails
// when the error table of docs/reference/errors.md lacks one, or lists one
// the code no longer returns. A code is found where the code
// base makes one, whoever adds it:
//   - httpapi.Errorf(status, "code", ...) and turn.Failed("code", ...);
//   - a composite literal field Code: "code" or code: "code" (api.Error,
//     api.ErrorEvent, llm.Error, httpapi.Error);
//   - a constant named Code... or code... with a string value;
//   - in a function named ...Code, every string it returns, and "prefix" +
//     k where k comes from a call: prefix + each string that function
//     returns, less the values a switch on k handles in its own cases.
func TestReferenceErrorTableListsEveryCode(t *testing.T) {
	codes := scanErrorCodes(t, "..")
	for _, must := range []string{"proxy_turn_complete", "cli_failed", "turn_in_progress", "proxy_timeout", "upstream_timeout"} {
		if _, ok := codes[must]; !ok { // the scanner itself must see the codes it is meant to find
			t.Fatalf("the scan missed %q; found %v", must, sortedKeys(codes))
		}
	}
	table := referenceErrorTable(t, "../docs/reference/errors.md")
	for code, where := range codes {
		if !table[code] {
			t.Errorf("error code %q (%s) is not in the error table of docs/reference/errors.md", code, strings.Join(where, ", "))
		}
	}
	for code := range table {
		if _, ok := codes[code]; !ok {
			t.Errorf("docs/reference/errors.md lists %q, which the code base no longer returns", code)
		}
	}
}

var codeShape = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// scanErrorCodes parses every non-test Go file of the service (service/
// and the desktop's in-process start in main.go) and returns code → where.
func scanErrorCodes(t *testing.T, root string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	add := func(path string) {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	err := filepath.WalkDir(filepath.Join(root, "service"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			add(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	add(filepath.Join(root, "main.go"))

	funcs := map[string]*ast.FuncDecl{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	codes := map[string][]string{}
	found := func(lit ast.Expr, prefix string) {
		s, ok := stringLit(lit)
		if !ok || !codeShape.MatchString(prefix+s) || s == "" {
			return
		}
		p := fset.Position(lit.Pos())
		codes[prefix+s] = append(codes[prefix+s], filepath.Base(p.Filename)+":"+strconv.Itoa(p.Line))
	}
	returns := func(fd *ast.FuncDecl, each func(ast.Expr, *ast.SwitchStmt)) {
		var sw []*ast.SwitchStmt
		var walk func(n ast.Node) bool
		walk = func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.SwitchStmt:
				sw = append(sw, x)
				ast.Inspect(x.Body, walk)
				sw = sw[:len(sw)-1]
				return false
			case *ast.ReturnStmt:
				if len(x.Results) == 1 {
					var in *ast.SwitchStmt
					if len(sw) > 0 {
						in = sw[len(sw)-1]
					}
					each(x.Results[0], in)
				}
			}
			return true
		}
		if fd.Body != nil {
			ast.Inspect(fd.Body, walk)
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				id, ok := x.Fun.(*ast.Ident)
				if sel, isSel := x.Fun.(*ast.SelectorExpr); isSel {
					// httpapi.Errorf and turn.Failed as other packages call them
					if pkg, isPkg := sel.X.(*ast.Ident); isPkg && (pkg.Name == "httpapi" && sel.Sel.Name == "Errorf" || pkg.Name == "turn" && sel.Sel.Name == "Failed") {
						id, ok = sel.Sel, true
					}
				}
				if ok {
					var code ast.Expr
					switch {
					case (id.Name == "Errorf" || id.Name == "errorf") && len(x.Args) > 1: // Errorf inside package httpapi
						code = x.Args[1]
					case (id.Name == "Failed" || id.Name == "failed") && len(x.Args) > 0:
						code = x.Args[0]
					default:
						return true
					}
					if _, ok := stringLit(code); ok {
						found(code, "")
					} else if !passThrough(code) {
						t.Errorf("%s: the code %s is neither a literal, nor a ...Code function's result, nor an error's .Code: the scan cannot see it", fset.Position(code.Pos()), exprString(code))
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && (k.Name == "Code" || k.Name == "code") {
					found(x.Value, "")
				}
			case *ast.ValueSpec:
				for i, name := range x.Names {
					if i < len(x.Values) && regexp.MustCompile(`^[Cc]ode[A-Z]`).MatchString(name.Name) {
						found(x.Values[i], "")
					}
				}
			case *ast.FuncDecl:
				if !strings.HasSuffix(x.Name.Name, "Code") {
					return true
				}
				returns(x, func(r ast.Expr, sw *ast.SwitchStmt) {
					be, ok := r.(*ast.BinaryExpr)
					if !ok || be.Op != token.ADD {
						found(r, "")
						return
					}
					prefix, ok := stringLit(be.X)
					v, isIdent := be.Y.(*ast.Ident)
					if !ok || !isIdent || sw == nil {
						t.Errorf("%s: cannot resolve the code %s", fset.Position(r.Pos()), exprString(r))
						return
					}
					// The switch's tag: k := pkg.Fn(...); k
					src := callOf(sw.Init, v.Name)
					fn := funcs[src]
					if fn == nil {
						t.Errorf("%s: %s comes from a function the scan cannot read", fset.Position(r.Pos()), v.Name)
						return
					}
					handled := map[string]bool{}
					for _, st := range sw.Body.List {
						for _, e := range st.(*ast.CaseClause).List {
							if s, ok := stringLit(e); ok {
								handled[s] = true
							}
						}
					}
					returns(fn, func(fr ast.Expr, _ *ast.SwitchStmt) {
						if s, ok := stringLit(fr); ok && !handled[s] {
							found(fr, prefix)
						}
					})
				})
			}
			return true
		})
	}
	return codes
}

// passThrough reports a code that is counted where it is made: the result
// of a function named ...Code (scanned as such), another error's .Code, or a
// constant named Code... of another package (scanned where it is declared).
func passThrough(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok {
			return strings.HasSuffix(id.Name, "Code")
		}
	case *ast.SelectorExpr:
		return x.Sel.Name == "Code" || x.Sel.Name == "code" || strings.HasPrefix(x.Sel.Name, "Code")
	}
	return false
}

// callOf returns the name of the function whose result init assigns to v.
func callOf(init ast.Stmt, v string) string {
	as, ok := init.(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
		return ""
	}
	if id, ok := as.Lhs[0].(*ast.Ident); !ok || id.Name != v {
		return ""
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok {
		return ""
	}
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

func exprString(e ast.Expr) string {
	if s, ok := stringLit(e); ok {
		return strconv.Quote(s)
	}
	return "(expression)"
}

// referenceErrorTable returns the codes in the first column of the tables
// of the error-code reference page.
func referenceErrorTable(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	section := string(b)
	cell := regexp.MustCompile("`([a-z0-9_]+)`")
	out := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		first := strings.SplitN(strings.TrimPrefix(line, "|"), "|", 2)[0]
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			out[m[1]] = true
		}
	}
	if len(out) == 0 {
		t.Fatal(path + ": the error table is empty")
	}
	return out
}

func sortedKeys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
