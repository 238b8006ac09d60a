// SPDX-License-Identifier: GPL-2.0

package cfunc

import (
	"bytes"
	"fmt"
	"strings"
)

// Mutant is one first-order change to one function. Its ID names the
// function, the line counted from the function's name (so that it survives
// changes elsewhere in the file), the operator and which of that operator's
// sites on that line it is (1-based): "netlink_bind+12:eq-ne:1".
type Mutant struct {
	ID     string
	File   string // path relative to the source tree
	Func   string
	Line   int // in the file, 1-based
	Op     string
	Off    int    // byte offset in the file
	Orig   string // the bytes replaced
	Repl   string
	Source string // the original line, trimmed: what an equivalence argument quotes
}

// Mutants returns every mutant of the named functions of one file, in the
// functions' order, each function's by offset.
func Mutants(file string, src []byte, funcs []string) ([]Mutant, error) {
	masked := Mask(src)
	var out []Mutant
	for _, entry := range funcs {
		name, isMacro := strings.CutPrefix(entry, MacroPrefix)
		var f Func
		var err error
		fmasked := masked
		if isMacro {
			if f, err = FindMacro(src, name); err == nil {
				fmasked = macroMasked(src, masked, f)
			}
		} else {
			f, err = FindFunc(masked, name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		occ := map[string]int{}
		for _, s := range Sites(src, fmasked, f) {
			if isMacro {
				s.Repl = keepContinuations(s.Orig, s.Repl)
			}
			rel := s.Line - f.NameLine
			key := fmt.Sprintf("%d:%s", rel, s.Op)
			occ[key]++
			out = append(out, Mutant{
				ID:     fmt.Sprintf("%s+%d:%s:%d", name, rel, s.Op, occ[key]),
				File:   file,
				Func:   name,
				Line:   s.Line,
				Op:     s.Op,
				Off:    s.Off,
				Orig:   s.Orig,
				Repl:   s.Repl,
				Source: lineText(src, s.Off),
			})
		}
	}
	return out, nil
}

// Apply returns src with m applied. It refuses a source whose bytes at the
// site are not the mutant's: the tree is not the one the mutant was made on.
func (m Mutant) Apply(src []byte) ([]byte, error) {
	if m.Off+len(m.Orig) > len(src) || string(src[m.Off:m.Off+len(m.Orig)]) != m.Orig {
		return nil, fmt.Errorf("mutant %s: %s does not have %q at offset %d", m.ID, m.File, m.Orig, m.Off)
	}
	out := make([]byte, 0, len(src)-len(m.Orig)+len(m.Repl))
	out = append(out, src[:m.Off]...)
	out = append(out, m.Repl...)
	return append(out, src[m.Off+len(m.Orig):]...), nil
}

// keepContinuations gives a replacement in a macro's body the line
// continuations of the text it replaces, so that the macro stays one
// directive: a deleted statement over two lines becomes ";" + " \\\n".
func keepContinuations(orig, repl string) string {
	n := strings.Count(orig, "\\\n")
	if n == 0 || strings.Count(repl, "\\\n") == n {
		return repl
	}
	repl = strings.ReplaceAll(repl, "\n", "")
	return repl + strings.Repeat(" \\\n", n)
}

func lineText(src []byte, off int) string {
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	end := bytes.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src) - off
	}
	return string(bytes.TrimSpace(src[start : off+end]))
}
