// SPDX-License-Identifier: GPL-2.0

package ktap

import (
	"strings"
	"testing"
	"time"
)

func TestStream(t *testing.T) {
	t.Setenv("KSFT_TAP_LEVEL", "")
	var b strings.Builder
	w := New(&b)
	w.Plan(5)
	w.Diag("first\nsecond")
	w.Result("prog.a", Pass, "", 12*time.Millisecond)
	w.Result("prog.e", Pass, "kernel log not\nwatched", 1*time.Millisecond)
	w.Result("prog.b", Fail, "", -1)
	w.Result("prog.c", Skip, "no u32\nclassifier", 3*time.Millisecond)
	w.Result("prog.d#x", XFail, "known", -1)
	code := w.Finish()

	want := `TAP version 13
1..5
# first
# second
ok 1 prog.a # time=12ms
ok 2 prog.e # kernel log not watched time=1ms
not ok 3 prog.b
ok 4 prog.c # SKIP no u32 classifier time=3ms
ok 5 prog.d_x # XFAIL known
# Totals: pass:2 fail:1 xfail:1 xpass:0 skip:1 error:0
`
	if got := b.String(); got != want {
		t.Errorf("stream:\n%s\nwant:\n%s", got, want)
	}
	if code != ExitFail {
		t.Errorf("exit code %d, want %d", code, ExitFail)
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		planned int
		results []Result
		want    int
	}{
		{"all pass", 2, []Result{Pass, Pass}, ExitPass},
		{"some skip", 2, []Result{Pass, Skip}, ExitPass},
		{"xfail", 2, []Result{XFail, Skip}, ExitPass},
		{"all skip", 2, []Result{Skip, Skip}, ExitSkip},
		{"a failure", 3, []Result{Skip, Fail, Pass}, ExitFail},
		{"fewer than planned", 3, []Result{Pass}, ExitFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			w := New(&b)
			w.Plan(tc.planned)
			for _, r := range tc.results {
				w.Result("p.c", r, "why", -1)
			}
			if got := w.Finish(); got != tc.want {
				t.Errorf("exit code %d, want %d; output:\n%s", got, tc.want, b.String())
			}
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "# Totals: ") {
				t.Errorf("last line %q is not the totals", last)
			}
		})
	}
}

func TestSkipAll(t *testing.T) {
	t.Setenv("KSFT_TAP_LEVEL", "")
	var b strings.Builder
	if code := New(&b).SkipAll("must be run as root"); code != ExitSkip {
		t.Errorf("exit code %d, want %d", code, ExitSkip)
	}
	if want := "TAP version 13\n1..0 # SKIP must be run as root\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestNestedRunOmitsHeader(t *testing.T) {
	t.Setenv("KSFT_TAP_LEVEL", "1")
	var b strings.Builder
	New(&b).Plan(1)
	if b.String() != "1..1\n" {
		t.Errorf("got %q, want only the plan", b.String())
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{"a.b": "a.b", "a#b": "a_b", "a\nb": "a b", " ": "unnamed"} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}
