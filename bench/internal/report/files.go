// SPDX-License-Identifier: GPL-2.0

package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"nlmcast/bench/internal/sample"
)

// File names in a results directory.
const (
	SamplesFile = "samples.jsonl"
	TableFile   = "table.txt"
	PlotFile    = "changes.svg"
)

// WriteDir writes the results directory dir. With samples == nil it reads
// dir's samples.jsonl instead (re-analysis); otherwise it writes them
// there first. It returns the table.
func WriteDir(dir string, samples []sample.Sample, opts Options) (string, error) {
	path := filepath.Join(dir, SamplesFile)
	if samples == nil {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		samples, err = sample.ReadJSONL(f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		var b bytes.Buffer
		if err := sample.WriteJSONL(&b, samples); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return "", err
		}
	}
	a, err := Analyze(samples, opts)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	table := a.Table()
	files := map[string]string{TableFile: table, PlotFile: a.SVG()}
	for _, st := range a.states {
		files["bench-"+st+".txt"] = a.Benchfmt(st)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	return table, nil
}

// BenchName is a scene's benchmark name: benchstat reads "-N" at the end
// of a name as GOMAXPROCS and "/" as a sub-benchmark, so both become "_".
func BenchName(scene string) string {
	r := strings.NewReplacer("-", "_", "/", "_", "[", "_", "]", "", ",", "_", "=", "")
	return "Benchmark" + r.Replace(scene)
}

// Benchfmt is one state's samples in Go's benchmark format, one line per
// formal sample (one op = one work unit), for benchstat.
func (a *Analysis) Benchfmt(state string) string {
	var b strings.Builder
	unit := "ns"
	if a.icount {
		unit = "insn" // one guest nanosecond is one instruction under icount
	}
	// The state and kernel are a comment, not configuration keys: keys
	// that differ would keep benchstat from putting the states side by side.
	fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\npkg: nlmcast/bench\n# state %s: %s\n", state, a.info[state])
	for _, sc := range a.scenes {
		for _, s := range a.byScene[sc][state] {
			fmt.Fprintf(&b, "%s 1 %d %s/op %d thread-%s/op %d user-%s/op %d sys-%s/op\n",
				BenchName(sc), s.WallNS, unit, s.ThreadNS, unit, s.UserNS, unit, s.SysNS, unit)
		}
	}
	return b.String()
}
