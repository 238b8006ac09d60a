// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// buildConfigs are the four builds the arguments are checked against:
// testdata/configs/KIND-VERSION.config, the options each sets.
func buildConfigs(t *testing.T) map[[2]string]map[string]bool {
	t.Helper()
	out := map[[2]string]map[string]bool{}
	for _, kind := range buildKinds {
		for _, v := range []string{"6.1", "6.12"} {
			c, err := configSet(filepath.Join("testdata", "configs", kind+"-"+v+".config"))
			if err != nil {
				t.Fatal(err)
			}
			if got := buildKind(c); got != kind {
				t.Fatalf("%s-%s.config is a %s build by its options", kind, v, got)
			}
			out[[2]string{kind, v}] = c
		}
	}
	return out
}

// Every argument names the builds it was made for, and on each of them
// (for each kernel version it holds on) its unset: options are off, so
// that it applies there; on a build it does not name, it never applies.
func TestEquivalenceArgumentsHoldOnTheBuildsTheyName(t *testing.T) {
	configs := buildConfigs(t)
	eq, err := readEquivalences("equivalent.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for id, es := range eq {
		for _, e := range es {
			n++
			versions := e.kernels
			if len(versions) == 0 {
				versions = []string{"6.1", "6.12"}
			}
			for _, kind := range buildKinds {
				for _, v := range versions {
					c, ok := configs[[2]string{kind, v}]
					if !ok {
						continue
					}
					why, applies := e.applies(e.code, c, v+".0")
					if claimed := slices.Contains(e.builds, kind); claimed != applies {
						t.Errorf("%s (%q): builds: %s, on the %s %s build: applies %v (%s)", id, e.code, strings.Join(e.builds, " "), v, kind, applies, why)
					}
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d arguments read", n)
	}
}

// The check fires: an argument for the tiny build alone is not applied
// on a defconfig build, and one naming defconfig whose unset: option
// defconfig sets is caught.
func TestEquivalenceBuildsCheckFires(t *testing.T) {
	configs := buildConfigs(t)
	tinyOnly := equivalence{id: "x+1:del-call:1", code: "x();", builds: []string{"tiny"}, reason: "r"}
	if why, ok := tinyOnly.applies("x();", configs[[2]string{"defconfig", "6.1"}], "6.1.192"); ok || !strings.Contains(why, "made for the tiny build") {
		t.Errorf("a tiny-only argument on defconfig: applies %v (%s)", ok, why)
	}
	if _, ok := tinyOnly.applies("x();", configs[[2]string{"tiny", "6.1"}], "6.1.192"); !ok {
		t.Error("a tiny-only argument does not apply on the tiny build")
	}
	wrong := equivalence{id: "x+1:del-call:1", code: "x();", unset: []string{"CONFIG_NETFILTER"}, builds: []string{"tiny", "defconfig"}, reason: "r"}
	if _, ok := wrong.applies("x();", configs[[2]string{"defconfig", "6.1"}], "6.1.192"); ok {
		t.Error(fmt.Sprintf("an argument needing CONFIG_NETFILTER off applies on defconfig, which sets it: the test above would not catch %+v", wrong))
	}
}

// The counts doc/mutation.md gives: "N of the M arguments name both
// builds" and "The other K are made for the tiny build alone".
var (
	docBothRE     = regexp.MustCompile(`(\d+)\s+of\s+the\s+(\d+)\s+arguments\s+name\s+both\s+builds`)
	docTinyOnlyRE = regexp.MustCompile(`The\s+other\s+(\d+)\s+are\s+made\s+for\s+the\s+tiny\s+build\s+alone`)
)

// docCountsMismatch says how the counts in doc differ from the arguments
// in eq ("" when they agree).
func docCountsMismatch(doc string, eq map[string][]equivalence) string {
	both, tinyOnly, total := 0, 0, 0
	for _, es := range eq {
		for _, e := range es {
			total++
			switch {
			case slices.Equal(e.builds, []string{"tiny"}):
				tinyOnly++
			case slices.Contains(e.builds, "tiny") && slices.Contains(e.builds, "defconfig"):
				both++
			}
		}
	}
	m, mt := docBothRE.FindStringSubmatch(doc), docTinyOnlyRE.FindStringSubmatch(doc)
	if m == nil || mt == nil {
		return fmt.Sprintf("no \"N of the M arguments name both builds\" and \"The other K are made for the tiny build alone\" (the file: %d, %d, %d)", both, total, tinyOnly)
	}
	gotBoth, _ := strconv.Atoi(m[1])
	gotTotal, _ := strconv.Atoi(m[2])
	gotTiny, _ := strconv.Atoi(mt[1])
	if gotBoth != both || gotTotal != total || gotTiny != tinyOnly {
		return fmt.Sprintf("says %d of %d name both builds and %d the tiny build alone; the file has %d of %d and %d", gotBoth, gotTotal, gotTiny, both, total, tinyOnly)
	}
	return ""
}

// doc/mutation.md counts the arguments that hold on both builds and on
// the tiny build alone as equivalent.txt has them.
func TestEquivalenceDocCounts(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "doc", "mutation.md"))
	if err != nil {
		t.Fatal(err)
	}
	eq, err := readEquivalences("equivalent.txt")
	if err != nil {
		t.Fatal(err)
	}
	if why := docCountsMismatch(string(doc), eq); why != "" {
		t.Errorf("doc/mutation.md: %s", why)
	}
}

// The count check fires on a count that is off and on a missing sentence.
func TestEquivalenceDocCountsCheckFires(t *testing.T) {
	eq := map[string][]equivalence{
		"a+1:del-call:1": {{builds: []string{"tiny", "defconfig"}}},
		"b+1:del-call:1": {{builds: []string{"tiny"}}, {builds: []string{"tiny"}}},
	}
	good := "1 of the 3 arguments name both\nbuilds. The other 2 are made for the tiny build\nalone."
	if why := docCountsMismatch(good, eq); why != "" {
		t.Errorf("right counts: %s", why)
	}
	for _, bad := range []string{
		"2 of the 3 arguments name both builds. The other 2 are made for the tiny build alone.",
		"1 of the 4 arguments name both builds. The other 2 are made for the tiny build alone.",
		"1 of the 3 arguments name both builds. The other 1 are made for the tiny build alone.",
		"So far one argument names defconfig.",
	} {
		if why := docCountsMismatch(bad, eq); why == "" {
			t.Errorf("%q passes", bad)
		}
	}
}
