// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"
	"time"
)

// scoreFixture is a campaign and two follow-up runs: base (the campaign),
// fault (a later run with kills and a survivor) and argued (an argument).
type scoreFixture struct {
	t                    *testing.T
	base, fault, argued  resultsDir
	clock                time.Time
	kernel, config, suit string
}

func newScoreFixture(t *testing.T) *scoreFixture {
	dir := t.TempDir()
	f := &scoreFixture{t: t, base: resultsDir{dir: dir + "/full"}, fault: resultsDir{dir: dir + "/fault"}, argued: resultsDir{dir: dir + "/argued"},
		clock: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), kernel: "6.1.192", config: "c0ffee", suit: "abc"}
	c := campaign{Kernel: "6.1.192", Sample: []string{"a+1:x:1", "b+1:x:1", "c+1:x:1", "d+1:x:1", "e+1:x:1", "f+1:x:1"}}
	if err := f.base.writeJSON(f.base.dir+"/campaign.json", c); err != nil {
		t.Fatal(err)
	}
	return f
}

// write records id in rd, decided on tier (with its baseline boot), one
// minute after the previous record.
func (f *scoreFixture) write(rd resultsDir, id, status, tier string) {
	f.t.Helper()
	f.clock = f.clock.Add(time.Minute)
	rec := record{ID: id, Status: status, DecidedBy: tier, Source: "line of " + id, Finished: f.clock,
		recordStamp: recordStamp{SuiteCommit: f.suit, Kernel: f.kernel, ConfigSHA256: f.config}}
	if tier != "" {
		rec.Tiers = []tierResult{{Tier: tier, Status: status, Baseline: true}}
	}
	if err := rd.writeJSON(rd.recordPath(id), rec); err != nil {
		f.t.Fatal(err)
	}
}

func (f *scoreFixture) standard() {
	f.write(f.base, "a+1:x:1", statusKilled, "base")
	f.write(f.base, "b+1:x:1", statusSurvived, "")
	f.write(f.base, "c+1:x:1", statusSurvived, "")
	f.write(f.base, "d+1:x:1", statusSurvived, "")
	f.write(f.base, "e+1:x:1", statusBuildFail, "base")
	f.write(f.base, "f+1:x:1", statusEquivalent, "")
	f.write(f.fault, "b+1:x:1", statusKilled, "fault")
	f.write(f.fault, "c+1:x:1", statusSurvived, "")
	f.write(f.fault, "a+1:x:1", statusSurvived, "fault") // a later run no longer kills it
	f.write(f.fault, "z+1:x:1", statusKilled, "fault")   // not in the sample
	f.write(f.argued, "d+1:x:1", statusEquivalent, "")
}

func (f *scoreFixture) score(best bool) (string, map[string]scored, error) {
	c, final, err := overlay(f.base, []resultsDir{f.fault, f.argued}, best)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	writeScore(&b, f.base, c, final, best)
	return b.String(), final, nil
}

func wantLines(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("score output lacks %q:\n%s", w, got)
		}
	}
}

// -best: a follow-up run's kill or argument replaces a campaign's
// survivor; its survivor, or its record of a mutant already decided or
// outside the sample, changes nothing. The output says it is that overlay.
func TestScoreBestOverlaysFollowUps(t *testing.T) {
	f := newScoreFixture(t)
	f.standard()
	out, final, err := f.score(true)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, out,
		"full: BEST RECORD PER MUTANT over the runs (-best",
		"full: 6 of 6 recorded\n",
		"killed 2, crashed 0, hung 0; equivalent 2; build-failure 1; survived 1\n",
		"score: 2 of 3 non-equivalent mutants caught (66.7%)\n",
		"caught by tier: base 1, fault 1 (by the campaign's own records 1, by follow-up runs 1)\n",
		"open 1:\n  c+1:x:1  line of c+1:x:1\n",
	)
	if final["b+1:x:1"].run != "fault" || final["d+1:x:1"].run != "argued" {
		t.Errorf("deciding runs: b %q, d %q; want fault, argued", final["b+1:x:1"].run, final["d+1:x:1"].run)
	}
}

// By default the latest record of each mutant decides: a kill a later run
// no longer gets is gone.
func TestScoreLatestRecordPerMutant(t *testing.T) {
	f := newScoreFixture(t)
	f.standard()
	out, final, err := f.score(false)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, out,
		"full: latest record per mutant over the runs\n",
		"killed 1, crashed 0, hung 0; equivalent 2; build-failure 1; survived 2\n",
		"score: 1 of 3 non-equivalent mutants caught (33.3%)\n",
		"suite commits of the records: abc 6\n",
		"open 2:\n  a+1:x:1  line of a+1:x:1\n  c+1:x:1  line of c+1:x:1\n",
	)
	if final["a+1:x:1"].run != "fault" {
		t.Errorf("a: decided by %q, want the later run fault", final["a+1:x:1"].run)
	}
}

// Records of another kernel or another configuration are refused, also
// with -best; a host failure's record never replaces a decision.
func TestScoreRefusesMixedKernelsAndConfigs(t *testing.T) {
	for _, tc := range []struct {
		name           string
		kernel, config string
		want           string
	}{
		{"kernel", "6.12.118", "c0ffee", "the records differ in kernel"},
		{"config", "6.1.192", "decaf0", "the records differ in config"},
	} {
		for _, best := range []bool{false, true} {
			f := newScoreFixture(t)
			f.standard()
			f.kernel, f.config = tc.kernel, tc.config
			f.write(f.fault, "c+1:x:1", statusKilled, "fault")
			if _, _, err := f.score(best); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s (best %v): err %v, want %q", tc.name, best, err, tc.want)
			}
		}
	}
	f := newScoreFixture(t)
	f.standard()
	f.write(f.argued, "b+1:x:1", statusError, "base")
	if _, final, err := f.score(false); err != nil || final["b+1:x:1"].rec.Status != statusKilled {
		t.Errorf("a later host failure: %v, b is %q, want killed still", err, final["b+1:x:1"].rec.Status)
	}
}

// A catch on a tier with no baseline boot of its own is not counted; an
// old record (no stamp) had one only on the base tier of a run without
// -baseline=false.
func TestScoreDoesNotCountUnbaselinedCatches(t *testing.T) {
	f := newScoreFixture(t)
	f.standard()
	rec := record{ID: "c+1:x:1", Status: statusKilled, DecidedBy: "debug", Finished: f.clock.Add(time.Hour),
		Tiers:       []tierResult{{Tier: "base", Status: statusSurvived}, {Tier: "debug", Status: statusKilled}},
		recordStamp: recordStamp{Kernel: "6.1.192"}}
	if err := f.fault.writeJSON(f.fault.recordPath(rec.ID), rec); err != nil {
		t.Fatal(err)
	}
	out, final, err := f.score(false)
	if err != nil {
		t.Fatal(err)
	}
	if !final["c+1:x:1"].unbaselined {
		t.Errorf("c: %+v, want unbaselined", final["c+1:x:1"])
	}
	wantLines(t, out, "caught on a tier that had no baseline boot of its own 1: counted as not caught\n",
		"score: 1 of 3 non-equivalent mutants caught (33.3%)\n")
}

// A held-out campaign's score is its own commit's: a kill made later at
// another commit is listed as "then killed by new cases", and the mutant
// stays open; a later tier's kill at the same commit counts.
func TestScoreHeldOut(t *testing.T) {
	f := newScoreFixture(t)
	c := campaign{Kernel: "6.1.192", Set: "af_netlink-mc", SetSize: 99, Seed: 7, HeldOut: true, SuiteCommit: "abc", CasesCommit: "abd",
		Sample: []string{"a+1:x:1", "b+1:x:1", "c+1:x:1"}}
	if err := f.base.writeJSON(f.base.dir+"/campaign.json", c); err != nil {
		t.Fatal(err)
	}
	f.write(f.base, "a+1:x:1", statusKilled, "base")
	f.write(f.base, "b+1:x:1", statusSurvived, "")
	f.write(f.base, "c+1:x:1", statusSurvived, "")
	f.write(f.fault, "b+1:x:1", statusKilled, "fault") // same commit: counts
	f.suit = "def"
	f.write(f.argued, "c+1:x:1", statusKilled, "base") // a new case: does not count
	out, final, err := f.score(false)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, out,
		"full: HELD-OUT sample of 3 (seed 7) drawn from the 99 mutants of af_netlink-mc after the last change to the cases (abd), decided at suite commit abc\n",
		"score: 2 of 3 non-equivalent mutants caught (66.7%)\n",
		"then killed by new cases (not in the score) 1: c+1:x:1 (killed at def)\n",
		"open 1:\n  c+1:x:1")
	if final["c+1:x:1"].rec.Status != statusSurvived {
		t.Errorf("c: %s, want survived in the held-out score", final["c+1:x:1"].rec.Status)
	}
	// -best, labelled so, overlays it all.
	if out, _, _ := f.score(true); !strings.Contains(out, "score: 3 of 3") || !strings.Contains(out, "BEST RECORD PER MUTANT") {
		t.Errorf("-best:\n%s", out)
	}
}

// -held-out refuses a sample somebody chose.
func TestHeldOutNeedsASeededSample(t *testing.T) {
	for _, args := range [][]string{
		{"-src", "s", "-build", "b", "-out", "o", "-held-out"},
		{"-src", "s", "-build", "b", "-out", "o", "-held-out", "-ids", "a+1:x:1"},
	} {
		if code := cmdRun(args); code != 2 {
			t.Errorf("mutate run %q: exit %d, want 2", args, code)
		}
	}
}
