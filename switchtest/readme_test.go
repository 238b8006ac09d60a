// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	semantics "nlmcast/semantics/cases"
)

// The README's counts of the switch program's results are the table's:
// "N results: A on the sysctl itself (...); B `changes_at_0_seen_at_1.*`
// ... the C semantics cases again".
func TestReadmeCountsSwitchResults(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("\\| `netlink_mcast_switch` \\| (\\d+) results: (\\d+) on the sysctl itself .*?; (\\d+) `changes_at_0_seen_at_1")
	m := re.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("README.md: no match for %q", re)
	}
	flips := len(flipCases("0", "1")) + len(flipCases("1", "0"))
	for i, want := range []int{len(cases), len(switchCases), flips} {
		if got, _ := strconv.Atoi(m[i+1]); got != want {
			t.Errorf("README.md says %q: the table has %d there", m[i+1], want)
		}
	}
	if want := len(switchCases) + flips + 2*len(semantics.All); len(cases) != want {
		t.Errorf("the table has %d cases, not its parts' %d", len(cases), want)
	}
}

// The NIPA results checker's counts (.ci/nipa/check-results) are the
// tables': a case added without them would fail CI's NIPA run.
func TestNIPACheckerCounts(t *testing.T) {
	b, err := os.ReadFile("../.ci/nipa/check-results")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"SEMANTICS_CASES": len(semantics.All), "SWITCH_RESULTS": len(cases)} {
		m := regexp.MustCompile(`(?m)^` + name + ` = (\d+)$`).FindStringSubmatch(string(b))
		if m == nil {
			t.Errorf("check-results: no %s = N line", name)
			continue
		}
		if got, _ := strconv.Atoi(m[1]); got != want {
			t.Errorf("check-results: %s = %d, the tables have %d", name, got, want)
		}
	}
}
