// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// campaign is a results directory's campaign.json: what was run, on what,
// and the sample, in order, so that a resumed run takes up the same one.
type campaign struct {
	Command    string    `json:"command"`
	Set        string    `json:"set"`
	File       string    `json:"file"`
	Kernel     string    `json:"kernel"`      // make kernelversion
	Commit     string    `json:"tree_commit"` // the source tree's git HEAD
	FileSHA256 string    `json:"file_sha256"` // of File in the tree: a resumed run must have the same
	Config     string    `json:"config"`      // the build's configuration fragments
	SetSize    int       `json:"set_mutants"` // every mutant of the set
	Seed       int64     `json:"seed"`        // 0: no sampling
	Sample     []string  `json:"sample"`      // the mutant IDs, in run order
	Tiers      []string  `json:"tiers"`       // in order
	Started    time.Time `json:"started"`
	// SuiteCommit is the suite's commit the campaign started at; a
	// resumed run at another refuses unless told.
	SuiteCommit string `json:"suite_commit,omitempty"`
	// HeldOut: a seeded sample drawn after the last change to the cases
	// (CasesCommit), decided at SuiteCommit alone: the score the project
	// quotes. Kills at a later commit are "then killed by new cases".
	HeldOut     bool   `json:"held_out,omitempty"`
	CasesCommit string `json:"cases_commit,omitempty"`
}

// tierResult is one tier's boot of a mutant.
type tierResult struct {
	Tier    string   `json:"tier"`
	Status  string   `json:"status"` // killed, crashed, hung, survived, or "not run"
	Failed  []string `json:"failed,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	Build   float64  `json:"build_seconds,omitempty"`
	Boot    float64  `json:"boot_seconds,omitempty"`
	Console []string `json:"console_tail,omitempty"`
	// Baseline: the tier's unmutated build was booted (and passed) in
	// this run before its first mutant.
	Baseline     bool   `json:"baseline"`
	ConfigSHA256 string `json:"config_sha256,omitempty"` // of the tier's build's .config
}

// recordStamp is what a record was decided with: the suite's commit, the
// kernel version and the base build's configuration.
type recordStamp struct {
	SuiteCommit  string `json:"suite_commit,omitempty"`
	Kernel       string `json:"kernel,omitempty"`
	ConfigSHA256 string `json:"config_sha256,omitempty"`
}

// record is one mutant's result: records/<ID>.json.
type record struct {
	ID          string       `json:"id"`
	File        string       `json:"file"`
	Func        string       `json:"func"`
	Line        int          `json:"line"`
	Op          string       `json:"op"`
	Orig        string       `json:"orig"`
	Repl        string       `json:"repl"`
	Source      string       `json:"source_line"`
	Status      string       `json:"status"`               // the final class
	DecidedBy   string       `json:"decided_by,omitempty"` // the tier that killed it
	BuildErrors []string     `json:"build_errors,omitempty"`
	Equivalence string       `json:"equivalence,omitempty"`
	Tiers       []tierResult `json:"tiers,omitempty"`
	Seconds     float64      `json:"seconds"` // the whole round trip
	Finished    time.Time    `json:"finished"`
	recordStamp
}

type resultsDir struct{ dir string }

func (r resultsDir) recordPath(id string) string {
	// No ':' in file names: Go's module zips and some file systems refuse it.
	return filepath.Join(r.dir, "records", strings.ReplaceAll(id, ":", "_")+".json")
}

func (r resultsDir) readCampaign() (campaign, bool, error) {
	var c campaign
	b, err := os.ReadFile(filepath.Join(r.dir, "campaign.json"))
	if errors.Is(err, os.ErrNotExist) {
		return c, false, nil
	} else if err != nil {
		return c, false, err
	}
	return c, true, json.Unmarshal(b, &c)
}

func (r resultsDir) writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the records quote C: keep "->" and "&&" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := writeSync(tmp, b.Bytes()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// records reads every record there is, by ID.
func (r resultsDir) records() (map[string]record, error) {
	out := map[string]record{}
	files, _ := filepath.Glob(filepath.Join(r.dir, "records", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[rec.ID] = rec
	}
	return out, nil
}

// writeTable writes table.md: the figures, then one row per mutant in the
// sample's order (those not run yet say so).
func (r resultsDir) writeTable(c campaign, recs map[string]record) error {
	var b strings.Builder
	counts := map[string]int{}
	byTier := map[string]int{}
	var total, killedOrSurvived float64
	nKS := 0
	for _, rec := range recs {
		counts[rec.Status]++
		if rec.DecidedBy != "" {
			byTier[rec.DecidedBy]++
		}
		total += rec.Seconds
		if rec.Status == statusKilled || rec.Status == statusSurvived || rec.Status == statusEquivalent {
			killedOrSurvived += rec.Seconds
			nKS++
		}
	}
	fmt.Fprintf(&b, "# Mutation campaign: %s on %s\n\n", c.Set, c.Kernel)
	fmt.Fprintf(&b, "Command: `%s`\n\n", c.Command)
	fmt.Fprintf(&b, "Tree: %s (commit %s), file %s, config %s. Set: %d mutants; ", c.Kernel, short(c.Commit), c.File, c.Config, c.SetSize)
	if c.Seed != 0 {
		fmt.Fprintf(&b, "sample of %d, seed %d.\n\n", len(c.Sample), c.Seed)
	} else {
		fmt.Fprintf(&b, "%d chosen.\n\n", len(c.Sample))
	}
	fmt.Fprintf(&b, "Done %d of %d.", len(recs), len(c.Sample))
	for _, s := range []string{statusKilled, statusCrashed, statusHung, statusBuildFail, statusEquivalent, statusSurvived, statusError} {
		fmt.Fprintf(&b, " %s %d;", s, counts[s])
	}
	b.WriteString("\n")
	if len(byTier) > 0 {
		var ts []string
		for _, t := range append(slices.Clone(c.Tiers), identicalObject) {
			if byTier[t] > 0 {
				ts = append(ts, fmt.Sprintf("%s %d", t, byTier[t]))
			}
		}
		fmt.Fprintf(&b, "Decided by tier: %s.\n", strings.Join(ts, ", "))
	}
	if len(recs) > 0 {
		fmt.Fprintf(&b, "Time: %.0f s in all, %.0f s per mutant", total, total/float64(len(recs)))
		if nKS > 0 {
			fmt.Fprintf(&b, ", %.0f s per killed or surviving mutant", killedOrSurvived/float64(nKS))
		}
		b.WriteString(".\n")
	}
	b.WriteString("\n| mutant | line | change | status | tier | what |\n|---|---|---|---|---|---|\n")
	for _, id := range c.Sample {
		rec, ok := recs[id]
		if !ok {
			fmt.Fprintf(&b, "| `%s` | | | not run yet | | |\n", id)
			continue
		}
		what := ""
		switch rec.Status {
		case statusBuildFail:
			if len(rec.BuildErrors) > 0 {
				what = rec.BuildErrors[0]
			}
		case statusEquivalent:
			what = rec.Equivalence
		default:
			for _, t := range rec.Tiers {
				if t.Tier == rec.DecidedBy || (rec.DecidedBy == "" && t.Status != "not run") {
					what = t.Detail
				}
			}
		}
		fmt.Fprintf(&b, "| `%s` | %d | `%s` → `%s` | %s | %s | %s |\n", id, rec.Line, cell(rec.Orig), cell(rec.Repl), rec.Status, rec.DecidedBy, cell(what))
	}
	return writeSync(filepath.Join(r.dir, "table.md"), []byte(b.String()))
}

func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return strings.NewReplacer("|", `\|`, "`", "'").Replace(s)
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// commit commits the results directory in the git repository it is in,
// so that a campaign interrupted on one machine goes on on another.
func (r resultsDir) commit(msg string) error {
	add := exec.Command("git", "add", "--", ".")
	add.Dir = r.dir
	if out, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("git add: %v: %s", err, out)
	}
	ci := exec.Command("git", "commit", "-q", "-m", msg, "--", ".")
	ci.Dir = r.dir
	if out, err := ci.CombinedOutput(); err != nil {
		return fmt.Errorf("git commit: %v: %s", err, out)
	}
	return nil
}

// sortedIDs returns the keys in order.
func sortedIDs(m map[string]record) []string {
	var ids []string
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
