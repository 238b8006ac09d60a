// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// argue turns a survivor an argument covers into an equivalent mutant, and
// leaves alone a survivor whose argument quotes another line or needs an
// option the build has, and a killed mutant with an argument.
func TestArgue(t *testing.T) {
	dir := t.TempDir()
	rd := resultsDir{dir: filepath.Join(dir, "out")}
	c := campaign{Command: "test", Set: "test", File: "x.c", Kernel: "6.1.192", Tiers: []string{"base"},
		Sample: []string{"f+1:del-call:1", "f+2:del-call:1", "f+3:del-call:1", "f+4:del-call:1"}}
	if err := rd.writeJSON(filepath.Join(rd.dir, "campaign.json"), c); err != nil {
		t.Fatal(err)
	}
	for _, r := range []record{
		{ID: "f+1:del-call:1", Source: "a();", Status: statusSurvived},
		{ID: "f+2:del-call:1", Source: "b();", Status: statusSurvived},
		{ID: "f+3:del-call:1", Source: "c();", Status: statusSurvived},
		{ID: "f+4:del-call:1", Source: "d();", Status: statusKilled, DecidedBy: "base"},
	} {
		if err := rd.writeJSON(rd.recordPath(r.ID), r); err != nil {
			t.Fatal(err)
		}
	}
	eq := filepath.Join(dir, "equivalent.txt")
	config := filepath.Join(dir, ".config")
	os.WriteFile(eq, []byte(`id: f+1:del-call:1
code: a();
unset: CONFIG_OFF
builds: tiny
reason: a() does nothing here.

id: f+2:del-call:1
code: b(x);
builds: tiny
reason: quotes another line.

id: f+3:del-call:1
code: c();
unset: CONFIG_ON
builds: tiny
reason: needs an option the build has.

id: f+4:del-call:1
code: d();
builds: tiny
reason: killed anyway.
`), 0o644)
	os.WriteFile(config, []byte("CONFIG_ON=y\n# CONFIG_OFF is not set\n"), 0o644)
	n, err := argue(rd, eq, config)
	if err != nil || n != 1 {
		t.Fatalf("argue: %d changed, %v; want 1", n, err)
	}
	recs, err := rd.records()
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"f+1:del-call:1": statusEquivalent, "f+2:del-call:1": statusSurvived,
		"f+3:del-call:1": statusSurvived, "f+4:del-call:1": statusKilled} {
		if recs[id].Status != want {
			t.Errorf("%s: %s, want %s", id, recs[id].Status, want)
		}
	}
	if r := recs["f+1:del-call:1"]; r.Equivalence != "a() does nothing here." {
		t.Errorf("reason %q", r.Equivalence)
	}
	table, _ := os.ReadFile(filepath.Join(rd.dir, "table.md"))
	if !strings.Contains(string(table), "killed 1; crashed 0; hung 0; build-failure 0; equivalent 1; survived 2;") {
		t.Errorf("table.md:\n%s", table)
	}
}
