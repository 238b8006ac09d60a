// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"

	"nlmcast/bench/internal/kmem"
	"nlmcast/bench/internal/report"
)

// evidenceDir holds the recorded campaigns (evidence/README.md).
const evidenceDir = "../evidence/bench"

// Every recorded results directory re-analyses to the tables it holds,
// byte for byte, as `netlink_mcast_bench -analyze DIR` prints them: the
// figures quoted from it are what its samples give with today's analysis.
func TestRecordedResultsReanalyse(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(evidenceDir, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded results under %s (%v)", evidenceDir, err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			var want []byte
			for _, name := range []string{report.TableFile, kmem.TableFile} {
				if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
					want = append(want, b...)
				}
			}
			if len(want) == 0 {
				t.Fatalf("%s has neither %s nor %s", dir, report.TableFile, kmem.TableFile)
			}
			got, err := reanalyzeResults(dir, report.Options{Seed: report.DefaultSeed, Reps: report.DefaultReps})
			if err != nil {
				t.Fatalf("-analyze %s: %v", dir, err)
			}
			if got != string(want) {
				t.Errorf("-analyze %s differs from its recorded tables:\n--- recorded\n%s\n--- now\n%s", dir, want, got)
			}
		})
	}
}
