// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"strings"
)

// splitArgs splits the -args string into words the way a POSIX shell treats
// plain quoting: blanks separate words, single quotes keep everything,
// double quotes keep everything but \" and \\, and a backslash outside
// quotes keeps the next character. No expansion of any kind happens.
func splitArgs(s string) ([]string, error) {
	var (
		words   []string
		word    strings.Builder
		inWord  bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			if quote == '"' && r != '"' && r != '\\' {
				word.WriteRune('\\') // inside double quotes only \" and \\ are escapes
			}
			word.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if escaped || quote != 0 {
		return nil, fmt.Errorf("-args %q: unterminated quote or trailing backslash", s)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}
