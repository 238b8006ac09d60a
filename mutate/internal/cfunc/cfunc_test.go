// SPDX-License-Identifier: GPL-2.0

package cfunc

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

const snippet = `/* a comment with if (a == b) && c < d; foo(); */
#define CHECK(x) ((x) == 0 && (x) < 1)
static int helper(int a);

static int target(struct sock *sk, int a,
		  int b)
{
	int err = 0;
	const char *s = "x == y && if (z) foo();";
	char c = '<';

	if (a == b && sk->flags != 0) // trailing: a < b
		err = -1;
	else if (a < b || a >= 1)
		sk->x |= 1;
	helper(a);
	foo(a,
	    b);
	*p = true;
	x = a >> 1;
	y <<= 2;
	return err <= 0 ? helper(a) : 0;
}

static int other(void) { return 1; }
`

func mutantsOf(t *testing.T, src string, funcs ...string) []Mutant {
	t.Helper()
	ms, err := Mutants("x.c", []byte(src), funcs)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestMaskKeepsOffsetsAndBlanksLiterals(t *testing.T) {
	m := Mask([]byte(snippet))
	if len(m) != len(snippet) || strings.Count(string(m), "\n") != strings.Count(snippet, "\n") {
		t.Fatal("Mask changed the length or the lines")
	}
	for _, gone := range []string{"comment", "CHECK", "x == y", "'<'", "trailing"} {
		if strings.Contains(string(m), gone) {
			t.Errorf("masked source still has %q", gone)
		}
	}
}

func TestFindFuncSkipsDeclarations(t *testing.T) {
	m := Mask([]byte(snippet))
	f, err := FindFunc(m, "target")
	if err != nil {
		t.Fatal(err)
	}
	if f.NameLine != 5 || snippet[f.BodyStart] != '{' || snippet[f.BodyEnd-1] != '}' {
		t.Errorf("target: %+v", f)
	}
	if _, err := FindFunc(m, "helper"); err == nil {
		t.Error("helper has only a declaration, but FindFunc found a definition")
	}
	if _, err := FindFunc(m, "CHECK"); err == nil {
		t.Error("found a macro")
	}
}

// Every site of the original seven operators in the snippet, by ID, and
// nothing in the comment, the strings, the char literal or the macro: the
// later operators changed none of these IDs.
func TestOperatorSites(t *testing.T) {
	var got []string
	for _, m := range mutantsOf(t, snippet, "target") {
		if !slices.Contains(Operators[:7], m.Op) {
			continue
		}
		got = append(got, fmt.Sprintf("%s %q->%q", m.ID, m.Orig, m.Repl))
	}
	want := []string{
		`target+3:flip-const:1 "0"->"1"`,
		`target+7:negate-cond:1 "(a == b && sk->flags != 0)"->"(!(a == b && sk->flags != 0))"`,
		`target+7:eq-ne:1 "=="->"!="`,
		`target+7:and-or:1 "&&"->"||"`,
		`target+7:eq-ne:2 "!="->"=="`,
		`target+7:flip-const:1 "0"->"1"`,
		`target+8:del-assign:1 "err = -1;"->";"`,
		`target+8:flip-const:1 "1"->"0"`,
		`target+9:negate-cond:1 "(a < b || a >= 1)"->"(!(a < b || a >= 1))"`,
		`target+9:lt-le:1 "<"->"<="`,
		`target+9:and-or:1 "||"->"&&"`,
		`target+9:lt-le:2 ">="->">"`,
		`target+9:flip-const:1 "1"->"0"`,
		`target+10:del-assign:1 "sk->x |= 1;"->";"`,
		`target+10:flip-const:1 "1"->"0"`,
		`target+11:del-call:1 "helper(a);"->";"`,
		"target+12:del-call:1 \"foo(a,\\n\\t    b);\"->\";\\n\"",
		`target+14:del-assign:1 "*p = true;"->";"`,
		`target+14:flip-const:1 "true"->"false"`,
		`target+15:del-assign:1 "x = a >> 1;"->";"`,
		`target+15:flip-const:1 "1"->"0"`,
		`target+16:del-assign:1 "y <<= 2;"->";"`,
		`target+17:lt-le:1 "<="->"<"`,
		`target+17:flip-const:1 "0"->"1"`,
		`target+17:flip-const:2 "0"->"1"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sites:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// IDs count lines from the function's name: code added above the function
// does not change them.
func TestIDsStableWhenCodeMovesAbove(t *testing.T) {
	a := mutantsOf(t, snippet, "target")
	b := mutantsOf(t, "static int added(void)\n{\n\treturn 0;\n}\n\n"+snippet, "target")
	if len(a) != len(b) {
		t.Fatalf("%d mutants, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Line+5 != b[i].Line {
			t.Errorf("mutant %d: %s line %d, then %s line %d", i, a[i].ID, a[i].Line, b[i].ID, b[i].Line)
		}
	}
}

func TestApplyKeepsLinesAndRefusesAnotherTree(t *testing.T) {
	for _, m := range mutantsOf(t, snippet, "target") {
		out, err := m.Apply([]byte(snippet))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(out), "\n") != strings.Count(snippet, "\n") {
			t.Errorf("%s changes the line count", m.ID)
		}
		if string(out) == snippet {
			t.Errorf("%s changes nothing", m.ID)
		}
	}
	m := mutantsOf(t, snippet, "target")[0]
	if _, err := m.Apply([]byte(strings.Replace(snippet, "err = 0", "err = 7", 1))); err == nil {
		t.Error("Apply on a different source succeeded")
	}
}

// The statement under a loop macro is a statement too.
func TestMacroLoopBody(t *testing.T) {
	src := "void f(void)\n{\n\tsk_for_each_bound(sk, head)\n\t\tdeliver(sk, &info);\n\tdone = 1;\n}\n"
	var got []string
	for _, m := range mutantsOf(t, src, "f") {
		got = append(got, m.ID+" "+m.Orig)
	}
	want := "f+3:del-call:1 deliver(sk, &info);\nf+4:del-assign:1 done = 1;\nf+4:flip-const:1 1"
	if strings.Join(got, "\n") != want {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// A function-like macro's replacement text is mutated at its definition,
// its IDs counted from the #define, and a replacement keeps the line
// continuations, so that the macro stays one directive.
func TestMacroBody(t *testing.T) {
	src := "#define walk(sk, head, off)\t\\\n\tfor (sk = first((head), off); sk != NULL;\t\\\n\t     sk = next(sk, off))\n\nvoid f(void)\n{\n\twalk(sk, h, 0)\n\t\tuse(sk);\n}\n"
	var got []string
	for _, m := range mutantsOf(t, src, "f", MacroPrefix+"walk") {
		if m.Func != "walk" {
			continue
		}
		got = append(got, fmt.Sprintf("%s %q->%q", m.ID, m.Orig, m.Repl))
		out, err := m.Apply([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(out), "\\\n") != 2 {
			t.Errorf("%s: the macro lost a line continuation:\n%s", m.ID, out)
		}
	}
	want := `walk+1:eq-ne:1 "!="->"=="`
	if !slices.Contains(got, want) || !slices.Contains(got, `walk+1:negate-loop:1 "sk != NULL"->"!(sk != NULL)"`) {
		t.Errorf("macro sites:\n%s\nwant first %s", strings.Join(got, "\n"), want)
	}
	if _, err := Mutants("x.c", []byte(src), []string{MacroPrefix + "nosuch"}); err == nil {
		t.Error("a missing macro gave no error")
	}
}

// A sparse annotation between the parameters and the body is skipped.
func TestFindFuncAfterAnnotation(t *testing.T) {
	src := "void grab(void)\n\t__acquires(nl_table_lock)\n{\n\tlock(1);\n}\n"
	f, err := FindFunc(Mask([]byte(src)), "grab")
	if err != nil || src[f.BodyStart] != '{' {
		t.Errorf("grab: %+v, %v", f, err)
	}
}

const newOps = `static int ops(struct sock *sk, int a, int b)
{
	struct sock *p = (struct sock *) sk;
	int n = a + b * 2 - (a / b) % 4;

	n |= a & b | (a ^ b);
	n <<= 1;
	n = a << 2 | b >> 3;
	n += -1;
	n++;
	--n;
	if (!sk || ~a)
		return -ENOBUFS;
	while (n > 0x10UL)
		n--;
	for (a = 0; a < 32; a++) {
		if (a == b)
			break;
		if (a)
			continue;
		goto out;
	}
	n = a ? b : 0;
	return a == 1;
out:
	return n >= b ? n : b;
}
`

// The later operators' sites, by operator: unary, pointer and declaration
// stars, ampersands and minus signs are no arithmetic.
func TestNewOperatorSites(t *testing.T) {
	got := map[string][]string{}
	for _, m := range mutantsOf(t, newOps, "ops") {
		if slices.Contains(Operators[:7], m.Op) {
			continue
		}
		got[m.Op] = append(got[m.Op], fmt.Sprintf("%d:%s>%s", m.Line-1, strings.ReplaceAll(m.Orig, "\n", " "), m.Repl))
		out, err := m.Apply([]byte(newOps))
		if err != nil || string(out) == newOps {
			t.Errorf("%s: %v, or no change", m.ID, err)
		}
	}
	want := map[string]string{
		"arith":          "3:+>- 3:*>/ 3:->+ 3:/>* 3:%>/",
		"bitwise":        "5:&>| 5:|>& 5:^>| 7:|>&",
		"shift":          "7:<<>>> 7:>>><<",
		"assign-op":      "5:|=>&= 6:<<=>>>= 8:+=>-=",
		"inc-dec":        "9:++>-- 10:-->++ 14:-->++ 15:++>--",
		"del-not":        "11:!>",
		"del-bitnot":     "11:~>",
		"lt-ge":          "13:>><= 15:<>>= 25:>=><",
		"negate-loop":    "13:(n > 0x10UL)>(!(n > 0x10UL)) 15:a < 32>!(a < 32)",
		"negate-ternary": "22:a>!(a) 25:n >= b>!(n >= b)",
		"negate-return":  "23:a == 1>!(a == 1)",
		"const-inc":      "3:2>3 3:4>5 7:2>3 7:3>4 13:0x10UL>0x11UL 15:32>33",
		"const-dec":      "3:2>1 3:4>3 7:2>1 7:3>2 13:0x10UL>0xfUL 15:32>31",
		"errno":          "12:ENOBUFS>EINVAL",
		"ret-val":        "12:-ENOBUFS>0 23:a == 1>0 25:n >= b ? n : b>0",
		"del-jump":       "12:return -ENOBUFS;>; 17:break;>; 19:continue;>; 20:goto out;>; 23:return a == 1;>; 25:return n >= b ? n : b;>;",
	}
	for op, w := range want {
		if g := strings.Join(got[op], " "); g != w {
			t.Errorf("%s:\n got %s\nwant %s", op, g, w)
		}
	}
	for op := range got {
		if _, ok := want[op]; !ok {
			t.Errorf("unexpected operator %s: %q", op, got[op])
		}
	}
}
