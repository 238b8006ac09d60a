// SPDX-License-Identifier: GPL-2.0

// Package casecheck finds the mistakes a case table can hide from the
// compiler, for the tests of the programs: a case function that no case
// runs (written, compiled, never run), a case without an About (what
// `-l -v` prints), and the table's own mistakes (selftests.CheckCases: two
// cases of one name, a case without a name or a Run).
package casecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"

	"nlmcast/selftests"
)

// Unregistered returns the case functions of the Go package in dir that
// no case of table runs: every top-level function of the form
// `func name(t selftests.T)` (a case's shape; helpers take more, or mark
// themselves with t.Helper() first) whose name is not the Run of a case. A case may also run a function through
// a wrapper (a closure), which the table's Run then names instead: list
// such functions in wrapped.
func Unregistered(dir string, table []selftests.Case, wrapped ...string) ([]string, error) {
	run := map[string]bool{}
	for _, c := range table {
		if c.Run == nil {
			continue
		}
		name := runtime.FuncForPC(reflect.ValueOf(c.Run).Pointer()).Name()
		run[name[strings.LastIndexByte(name, '.')+1:]] = true
	}
	for _, w := range wrapped {
		run[w] = true
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !isCaseShape(fn.Type) || marksHelper(fn) || run[fn.Name.Name] {
				continue
			}
			missing = append(missing, fmt.Sprintf("%s (%s)", fn.Name.Name, filepath.Base(path)))
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// isCaseShape reports whether a function type is func(selftests.T), with
// no results.
func isCaseShape(ft *ast.FuncType) bool {
	if ft.Results != nil && len(ft.Results.List) > 0 || ft.Params == nil || len(ft.Params.List) != 1 {
		return false
	}
	p := ft.Params.List[0]
	if len(p.Names) > 1 {
		return false
	}
	sel, ok := p.Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "selftests" && sel.Sel.Name == "T"
}

// marksHelper reports whether fn's first statement is a call of
// Helper() on its parameter: a helper of the case's shape (one that only
// prepares what the case needs), which no case table lists.
func marksHelper(fn *ast.FuncDecl) bool {
	if fn.Body == nil || len(fn.Body.List) == 0 || len(fn.Type.Params.List[0].Names) != 1 {
		return false
	}
	es, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Helper" {
		return false
	}
	recv, ok := sel.X.(*ast.Ident)
	return ok && recv.Name == fn.Type.Params.List[0].Names[0].Name
}

// TB is the part of testing.TB Check uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Undescribed returns the names of the cases of table that have no About:
// `-l -v` would list them without saying what they check.
func Undescribed(table []selftests.Case) []string {
	var names []string
	for _, c := range table {
		if strings.TrimSpace(c.About) == "" {
			names = append(names, c.Name)
		}
	}
	return names
}

// Check fails t for each mistake of table, a program's case table whose
// functions are in the package in dir: a duplicate name, a case function
// no case runs, a case without an About. The programs' tests call it.
func Check(t TB, dir string, table []selftests.Case) {
	t.Helper()
	if err := selftests.CheckCases(table); err != nil {
		t.Errorf("%v", err)
	}
	missing, err := Unregistered(dir, table)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, m := range missing {
		t.Errorf("case function %s is in no case of the table", m)
	}
	for _, n := range Undescribed(table) {
		t.Errorf("case %s has no About: -l -v cannot say what it checks", n)
	}
}
