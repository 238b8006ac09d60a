// SPDX-License-Identifier: GPL-2.0

package main

import (
	"flag"
	"strings"
	"testing"
)

// -h lists -h among the flags of every program, not under the old
// spellings (-list), and gives -deadline's default as the scenes get it:
// before, it said 1m30s, the frame's, while every scene has an hour.
func TestHelpSaysTheScenesDeadline(t *testing.T) {
	help, _, _ := runSuite(t, "-h")
	if h, aliases := strings.Index(help, "\n  -h\n"), strings.Index(help, "Old spellings"); h < 0 || h > aliases {
		t.Errorf("-h listed under the old spellings:\n%s", help)
	}
	if _, _, code := runSuite(t, "-l"); code != 0 {
		t.Fatalf("-l: exit %d", code)
	}
	cases, err := sceneCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if want := "(default: " + c.Timeout.String() + " a scene)"; !strings.Contains(help, want) {
			t.Fatalf("scene %s has a deadline of %v; -h does not say %q:\n%s", c.Name, c.Timeout, want, help)
		}
	}
}

// -l lists the names only, also under go test -v, whose -test.v is not
// the program's -v.
func TestListUnderGoTestV(t *testing.T) {
	was := flag.Lookup("test.v").Value.String()
	flag.Set("test.v", "true")
	t.Cleanup(func() { flag.Set("test.v", was) })
	out, _, code := runSuite(t, "-l")
	if code != 0 || strings.Contains(out, "\t") {
		t.Errorf("-l under go test -v: exit %d, output:\n%s", code, out)
	}
}
