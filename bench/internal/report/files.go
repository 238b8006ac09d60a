// SPDX-License-Identifier: GPL-2.0

package report

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"nlmcast/bench/internal/sample"
)

// File names in a results directory.
const (
	SamplesFile = "samples.jsonl"
	TableFile   = "table.txt"
	PlotFile    = "changes.svg"
)

// WriteDir writes the results directory dir from samples: samples.jsonl
// (every sample as given, marked ones included), the table, the SVG and
// one benchfmt file per state present; with no samples, an empty
// samples.jsonl and a table that says so. It returns the table. It never
// reads what dir held before: CheckNew keeps a run from writing over an
// earlier one's results.
func WriteDir(dir string, samples []sample.Sample, opts Options) (string, error) {
	a, err := analyze(samples, opts)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := sample.WriteJSONL(&b, samples); err != nil {
		return "", err
	}
	table := a.Table()
	files := map[string]string{SamplesFile: b.String(), TableFile: table, PlotFile: a.SVG()}
	for _, st := range a.states {
		files["bench-"+st+".txt"] = a.Benchfmt(st)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(files[name]), 0o644); err != nil {
			return "", err
		}
	}
	return table, nil
}

// ReadDir reads the samples of results directory dir.
func ReadDir(dir string) ([]sample.Sample, error) {
	path := filepath.Join(dir, SamplesFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	samples, err := sample.ReadJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return samples, nil
}

// Reanalyze is the table of results directory dir, from its samples; it
// writes nothing.
func Reanalyze(dir string, opts Options) (string, error) {
	samples, err := ReadDir(dir)
	if err != nil {
		return "", err
	}
	a, err := analyze(samples, opts)
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, SamplesFile), err)
	}
	return a.Table(), nil
}

// CheckNew makes sure that dir can become a results directory before
// anything is measured: it creates dir if need be, refuses one that holds
// an earlier run's results (their table would be taken for this run's),
// and writes and removes a probe file in it.
func CheckNew(dir string) error {
	for _, name := range []string{SamplesFile, TableFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s already holds the results of an earlier run (%s): give a new directory", dir, name)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	probe, err := os.CreateTemp(dir, ".probe-")
	if err != nil {
		return fmt.Errorf("results directory %s is not writable: %w", dir, err)
	}
	name := probe.Name()
	_, werr := probe.WriteString("probe\n")
	cerr := probe.Close()
	os.Remove(name)
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("results directory %s is not writable: %w", dir, err)
	}
	return nil
}

// benchName is a scene's benchmark name: benchstat reads "-N" at the end
// of a name as GOMAXPROCS and "/" as a sub-benchmark, so both become "_".
func benchName(scene string) string {
	r := strings.NewReplacer("-", "_", "/", "_", "[", "_", "]", "", ",", "_", "=", "")
	return "Benchmark" + r.Replace(scene)
}

// Benchfmt is one state's samples in Go's benchmark format, one line per
// formal sample (one op = one work unit), for benchstat.
func (a *analysis) Benchfmt(state string) string {
	var b strings.Builder
	unit := "ns"
	if a.icount {
		unit = "insn" // one guest nanosecond is one instruction under icount
	}
	// The state and kernel are a comment, not configuration keys: keys
	// that differ would keep benchstat from putting the states side by side.
	// goarch is the samples' own (none when they do not record it).
	b.WriteString("goos: linux\n")
	if arch := a.arch(); arch != "" {
		fmt.Fprintf(&b, "goarch: %s\n", arch)
	}
	fmt.Fprintf(&b, "pkg: nlmcast/bench\n# state %s: %s\n", state, a.info[state])
	for _, sc := range a.scenes {
		for _, s := range a.byScene[sc][state] {
			fmt.Fprintf(&b, "%s 1 %d %s/op %d thread-%s/op %d user-%s/op %d sys-%s/op\n",
				benchName(sc), s.WallNS, unit, s.ThreadNS, unit, s.UserNS, unit, s.SysNS, unit)
		}
	}
	return b.String()
}

// arch is the GOARCH every sample records, or "".
func (a *analysis) arch() string {
	archs := map[string]bool{}
	for _, sc := range a.scenes {
		for _, ss := range a.byScene[sc] {
			for _, s := range ss {
				archs[s.Arch] = true
			}
		}
	}
	if len(archs) != 1 {
		return ""
	}
	for arch := range archs {
		return arch
	}
	return ""
}
