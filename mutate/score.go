// SPDX-License-Identifier: GPL-2.0

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// caught reports whether a class is a mutant the suite caught.
func caught(status string) bool {
	return status == statusKilled || status == statusCrashed || status == statusHung
}

// scored is one mutant's final class over a campaign and its follow-up
// runs, and the run that decided it.
type scored struct {
	rec record
	run string // the results dir's base name
	// unbaselined: caught on a tier whose build had no baseline boot in
	// that run, so the kill may be the unmutated kernel's failure.
	unbaselined bool
	// laterKill: in a held-out campaign, a catch made at another suite
	// commit than the campaign's, which does not count in its score.
	laterKill record
}

// scoreRun is one results dir: its campaign and its records.
type scoreRun struct {
	dir  resultsDir
	c    campaign
	recs map[string]record
}

func readRun(rd resultsDir, needCampaign bool) (scoreRun, error) {
	c, ok, err := rd.readCampaign()
	if err != nil {
		return scoreRun{}, err
	}
	if !ok && needCampaign {
		return scoreRun{}, fmt.Errorf("%s: no campaign.json", rd.dir)
	}
	recs, err := rd.records()
	return scoreRun{rd, c, recs}, err
}

// kernelOf and configOf are what a record was decided on; a record from
// before records carried them takes its campaign's kernel, and no config
// hash ("").
func (r scoreRun) kernelOf(rec record) string {
	if rec.Kernel != "" {
		return rec.Kernel
	}
	return r.c.Kernel
}

// baselined says whether the tier that decided rec had its own baseline
// boot. A record from before records said so had one only on the base
// tier, and only in a run without -baseline=false.
func (r scoreRun) baselined(rec record) bool {
	if rec.DecidedBy == identicalObject {
		return true // decided by the compiler, not by a boot
	}
	for _, t := range rec.Tiers {
		if t.Tier == rec.DecidedBy {
			if t.Baseline {
				return true
			}
			return rec.SuiteCommit == "" && t.Tier == "base" && !strings.Contains(r.c.Command, "-baseline=false")
		}
	}
	return false
}

// overlay is the campaign's final records over its follow-up runs. By
// default each mutant of the campaign's sample takes its latest record
// (by finish time) among all the runs, host failures (error) aside: what
// the last run that judged it says, a kill it no longer gets included.
// With best, the old overlay: a survivor is replaced by a follow-up's
// record that caught it or argued it equivalent (the later of several,
// in the order given), which keeps every kill ever seen. Either way the
// records used must be of one kernel and one configuration.
func overlay(base resultsDir, followUps []resultsDir, best bool) (campaign, map[string]scored, error) {
	b, err := readRun(base, true)
	if err != nil {
		return b.c, nil, err
	}
	runs := []scoreRun{b}
	for _, f := range followUps {
		r, err := readRun(f, false)
		if err != nil {
			return b.c, nil, err
		}
		if r.c.Kernel == "" {
			r.c.Kernel = b.c.Kernel
		}
		runs = append(runs, r)
	}
	inSample := map[string]bool{}
	for _, id := range b.c.Sample {
		inSample[id] = true
	}
	out := map[string]scored{}
	runOf := map[string]scoreRun{}
	later := map[string]record{}
	take := func(r scoreRun, id string, rec record) {
		out[id] = scored{rec: rec, run: filepath.Base(r.dir.dir)}
		runOf[id] = r
	}
	for id, rec := range b.recs {
		take(b, id, rec)
	}
	for _, r := range runs[1:] {
		for id, rec := range r.recs {
			s, ok := out[id]
			switch {
			case !inSample[id] && !ok:
			case b.c.HeldOut && !best && rec.SuiteCommit != b.c.SuiteCommit:
				// A held-out sample is decided at its campaign's commit: a
				// catch at another (a case written for a survivor) is
				// reported beside the score, never in it.
				if caught(rec.Status) && (later[id].ID == "" || rec.Finished.After(later[id].Finished)) {
					later[id] = rec
				}
			case best:
				if ok && s.rec.Status == statusSurvived && (caught(rec.Status) || rec.Status == statusEquivalent) {
					take(r, id, rec)
				}
			case rec.Status == statusError:
				if !ok {
					take(r, id, rec)
				}
			case !ok || s.rec.Status == statusError || rec.Finished.After(s.rec.Finished):
				take(r, id, rec)
			}
		}
	}
	for id, rec := range later {
		if s, ok := out[id]; ok && !caught(s.rec.Status) {
			s.laterKill = rec
			out[id] = s
		}
	}
	kernels, configs := map[string][]string{}, map[string][]string{}
	for id, s := range out {
		r := runOf[id]
		kernels[r.kernelOf(s.rec)] = append(kernels[r.kernelOf(s.rec)], id)
		if s.rec.ConfigSHA256 != "" {
			configs[s.rec.ConfigSHA256] = append(configs[s.rec.ConfigSHA256], id)
		}
		if caught(s.rec.Status) && !best && !r.baselined(s.rec) {
			s.unbaselined = true
			out[id] = s
		}
	}
	if err := oneOf("kernel", kernels); err != nil {
		return b.c, nil, err
	}
	if err := oneOf("config (sha256 of the base build's .config)", configs); err != nil {
		return b.c, nil, err
	}
	return b.c, out, nil
}

// oneOf refuses more than one value of what among the records.
func oneOf(what string, byValue map[string][]string) error {
	if len(byValue) <= 1 {
		return nil
	}
	var parts []string
	for v, ids := range byValue {
		sort.Strings(ids)
		parts = append(parts, fmt.Sprintf("%s (%d records, e.g. %s)", short(v), len(ids), ids[0]))
	}
	sort.Strings(parts)
	return fmt.Errorf("the records differ in %s: %s; a score is of one kernel and one configuration", what, strings.Join(parts, ", "))
}

// writeScore prints the campaign's figures over its follow-ups: the
// classes, the score (caught among the non-equivalent mutants that
// built), by tier, and every mutant still open.
func writeScore(w io.Writer, base resultsDir, c campaign, final map[string]scored, best bool) {
	counts := map[string]int{}
	byTier := map[string]int{}
	commits := map[string]int{}
	n, own, unbaselined := 0, 0, 0 // caught: all, by the campaign's own records; kills on tiers with no baseline
	for _, s := range final {
		commits[s.rec.SuiteCommit]++
		if s.unbaselined {
			unbaselined++
			continue
		}
		counts[s.rec.Status]++
		if caught(s.rec.Status) {
			n++
			byTier[s.rec.DecidedBy]++
			if s.run == filepath.Base(base.dir) {
				own++
			}
		}
	}
	live := n + counts[statusSurvived] + unbaselined
	if c.HeldOut && !best {
		fmt.Fprintf(w, "%s: HELD-OUT sample of %d (seed %d) drawn from the %d mutants of %s after the last change to the cases (%s), decided at suite commit %s\n",
			filepath.Base(base.dir), len(c.Sample), c.Seed, c.SetSize, c.Set, short(c.CasesCommit), short(c.SuiteCommit))
	}
	if best {
		fmt.Fprintf(w, "%s: BEST RECORD PER MUTANT over the runs (-best: a survivor replaced by any later catch; not one campaign's score)\n", filepath.Base(base.dir))
	} else {
		fmt.Fprintf(w, "%s: latest record per mutant over the runs\n", filepath.Base(base.dir))
	}
	fmt.Fprintf(w, "%s: %d of %d recorded\n", filepath.Base(base.dir), len(final), len(c.Sample))
	fmt.Fprintf(w, "killed %d, crashed %d, hung %d; equivalent %d; build-failure %d; survived %d\n",
		counts[statusKilled], counts[statusCrashed], counts[statusHung], counts[statusEquivalent], counts[statusBuildFail], counts[statusSurvived])
	if counts[statusError] > 0 {
		fmt.Fprintf(w, "error (host failures, not counted, to be rerun) %d\n", counts[statusError])
	}
	if unbaselined > 0 {
		fmt.Fprintf(w, "caught on a tier that had no baseline boot of its own %d: counted as not caught\n", unbaselined)
	}
	pct := 0.0
	if live > 0 {
		pct = 100 * float64(n) / float64(live)
	}
	fmt.Fprintf(w, "score: %d of %d non-equivalent mutants caught (%.1f%%)\n", n, live, pct)
	var tiers []string
	for t, k := range byTier {
		tiers = append(tiers, fmt.Sprintf("%s %d", t, k))
	}
	sort.Strings(tiers)
	fmt.Fprintf(w, "caught by tier: %s (by the campaign's own records %d, by follow-up runs %d)\n", strings.Join(tiers, ", "), own, n-own)
	var later []string
	for id, s := range final {
		if s.laterKill.ID != "" {
			later = append(later, fmt.Sprintf("%s (%s at %s)", id, s.laterKill.Status, short(s.laterKill.SuiteCommit)))
		}
	}
	if len(later) > 0 {
		sort.Strings(later)
		fmt.Fprintf(w, "then killed by new cases (not in the score) %d: %s\n", len(later), strings.Join(later, ", "))
	}
	var cs []string
	for cm, k := range commits {
		if cm == "" {
			cm = "unrecorded"
		}
		cs = append(cs, fmt.Sprintf("%s %d", short(cm), k))
	}
	sort.Strings(cs)
	fmt.Fprintf(w, "suite commits of the records: %s\n", strings.Join(cs, ", "))
	var open []string
	for id, s := range final {
		if s.rec.Status == statusSurvived || s.unbaselined {
			open = append(open, id)
		}
	}
	sort.Strings(open)
	fmt.Fprintf(w, "open %d:\n", len(open))
	for _, id := range open {
		fmt.Fprintf(w, "  %s  %s\n", id, strings.TrimSpace(final[id].rec.Source))
	}
}

func cmdScore(args []string) int {
	fs := flag.NewFlagSet("mutate score", flag.ContinueOnError)
	out := fs.String("out", "", "results `dir` of the campaign")
	var with listFlag
	fs.Var(&with, "with", "results `dir` of a follow-up run of some of its mutants (repeatable, in order)")
	best := fs.Bool("best", false, "the old overlay: a survivor takes any follow-up's catch or argument (every kill ever seen), labelled so; default: the latest record per mutant")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "mutate score: -out is required")
		return 2
	}
	var followUps []resultsDir
	for _, d := range with {
		followUps = append(followUps, resultsDir{dir: d})
	}
	base := resultsDir{dir: *out}
	c, final, err := overlay(base, followUps, *best)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate score: %v\n", err)
		return 1
	}
	writeScore(os.Stdout, base, c, final, *best)
	return 0
}
