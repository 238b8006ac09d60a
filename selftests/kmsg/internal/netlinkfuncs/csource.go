// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"regexp"
	"strings"

	"nlmcast/internal/cmask"
)

// blankNonCode returns src with comments, string and character literals
// and preprocessor lines (with their continuations) turned into spaces,
// newlines kept: what is left is the code the compiler sees of every
// #if branch at once, so a function defined only under some config is
// found as well.
func blankNonCode(src string) string { return string(cmask.Blank([]byte(src), true)) }

// trailingIdent is the identifier that ends a string, after spaces.
var trailingIdent = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*$`)

// functionDefinitions returns the names of the functions src defines, in
// the order of their bodies: every '{' at file scope whose head (the code
// since the previous file-scope ';' or '}') ends in "name(parameters)",
// after any attribute groups that follow the parameters, such as
// "__acquires(RCU)" or "__attribute__((...))". A head that ends otherwise
// opens a struct, union or enum, or an initializer ("= {"). A name in
// capitals is a macro that defines something (DEFINE_BPF_ITER_FUNC(...)
// {), not a function, and is left out. Braces that do not balance, which
// #if branches that each open a block would give, are an error.
func functionDefinitions(src string) ([]string, error) {
	code := blankNonCode(src)
	var names []string
	depth, headStart := 0, 0
	for i := 0; i < len(code); i++ {
		switch code[i] {
		case '{':
			if depth == 0 {
				if name := definedName(code[headStart:i]); name != "" {
					names = append(names, name)
				}
			}
			depth++
		case '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("line %d: '}' closes nothing", lineOf(code, i))
			}
			if depth == 0 {
				headStart = i + 1
			}
		case ';':
			if depth == 0 {
				headStart = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("%d '{' never closed at the end of the file", depth)
	}
	return names, nil
}

func lineOf(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }

// definedName is the function a file-scope head defines, or "".
func definedName(head string) string {
	head = strings.TrimSpace(head)
	for strings.HasSuffix(head, ")") {
		open := matchingOpen(head, len(head)-1)
		if open < 0 {
			return ""
		}
		before := strings.TrimSpace(head[:open])
		m := trailingIdent.FindStringSubmatch(before)
		if m == nil {
			// "(*name(params))(params)", a function returning a
			// function pointer, or a cast: none in these files.
			return ""
		}
		rest := strings.TrimSpace(strings.TrimSuffix(before, m[1]))
		if strings.HasSuffix(rest, ")") {
			// An attribute group after the parameters: drop it.
			head = rest
			continue
		}
		if strings.HasSuffix(rest, "=") || m[1] == strings.ToUpper(m[1]) {
			return ""
		}
		return m[1]
	}
	return ""
}

// matchingOpen is the index of the '(' that the ')' at close closes.
func matchingOpen(s string, close int) int {
	depth := 0
	for i := close; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
