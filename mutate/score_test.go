// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"
)

// A follow-up run's kill or argument replaces a campaign's survivor; its
// survivor, or its record of a mutant already decided or outside the
// sample, changes nothing; the score counts caught mutants among those
// neither equivalent nor failing to build.
func TestScoreOverlaysFollowUps(t *testing.T) {
	dir := t.TempDir()
	base := resultsDir{dir: dir + "/full"}
	c := campaign{Sample: []string{"a+1:x:1", "b+1:x:1", "c+1:x:1", "d+1:x:1", "e+1:x:1", "f+1:x:1"}}
	write := func(rd resultsDir, id, status, tier string) {
		t.Helper()
		if err := rd.writeJSON(rd.recordPath(id), record{ID: id, Status: status, DecidedBy: tier, Source: "line of " + id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := base.writeJSON(base.dir+"/campaign.json", c); err != nil {
		t.Fatal(err)
	}
	write(base, "a+1:x:1", statusKilled, "base")
	write(base, "b+1:x:1", statusSurvived, "")
	write(base, "c+1:x:1", statusSurvived, "")
	write(base, "d+1:x:1", statusSurvived, "")
	write(base, "e+1:x:1", statusBuildFail, "base")
	write(base, "f+1:x:1", statusEquivalent, "")
	fault := resultsDir{dir: dir + "/fault"}
	write(fault, "b+1:x:1", statusKilled, "fault")
	write(fault, "c+1:x:1", statusSurvived, "")
	write(fault, "f+1:x:1", statusKilled, "fault") // decided already: ignored
	write(fault, "z+1:x:1", statusKilled, "fault") // not in the sample
	argued := resultsDir{dir: dir + "/argued"}
	write(argued, "d+1:x:1", statusEquivalent, "")

	got, final, err := overlay(base, []resultsDir{fault, argued})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeScore(&b, base, got, final)
	for _, want := range []string{
		"full: 6 of 6 recorded\n",
		"killed 2, crashed 0, hung 0; equivalent 2; build-failure 1; survived 1\n",
		"score: 2 of 3 non-equivalent mutants caught (66.7%)\n",
		"caught by tier: base 1, fault 1 (by the campaign's own records 1, by follow-up runs 1)\n",
		"open 1:\n  c+1:x:1  line of c+1:x:1\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("score output lacks %q:\n%s", want, b.String())
		}
	}
	if final["b+1:x:1"].run != "fault" || final["d+1:x:1"].run != "argued" {
		t.Errorf("deciding runs: b %q, d %q; want fault, argued", final["b+1:x:1"].run, final["d+1:x:1"].run)
	}
}
