// SPDX-License-Identifier: GPL-2.0

package casecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RawAllow is the comment that lets a case keep a raw socket call: on
// the call's line or the line above, followed by why (the case tests that
// very call's edge, an odd option length, say).
const RawAllow = "raw syscall:"

// rawSocketCall names the socket system calls of golang.org/x/sys/unix
// and syscall that a case makes through selftests and selftests/nlsock
// instead: their errors name the socket, and their readers check what a
// raw call would not (truncation, the sender's address).
var rawSocketCall = regexp.MustCompile(`^(Socket|Socketpair|Bind|Connect|Listen|Accept4?|Sendto|Sendmsg|SendmsgN|SendmsgBuffers|Recvfrom|Recvmsg|RecvmsgBuffers|Setsockopt[A-Za-z0-9]*|Getsockopt[A-Za-z0-9]*)$`)

// RawSocketCalls returns, as "file.go:line: unix.Sendto", every call of a
// socket system call straight from golang.org/x/sys/unix or syscall in
// the non-test Go files of dir that has no RawAllow comment.
func RawSocketCalls(dir string) ([]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		out = append(out, rawSocketCalls(fset, f, src)...)
	}
	sort.Strings(out)
	return out, nil
}

// rawSocketCalls finds the unallowed raw socket calls of f, parsed from
// src.
func rawSocketCalls(fset *token.FileSet, f *ast.File, src []byte) []string {
	pkgs := map[string]bool{} // the names f imports x/sys/unix and syscall as
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if path != "golang.org/x/sys/unix" && path != "syscall" {
			continue
		}
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		pkgs[name] = true
	}
	// The lines a RawAllow comment covers: its own, and the next one
	// when nothing but blanks comes before it on its line.
	allowed := map[int]bool{}
	for _, g := range f.Comments {
		for _, c := range g.List {
			if !strings.Contains(c.Text, RawAllow) {
				continue
			}
			start, end := fset.Position(c.Pos()), fset.Position(c.End())
			allowed[end.Line] = true
			lineStart := start.Offset - (start.Column - 1)
			if strings.TrimSpace(string(src[lineStart:start.Offset])) == "" {
				allowed[end.Line+1] = true
			}
		}
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || !pkgs[pkg.Name] || !rawSocketCall.MatchString(sel.Sel.Name) {
			return true
		}
		pos := fset.Position(call.Pos())
		if !allowed[pos.Line] {
			out = append(out, fmt.Sprintf("%s:%d: %s.%s", filepath.Base(pos.Filename), pos.Line, pkg.Name, sel.Sel.Name))
		}
		return true
	})
	return out
}
