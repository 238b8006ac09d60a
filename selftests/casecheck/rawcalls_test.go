// SPDX-License-Identifier: GPL-2.0

package casecheck

import (
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

func TestRawSocketCalls(t *testing.T) {
	const src = `package cases

import (
	"syscall"

	sys "golang.org/x/sys/unix"
)

func f(fd int) {
	sys.Sendto(fd, nil, 0, nil)
	// raw syscall: a 2-byte option value is the edge under test.
	sys.SetsockoptString(fd, 270, 1, "\x05\x00")
	sys.SetsockoptInt(fd, 1, 2, 3) // raw syscall: the same line counts
	syscall.Recvfrom(fd, nil, 0)
	sys.Close(fd)
	unix.Bind(fd, nil) // not the x/sys/unix import here
	// raw syscall: covers the next line only

	sys.Bind(fd, nil)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "case.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := rawSocketCalls(fset, f, []byte(src))
	want := []string{"case.go:10: sys.Sendto", "case.go:14: syscall.Recvfrom", "case.go:19: sys.Bind"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
