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
}

// overlay is the campaign's records with each survivor replaced by a
// follow-up run's record of the same mutant that caught it or argued it
// equivalent (the later of several, in the order given). A follow-up
// record of a mutant outside the campaign's sample, or one that survived
// again, changes nothing.
func overlay(base resultsDir, followUps []resultsDir) (campaign, map[string]scored, error) {
	c, ok, err := base.readCampaign()
	if err != nil {
		return c, nil, err
	}
	if !ok {
		return c, nil, fmt.Errorf("%s: no campaign.json", base.dir)
	}
	recs, err := base.records()
	if err != nil {
		return c, nil, err
	}
	out := map[string]scored{}
	for id, r := range recs {
		out[id] = scored{r, filepath.Base(base.dir)}
	}
	for _, f := range followUps {
		more, err := f.records()
		if err != nil {
			return c, nil, err
		}
		for id, r := range more {
			if s, ok := out[id]; ok && s.rec.Status == statusSurvived && (caught(r.Status) || r.Status == statusEquivalent) {
				out[id] = scored{r, filepath.Base(f.dir)}
			}
		}
	}
	return c, out, nil
}

// writeScore prints the campaign's figures over its follow-ups: the
// classes, the score (caught among the non-equivalent mutants that
// built), by tier, and every mutant still open.
func writeScore(w io.Writer, base resultsDir, c campaign, final map[string]scored) {
	counts := map[string]int{}
	byTier := map[string]int{}
	n, own := 0, 0 // caught: all, and by the campaign's own records
	for _, s := range final {
		counts[s.rec.Status]++
		if caught(s.rec.Status) {
			n++
			byTier[s.rec.DecidedBy]++
			if s.run == filepath.Base(base.dir) {
				own++
			}
		}
	}
	live := n + counts[statusSurvived]
	fmt.Fprintf(w, "%s: %d of %d recorded\n", filepath.Base(base.dir), len(final), len(c.Sample))
	fmt.Fprintf(w, "killed %d, crashed %d, hung %d; equivalent %d; build-failure %d; survived %d\n",
		counts[statusKilled], counts[statusCrashed], counts[statusHung], counts[statusEquivalent], counts[statusBuildFail], counts[statusSurvived])
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
	var open []string
	for id, s := range final {
		if s.rec.Status == statusSurvived {
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
	c, final, err := overlay(base, followUps)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate score: %v\n", err)
		return 1
	}
	writeScore(os.Stdout, base, c, final)
	return 0
}
