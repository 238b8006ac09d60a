// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// equivalence is the argument that a mutant cannot change what the kernel
// does: the line it changes, as the tree has it, and why.
type equivalence struct {
	id     string
	code   string // the original line, trimmed
	reason string
}

// readEquivalences reads the arguments file: blocks of
//
//	id: FUNC+LINE:OP:N
//	code: the original line, as in the tree
//	reason: why the change cannot be seen (more lines indented)
//
// separated by blank lines; '#' lines are comments. An argument counts
// only for a mutant whose line is still the quoted one.
func readEquivalences(path string) (map[string]equivalence, error) {
	out := map[string]equivalence{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cur equivalence
	lineNo := 0
	flush := func() error {
		if cur == (equivalence{}) {
			return nil
		}
		if cur.id == "" || cur.code == "" || cur.reason == "" {
			return fmt.Errorf("%s:%d: an entry needs id, code and reason", path, lineNo)
		}
		out[cur.id] = cur
		cur = equivalence{}
		return nil
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lineNo++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.TrimSpace(l) == "":
			if err := flush(); err != nil {
				return nil, err
			}
		case strings.HasPrefix(l, "id:"):
			cur.id = strings.TrimSpace(strings.TrimPrefix(l, "id:"))
		case strings.HasPrefix(l, "code:"):
			cur.code = strings.TrimSpace(strings.TrimPrefix(l, "code:"))
		case strings.HasPrefix(l, "reason:"):
			cur.reason = strings.TrimSpace(strings.TrimPrefix(l, "reason:"))
		case (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) && cur.reason != "":
			cur.reason += " " + strings.TrimSpace(l)
		default:
			return nil, fmt.Errorf("%s:%d: unexpected line %q", path, lineNo, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, flush()
}
