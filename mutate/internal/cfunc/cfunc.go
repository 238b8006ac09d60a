// SPDX-License-Identifier: GPL-2.0

// Package cfunc finds the bodies of C function definitions in a source file
// and the sites in them where a first-order mutation operator applies. It
// works on a masked copy of the source, in which comments, string and
// character literals and preprocessor lines are blanked (newlines kept), so
// that no site is ever found inside them and offsets stay the source's.
package cfunc

import (
	"fmt"
	"sort"
	"strings"

	"nlmcast/internal/cmask"
)

// Mask returns src with every comment, string literal, character literal
// and preprocessor line (with its continuations) replaced by spaces. Newlines
// are kept, so byte offsets and line numbers are src's.
func Mask(src []byte) []byte { return cmask.Blank(src, true) }

// Func is one function definition.
type Func struct {
	Name      string
	NameLine  int // line of the name (1-based): mutant IDs count from it
	BodyStart int // offset of the body's '{'
	BodyEnd   int // offset just after its '}'
}

// FindFunc returns the definition of the function name in src (masked by
// Mask): the name at brace depth 0, its parameter list, and a body.
func FindFunc(masked []byte, name string) (Func, error) {
	depth := 0
	s := string(masked)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
			continue
		case '}':
			depth--
			continue
		}
		if depth != 0 || !strings.HasPrefix(s[i:], name) || (i > 0 && isIdent(s[i-1])) {
			continue
		}
		j := i + len(name)
		if j < len(s) && isIdent(s[j]) {
			continue
		}
		j = skipSpace(s, j)
		if j >= len(s) || s[j] != '(' {
			continue
		}
		close := matchParen(s, j)
		if close < 0 {
			continue
		}
		k := skipSpace(s, close+1)
		// Sparse's annotations between the parameters and the body:
		// "__acquires(nl_table_lock)".
		for id := identPrefix(s[k:]); strings.HasPrefix(id, "__"); id = identPrefix(s[k:]) {
			p := skipSpace(s, k+len(id))
			if p >= len(s) || s[p] != '(' || matchParen(s, p) < 0 {
				break
			}
			k = skipSpace(s, matchParen(s, p)+1)
		}
		if k >= len(s) || s[k] != '{' {
			continue // a declaration or a call at file scope
		}
		end := matchBrace(s, k)
		if end < 0 {
			return Func{}, fmt.Errorf("function %s: body not closed", name)
		}
		return Func{Name: name, NameLine: lineOf(s, i), BodyStart: k, BodyEnd: end + 1}, nil
	}
	return Func{}, fmt.Errorf("function %s: no definition found", name)
}

// MacroPrefix marks a name in Mutants' list as a function-like macro of
// the file, mutated at its definition: "#netlink_for_each_mc".
const MacroPrefix = "#"

// FindMacro returns the definition of the macro name in src (not masked):
// NameLine is the #define's line, BodyStart the offset just before the
// replacement text (the parameter list's ')', or the name's last byte),
// BodyEnd one past the directive's last byte.
func FindMacro(src []byte, name string) (Func, error) {
	s := string(src)
	for off := 0; off < len(s); {
		end := strings.IndexByte(s[off:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += off
		}
		line := strings.TrimLeft(s[off:end], " \t")
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			rest = strings.TrimLeft(rest, " \t")
			if after, ok := strings.CutPrefix(rest, "define"); ok {
				after = strings.TrimLeft(after, " \t")
				if strings.HasPrefix(after, name) && (len(after) == len(name) || !isIdent(after[len(name)])) {
					nameOff := off + strings.Index(s[off:end], name)
					bodyStart := nameOff + len(name) - 1
					if nameOff+len(name) < len(s) && s[nameOff+len(name)] == '(' {
						bodyStart = matchParen(s, nameOff+len(name))
					}
					// The directive runs to the first newline not escaped.
					stop := nameOff
					for stop < len(s) && !(s[stop] == '\n' && s[stop-1] != '\\') {
						stop++
					}
					return Func{Name: name, NameLine: lineOf(s, off), BodyStart: bodyStart, BodyEnd: stop + 1}, nil
				}
			}
		}
		off = end + 1
	}
	return Func{}, fmt.Errorf("macro %s: no #define found", name)
}

// macroMasked returns masked with f's replacement text unblanked
// (comments and literals in it stay blank, and so do the line
// continuations' backslashes), so that Sites finds the sites in it.
func macroMasked(src, masked []byte, f Func) []byte {
	code := cmask.Blank(src, false)
	out := append([]byte(nil), masked...)
	for i := f.BodyStart + 1; i < f.BodyEnd && i < len(out); i++ {
		out[i] = code[i]
		if code[i] == '\\' && i+1 < len(code) && code[i+1] == '\n' {
			out[i] = ' '
		}
	}
	return out
}

// Site is one place where an operator applies: the bytes [Off, Off+len(Orig))
// are replaced by Repl.
type Site struct {
	Op   string
	Off  int
	Line int // 1-based, in the file
	Orig string
	Repl string
}

// Operators, by name. Each finds its sites in a masked body. The first
// seven are the original set; the others were added later under names of
// their own, so that no earlier mutant's ID changed.
var Operators = []string{"negate-cond", "eq-ne", "lt-le", "and-or", "del-call", "del-assign", "flip-const",
	// relational in the other direction: < to >=, <= to >, > to <=, >= to <
	"lt-ge",
	// binary + - * / % swapped (+ and -, * and /, % to /)
	"arith",
	// binary & | ^ swapped (& and |, ^ to |), << and >> swapped
	"bitwise", "shift",
	// compound assignment: += -=, |= &=, ^= to |=, <<= >>=, *= /=
	"assign-op",
	// ++ and -- swapped
	"inc-dec",
	// ! and ~ removed
	"del-not", "del-bitnot",
	// the condition of while, for, ?: and a boolean return negated
	"negate-loop", "negate-ternary", "negate-return",
	// a literal other than a bare 0 or 1 plus or minus one; an errno for another
	"const-inc", "const-dec", "errno",
	// a returned value replaced by 0
	"ret-val",
	// return, goto, break and continue deleted
	"del-jump",
}

// errnoAlt is the errno each errno is replaced with: EINVAL for any
// other, EPERM for EINVAL.
func errnoAlt(e string) string {
	if e == "EINVAL" {
		return "EPERM"
	}
	return "EINVAL"
}

var errnos = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`EPERM ENOENT ESRCH EINTR EIO ENXIO E2BIG ENOEXEC EBADF ECHILD EAGAIN ENOMEM
		EACCES EFAULT EBUSY EEXIST ENODEV EINVAL ENFILE EMFILE ENOSPC EPIPE ERANGE EOVERFLOW ENOTCONN EISCONN
		EOPNOTSUPP ENOBUFS EMSGSIZE ENOPROTOOPT EPROTONOSUPPORT ESOCKTNOSUPPORT EAFNOSUPPORT EADDRINUSE
		EADDRNOTAVAIL ECONNREFUSED ECONNRESET EALREADY EDESTADDRREQ ERESTARTSYS ENOTSUPP ETIMEDOUT EWOULDBLOCK ENOLINK`) {
		errnos[e] = true
	}
}

// binaryAt says whether the one-character operator at i in body is a
// binary operator written in the kernel's style, with a space on each
// side after an operand: "a - b", not "-1", "*p", "&x", "struct sock *sk"
// or "(struct hlist_node *)".
func binaryAt(body string, i int) bool {
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }
	if i < 2 || i+2 >= len(body) || !space(body[i-1]) || !space(body[i+1]) {
		return false
	}
	p := i - 1
	for p > 0 && space(body[p]) {
		p--
	}
	c := body[p]
	switch {
	case c == ')' || c == ']':
	case isIdent(c):
		q := p
		for q > 0 && isIdent(body[q-1]) {
			q--
		}
		if keywords[body[q:p+1]] {
			return false // "return -1", "sizeof *p", "struct x *"
		}
	default:
		return false
	}
	n := skipSpace(body, i+1)
	return n < len(body) && body[n] != ')' && body[n] != ',' && body[n] != ';'
}

// numberSites are the const-inc and const-dec changes of a numeric
// literal (decimal or hex, with its U/L suffix kept); a bare 0 or 1 is
// flip-const's.
func numberSites(word string) (inc, dec string, ok bool) {
	digits := strings.TrimRight(word, "uUlL")
	suffix := word[len(digits):]
	if word == "0" || word == "1" || digits == "" {
		return "", "", false
	}
	var n uint64
	hex := strings.HasPrefix(digits, "0x") || strings.HasPrefix(digits, "0X")
	if hex {
		if _, err := fmt.Sscanf(digits[2:], "%x", &n); err != nil || strings.Trim(digits[2:], "0123456789abcdefABCDEF") != "" {
			return "", "", false
		}
	} else if _, err := fmt.Sscanf(digits, "%d", &n); err != nil || strings.Trim(digits, "0123456789") != "" {
		return "", "", false
	}
	format := func(v uint64) string {
		if hex {
			return fmt.Sprintf("0x%x", v) + suffix
		}
		return fmt.Sprint(v) + suffix
	}
	if n == 0 {
		return format(1), "", true
	}
	return format(n + 1), format(n - 1), true
}

// condStart returns where the condition of the ?: whose '?' is at q
// starts: after the nearest '(' left open, or the ',', ';', '{', '}', '?',
// ':', assignment '=' or "return" before it at the same depth.
func condStart(body string, q int, from int) int {
	depth := 0
	for i := q - 1; i > from; i-- {
		c := body[i]
		switch {
		case c == ')' || c == ']':
			depth++
		case c == '(' || c == '[':
			if depth == 0 {
				return i + 1
			}
			depth--
		case depth > 0:
		case c == ',' || c == ';' || c == '{' || c == '}' || c == '?' || c == ':':
			return i + 1
		case c == '=' && !strings.ContainsRune("=!<>", rune(body[i-1])) && body[i+1] != '=':
			return i + 1
		case isIdent(c) && !isIdent(body[i+1]):
			j := i
			for j > 0 && isIdent(body[j-1]) {
				j--
			}
			if body[j:i+1] == "return" {
				return i + 1
			}
			i = j
		}
	}
	return from + 1
}

// topLevelLogic says whether expr (masked) has a comparison or a logical
// operator outside parentheses, or starts with '!': a condition.
func topLevelLogic(expr string) bool {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "!") && !strings.HasPrefix(e, "!=") {
		return true
	}
	depth, logic := 0, false
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '?':
			if depth == 0 {
				return false // a ?: picks a value: negate-ternary's
			}
		case '=', '!', '<', '>', '&', '|':
			if depth != 0 || i+1 >= len(e) {
				continue
			}
			two := e[i : i+2]
			if two == "==" || two == "!=" || two == "<=" || two == ">=" || two == "&&" || two == "||" {
				logic = true
			}
			if (e[i] == '<' || e[i] == '>') && two != "<<" && two != ">>" && two != "->" && (i == 0 || (e[i-1] != '<' && e[i-1] != '>' && e[i-1] != '-')) {
				logic = true
			}
		}
	}
	return logic
}

// Sites returns every site of every operator in f's body, ordered by offset
// then operator.
func Sites(src, masked []byte, f Func) []Site {
	s := string(masked)
	body := s[:f.BodyEnd]
	var out []Site
	add := func(op string, off int, orig, repl string) {
		out = append(out, Site{Op: op, Off: off, Line: lineOf(s, off), Orig: orig, Repl: repl})
	}
	for i := f.BodyStart + 1; i < f.BodyEnd-1; i++ {
		c := body[i]
		two := ""
		if i+1 < len(body) {
			two = body[i : i+2]
		}
		switch {
		case two == "==":
			add("eq-ne", i, "==", "!=")
			i++
		case two == "!=":
			add("eq-ne", i, "!=", "==")
			i++
		case two == "&&":
			add("and-or", i, "&&", "||")
			i++
		case two == "||":
			add("and-or", i, "||", "&&")
			i++
		case two == "->":
			i++
		case two == "<<" || two == ">>":
			other := map[string]string{"<<": ">>", ">>": "<<"}[two]
			if i+2 < len(body) && body[i+2] == '=' {
				add("assign-op", i, two+"=", other+"=")
				i += 2
			} else {
				add("shift", i, two, other)
				i++
			}
		case two == "<=" || two == ">=":
			add("lt-le", i, two, two[:1])
			add("lt-ge", i, two, map[string]string{"<=": ">", ">=": "<"}[two])
			i++
		case c == '<' || c == '>':
			add("lt-le", i, string(c), string(c)+"=")
			add("lt-ge", i, string(c), map[byte]string{'<': ">=", '>': "<="}[c])
		case two == "++" || two == "--":
			add("inc-dec", i, two, map[string]string{"++": "--", "--": "++"}[two])
			i++
		case len(two) == 2 && two[1] == '=' && strings.ContainsRune("+-*/%&|^", rune(c)):
			add("assign-op", i, two, map[string]string{"+=": "-=", "-=": "+=", "*=": "/=", "/=": "*=", "%=": "/=", "&=": "|=", "|=": "&=", "^=": "|="}[two])
			i++
		case c == '!':
			add("del-not", i, "!", "")
		case c == '~':
			add("del-bitnot", i, "~", "")
		case strings.ContainsRune("+-*/%", rune(c)) && binaryAt(body, i):
			add("arith", i, string(c), map[byte]string{'+': "-", '-': "+", '*': "/", '/': "*", '%': "/"}[c])
		case strings.ContainsRune("&|^", rune(c)) && binaryAt(body, i):
			add("bitwise", i, string(c), map[byte]string{'&': "|", '|': "&", '^': "|"}[c])
		case c == '?':
			if k := condStart(body, i, f.BodyStart); k < i {
				start := skipSpace(body, k)
				end := i
				for end > start && (body[end-1] == ' ' || body[end-1] == '\t' || body[end-1] == '\n') {
					end--
				}
				if end > start {
					add("negate-ternary", start, string(src[start:end]), "!("+string(src[start:end])+")")
				}
			}
		case isIdent(c) && (i == 0 || !isIdent(body[i-1])):
			j := i
			for j < len(body) && isIdent(body[j]) {
				j++
			}
			word := body[i:j]
			if inc, dec, ok := numberSites(word); ok && isDigit(word[0]) {
				add("const-inc", i, word, inc)
				if dec != "" {
					add("const-dec", i, word, dec)
				}
			}
			if errnos[word] {
				add("errno", i, word, errnoAlt(word))
			}
			switch word {
			case "while":
				k := skipSpace(body, j)
				if k < len(body) && body[k] == '(' {
					if close := matchParen(body, k); close > 0 {
						cond := string(src[k+1 : close])
						add("negate-loop", k, string(src[k:close+1]), "(!("+cond+"))")
					}
				}
			case "for":
				k := skipSpace(body, j)
				if k < len(body) && body[k] == '(' {
					if close := matchParen(body, k); close > 0 {
						if a := strings.IndexByte(body[k:close], ';'); a > 0 {
							if b := strings.IndexByte(body[k+a+1:close], ';'); b >= 0 {
								start, end := skipSpace(body, k+a+1), k+a+1+b
								for end > start && (body[end-1] == ' ' || body[end-1] == '\t' || body[end-1] == '\n') {
									end--
								}
								if end > start {
									add("negate-loop", start, string(src[start:end]), "!("+string(src[start:end])+")")
								}
							}
						}
					}
				}
			case "return":
				start := skipSpace(body, j)
				if semi := strings.IndexByte(body[start:], ';'); start < len(body) && body[start] != ';' && semi > 0 {
					end := start + semi
					expr := string(src[start:end])
					if strings.TrimSpace(body[start:end]) != "0" {
						add("ret-val", start, expr, "0")
					}
					if topLevelLogic(body[start:end]) {
						add("negate-return", start, expr, "!("+expr+")")
					}
				}
			case "0":
				add("flip-const", i, "0", "1")
			case "1":
				add("flip-const", i, "1", "0")
			case "true":
				add("flip-const", i, "true", "false")
			case "false":
				add("flip-const", i, "false", "true")
			case "if":
				k := skipSpace(body, j)
				if k < len(body) && body[k] == '(' {
					if close := matchParen(body, k); close > 0 {
						cond := string(src[k+1 : close])
						add("negate-cond", k, string(src[k:close+1]), "(!("+cond+"))")
					}
				}
			}
			i = j - 1
		}
	}
	for _, st := range statementStarts(body, f) {
		switch identPrefix(body[st:]) {
		case "return", "goto", "break", "continue":
			if semi := strings.IndexByte(body[st:], ';'); semi > 0 {
				orig := string(src[st : st+semi+1])
				add("del-jump", st, orig, ";"+strings.Repeat("\n", strings.Count(orig, "\n")))
			}
			continue
		}
		if site, ok := deletion(src, body, st); ok {
			add(site.Op, site.Off, site.Orig, site.Repl)
		} else if k := macroLoopBody(body, st); k > 0 {
			if site, ok := deletion(src, body, k); ok {
				add(site.Op, site.Off, site.Orig, site.Repl)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Off != out[b].Off {
			return out[a].Off < out[b].Off
		}
		return out[a].Op < out[b].Op
	})
	return out
}

// statementStarts are the offsets where a statement may begin: after ';',
// '{', '}', "else", and after the condition of an if, while or for.
func statementStarts(body string, f Func) []int {
	starts := []int{skipSpace(body, f.BodyStart+1)}
	parenDepth := 0
	condClose := map[int]bool{}
	question := false // a ?: is open: its ':' starts no statement
	for i := f.BodyStart + 1; i < f.BodyEnd-1; i++ {
		c := body[i]
		switch {
		case c == '(':
			parenDepth++
		case c == ')':
			parenDepth--
			if condClose[i] {
				starts = append(starts, skipSpace(body, i+1))
			}
		case c == '?':
			question = true
		case c == ':' && parenDepth == 0 && question:
			question = false
		case (c == ';' || c == '{' || c == '}' || c == ':') && parenDepth == 0:
			question = false
			starts = append(starts, skipSpace(body, i+1))
		case isIdent(c) && (i == 0 || !isIdent(body[i-1])):
			j := i
			for j < len(body) && isIdent(body[j]) {
				j++
			}
			switch body[i:j] {
			case "else":
				starts = append(starts, skipSpace(body, j))
			case "if", "while", "for":
				k := skipSpace(body, j)
				if k < len(body) && body[k] == '(' {
					if close := matchParen(body, k); close > 0 {
						condClose[close] = true
					}
				}
			}
			i = j - 1
		}
	}
	return starts
}

// macroLoopBody returns where the body of a loop macro starts, as in
// "sk_for_each_bound(sk, head) do_one(sk);", or 0 when start is not one.
func macroLoopBody(body string, start int) int {
	name := identPrefix(body[start:])
	if name == "" || keywords[name] || isDigit(name[0]) {
		return 0
	}
	k := skipSpace(body, start+len(name))
	if k >= len(body) || body[k] != '(' {
		return 0
	}
	close := matchParen(body, k)
	if close < 0 {
		return 0
	}
	k = skipSpace(body, close+1)
	if k < len(body) && isIdent(body[k]) && !isDigit(body[k]) {
		return k
	}
	return 0
}

var keywords = map[string]bool{
	"if": true, "else": true, "while": true, "for": true, "do": true, "switch": true,
	"case": true, "default": true, "return": true, "goto": true, "break": true,
	"continue": true, "sizeof": true, "struct": true, "union": true, "enum": true,
	"const": true, "static": true, "unsigned": true, "signed": true, "int": true,
	"long": true, "char": true, "bool": true, "void": true, "u8": true, "u16": true,
	"u32": true, "u64": true, "size_t": true, "typeof": true,
}

// deletion returns the del-call or del-assign site of the statement at
// start, if it is an expression statement that calls a function or assigns.
// A declaration with an initialiser is not an assignment (its left side has
// two words), and a deleted statement keeps its newlines.
func deletion(src []byte, body string, start int) (Site, bool) {
	if start >= len(body) {
		return Site{}, false
	}
	// The statement's end: the first ';' at paren depth 0, with no brace
	// before it (a block or a compound literal is not ours).
	depth, end := 0, -1
	for i := start; i < len(body); i++ {
		switch body[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth < 0 {
				return Site{}, false
			}
		case '{', '}':
			return Site{}, false
		case ';':
			if depth == 0 {
				end = i
			}
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		return Site{}, false
	}
	stmt := body[start:end]
	orig := string(src[start : end+1])
	repl := ";" + strings.Repeat("\n", strings.Count(orig, "\n"))
	// A call: IDENT, optionally ->/. members, then (...) covering the rest.
	j := 0
	for j < len(stmt) && (isIdent(stmt[j]) || stmt[j] == '.' || (stmt[j] == '-' && j+1 < len(stmt) && stmt[j+1] == '>') || stmt[j] == '>') {
		j++
	}
	first := identPrefix(stmt)
	if j > 0 && !keywords[first] && first != "" && !isDigit(first[0]) {
		k := skipSpace(stmt, j)
		if k < len(stmt) && stmt[k] == '(' {
			if close := matchParen(stmt, k); close > 0 && strings.TrimSpace(stmt[close+1:]) == "" {
				return Site{Op: "del-call", Off: start, Orig: orig, Repl: repl}, true
			}
		}
	}
	// An assignment: an lvalue of one word (with members, indexes and
	// derefs), then =, |=, &=, +=, -=, ^=, <<= or >>= at depth 0.
	depth = 0
	for i := 0; i < len(stmt); i++ {
		switch stmt[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '=':
			if depth != 0 || (i+1 < len(stmt) && stmt[i+1] == '=') {
				if i+1 < len(stmt) && stmt[i+1] == '=' {
					i++
				}
				continue
			}
			lhs := stmt[:i]
			if p := len(lhs) - 1; p >= 0 && strings.ContainsRune("!<>", rune(lhs[p])) && !strings.HasSuffix(lhs, "<<") && !strings.HasSuffix(lhs, ">>") {
				continue // a comparison
			}
			lhs = strings.TrimRight(lhs, "|&+-^<> \t\n")
			if isLvalue(lhs) {
				return Site{Op: "del-assign", Off: start, Orig: orig, Repl: repl}, true
			}
			return Site{}, false
		}
	}
	return Site{}, false
}

// isLvalue: one name, maybe dereferenced, with members and indexes; no two
// words side by side (that is a declaration).
func isLvalue(s string) bool {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "*( \t")
	first := identPrefix(s)
	if first == "" || keywords[first] || isDigit(first[0]) {
		return false
	}
	rest := s[len(first):]
	depth := 0
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth > 0:
		case c == '-' && i+1 < len(rest) && rest[i+1] == '>':
			i++
		case c == '.' || c == ')' || c == ' ' || c == '\t' || c == '\n':
		case isIdent(c):
			// an identifier must follow -> or .
			k := i - 1
			for k >= 0 && (rest[k] == ' ' || rest[k] == '\t' || rest[k] == '\n') {
				k--
			}
			if k < 0 || (rest[k] != '>' && rest[k] != '.') {
				return false
			}
			for i+1 < len(rest) && isIdent(rest[i+1]) {
				i++
			}
		default:
			return false
		}
	}
	return true
}

func identPrefix(s string) string {
	j := 0
	for j < len(s) && isIdent(s[j]) {
		j++
	}
	return s[:j]
}

func isIdent(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// matchParen returns the offset of the ')' closing the '(' at open, or -1.
func matchParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func matchBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func lineOf(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }
