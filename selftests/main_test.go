// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"regexp"
	"strings"
	"testing"
)

func fakeSuite(cleanedUp *bool) Suite {
	return Suite{
		Name: "prog",
		Cases: []Case{
			{Name: "passes", Run: func(t T) {}},
			{Name: "fails", Run: func(t T) {
				t.Cleanup(func() { t.Logf("cleanup ran") })
				t.Fatalf("socket %q: boom", "a")
				t.Logf("not reached")
			}},
			{Name: "skips", Run: func(t T) { t.Skipf("no %s classifier", "u32") }},
			{Name: "xfails", Run: func(t T) { XFail(t, "value already modified") }},
			{Name: "panics", Run: func(t T) { panic("kaboom") }},
		},
		Setup: func(log func(string, ...any)) (func(), error) {
			return func() { *cleanedUp = true }, nil
		},
	}
}

func runFake(t *testing.T, args ...string) (string, string, int, bool) {
	t.Helper()
	preflight = func() string { return "" }
	t.Cleanup(func() { preflight = cannotRun })
	var out, errs strings.Builder
	cleaned := false
	code := run(fakeSuite(&cleaned), args, &out, &errs)
	return out.String(), errs.String(), code, cleaned
}

// timing varies; strip it before comparing.
var timing = regexp.MustCompile(`( #)? time=\d+ms`)

func TestMainResults(t *testing.T) {
	out, _, code, cleaned := runFake(t)
	out = timing.ReplaceAllString(out, "")
	for _, want := range []string{
		"1..5\n",
		"ok 1 prog.passes\n",
		"# fails: main_test.go:18: socket \"a\": boom\n# fails: main_test.go:17: cleanup ran\nnot ok 2 prog.fails\n",
		"ok 3 prog.skips # SKIP no u32 classifier\n",
		"ok 4 prog.xfails # XFAIL value already modified\n",
		"# panics: panic: kaboom\n",
		"not ok 5 prog.panics\n",
		"# Totals: pass:1 fail:2 xfail:1 xpass:0 skip:1 error:0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not reached") {
		t.Errorf("Fatalf did not stop the case:\n%s", out)
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !cleaned {
		t.Errorf("suite cleanup did not run")
	}
}

func TestMainSelectAndList(t *testing.T) {
	out, _, code, _ := runFake(t, "-t", "skips", "-t", "xfails")
	if code != 0 || !strings.Contains(out, "1..2\n") || !strings.Contains(out, "ok 1 prog.skips # SKIP") {
		t.Errorf("-t: exit %d, output:\n%s", code, out)
	}
	out, _, code, _ = runFake(t, "-t", "skips")
	if code != 4 {
		t.Errorf("only skipped cases: exit %d, want 4:\n%s", code, out)
	}
	out, _, code, _ = runFake(t, "-l")
	if code != 0 || out != "passes\nfails\nskips\nxfails\npanics\n" {
		t.Errorf("-l: exit %d, output %q", code, out)
	}
}

func TestMainUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-x"}, {"-t", "nope"}, {"extra"}} {
		out, errs, code, _ := runFake(t, args...)
		if code != 1 || out != "" || !strings.Contains(errs, "usage:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if _, errs, code, _ := runFake(t, "-h"); code != 0 || !strings.Contains(errs, "usage:") {
		t.Errorf("-h: exit %d, stderr %q", code, errs)
	}
}

func TestMainCannotRun(t *testing.T) {
	preflight = func() string { return "must be run as root (needs CAP_NET_ADMIN)" }
	t.Cleanup(func() { preflight = cannotRun })
	t.Setenv("KSFT_TAP_LEVEL", "")
	var out strings.Builder
	cleaned := false
	code := run(fakeSuite(&cleaned), nil, &out, &strings.Builder{})
	if code != 4 || out.String() != "TAP version 13\n1..0 # SKIP must be run as root (needs CAP_NET_ADMIN)\n" {
		t.Errorf("exit %d, output %q", code, out.String())
	}
}
