// SPDX-License-Identifier: GPL-2.0

// Package cmask blanks what is not code in a C source file, keeping its
// layout: the mutation tool finds function bodies and operator sites in
// what is left, and kmsg's table generator the functions a file defines.
package cmask

import "strings"

// Blank returns a copy of src with every comment, string literal and
// character literal, and when directives is set every preprocessor line
// (with its continuations), replaced by spaces. Newlines are kept, so
// byte offsets and line numbers are src's.
func Blank(src []byte, directives bool) []byte {
	out := make([]byte, len(src))
	copy(out, src)
	blank := func(i int) {
		if out[i] != '\n' {
			out[i] = ' '
		}
	}
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case lineStart && (c == ' ' || c == '\t'):
			i++
			continue
		case lineStart && c == '#' && directives:
			// A directive runs to an unescaped newline.
			for i < len(src) && !(src[i] == '\n' && (i == 0 || src[i-1] != '\\')) {
				blank(i)
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(string(src[i+2:]), "*/")
			stop := len(src)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				blank(i)
			}
			lineStart = false
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				blank(i)
				i++
			}
			continue
		case c == '"' || c == '\'':
			blank(i)
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) {
					blank(i)
					i++
				}
				blank(i)
				i++
			}
			if i < len(src) && src[i] == c {
				blank(i)
				i++
			}
			lineStart = false
			continue
		}
		lineStart = c == '\n'
		i++
	}
	return out
}
