// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"slices"

	"nlmcast/bench/internal/kmem"
	"nlmcast/bench/internal/report"
	"nlmcast/bench/internal/sample"
)

// writeResults writes the results directory dir: the samples' files when
// the scenes took samples, and memory.jsonl and memory.txt when memory
// scenes ran, each record marked with its scene's verdict as the samples
// are. It returns the tables.
func writeResults(dir string, samples []sample.Sample, verdicts map[string]string, opts report.Options) (string, error) {
	memory.mu.Lock()
	records := kmem.Mark(slices.Clone(memory.records), verdicts)
	memory.mu.Unlock()
	var tables string
	if len(samples) > 0 || len(records) == 0 {
		t, err := report.WriteDir(dir, samples, opts)
		if err != nil {
			return "", err
		}
		tables = t
	}
	if len(records) > 0 {
		t, err := kmem.WriteDir(dir, records)
		if err != nil {
			return "", err
		}
		tables += t
	}
	return tables, nil
}

// reanalyzeResults is the tables of results directory dir (its samples,
// its memory records, or both); it writes nothing.
func reanalyzeResults(dir string, opts report.Options) (string, error) {
	if !exists(filepath.Join(dir, kmem.RecordsFile)) {
		return report.Reanalyze(dir, opts)
	}
	var tables string
	if exists(filepath.Join(dir, report.SamplesFile)) {
		t, err := report.Reanalyze(dir, opts)
		if err != nil {
			return "", err
		}
		tables = t
	}
	m, err := kmem.Reanalyze(dir)
	return tables + m, err
}

// copyResults writes the results directory to from the records of from.
func copyResults(from, to string, opts report.Options) error {
	if !exists(filepath.Join(from, kmem.RecordsFile)) || exists(filepath.Join(from, report.SamplesFile)) {
		samples, err := report.ReadDir(from)
		if err != nil {
			return err
		}
		if _, err := report.WriteDir(to, samples, opts); err != nil {
			return err
		}
	}
	if exists(filepath.Join(from, kmem.RecordsFile)) {
		records, err := kmem.ReadDir(from)
		if err != nil {
			return err
		}
		if _, err := kmem.WriteDir(to, records); err != nil {
			return err
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
