// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"nlmcast/ktap"
	"nlmcast/selftests"
)

// -h goes to stdout, lists -h among the flags of every program (not under
// the old spellings) and gives -deadline's default as the modes really
// get it: before, it said 1m30s, the frame's, while a mode's deadline is
// -max-duration plus setupAllowance.
func TestHelp(t *testing.T) {
	t.Setenv("kselftest_override_timeout", "")
	var out, errs bytes.Buffer
	if code := selftests.Run(suite, []string{"-h"}, &out, &errs); code != ktap.ExitPass || errs.Len() > 0 {
		t.Fatalf("-h: exit %d, stderr %q; want 0, nothing", code, errs.String())
	}
	help := out.String()
	if h, aliases := strings.Index(help, "\n  -h\n"), strings.Index(help, "Old spellings"); h < 0 || h > aliases {
		t.Errorf("-h listed under the old spellings:\n%s", help)
	}
	// The deadlines the cases get with the default flags, and with
	// KSFT_MACHINE_SLOW=yes.
	deadlines := func() (mode, failnth string) {
		t.Helper()
		if code := selftests.Run(suite, []string{"-l"}, &bytes.Buffer{}, &bytes.Buffer{}); code != ktap.ExitPass {
			t.Fatalf("-l: exit %d", code)
		}
		cases, err := modeCases()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if strings.HasPrefix(c.Name, "failnth") && c.Timeout != 0 {
				t.Errorf("%s has a deadline of its own (%v): -h says it has the frame's", c.Name, c.Timeout)
			}
		}
		return cases[0].Timeout.String(), "1m30s a failnth case"
	}
	t.Setenv("KSFT_MACHINE_SLOW", "")
	mode, failnth := deadlines()
	t.Setenv("KSFT_MACHINE_SLOW", "yes")
	slow, _ := deadlines()
	want := "(default: a mode -max-duration + " + setupAllowance.String() + ": " + mode + ", " + slow + " with KSFT_MACHINE_SLOW=yes"
	if !strings.Contains(strings.ReplaceAll(help, "\n    \t", " "), want) || !strings.Contains(help, failnth) {
		t.Errorf("-h does not say %q ... %q:\n%s", want, failnth, help)
	}
}

// -l lists the names only, also under go test -v (whose -test.v is not
// the program's -v): before, `go test -v ./stress/` failed TestFlags,
// every time, as -l printed each mode's description.
func TestListUnderGoTestV(t *testing.T) {
	was := flag.Lookup("test.v").Value.String()
	flag.Set("test.v", "true")
	t.Cleanup(func() { flag.Set("test.v", was) })
	var out bytes.Buffer
	if code := selftests.Run(suite, []string{"-l"}, &out, &bytes.Buffer{}); code != ktap.ExitPass {
		t.Fatalf("-l: exit %d", code)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if strings.ContainsAny(line, " \t") {
			t.Errorf("-l under go test -v printed %q, not a name", line)
		}
	}
}
