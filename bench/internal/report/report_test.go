// SPDX-License-Identifier: GPL-2.0

package report

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nlmcast/bench/internal/sample"
)

// samples: two boot pairs, two rounds per state, three samples per round,
// every U unit at 100 ms, P0 at 110 ms and P1 at 20 ms.
func synthetic() []sample.Sample {
	var out []sample.Sample
	for boot := 0; boot < 2; boot++ {
		for _, st := range []struct {
			state string
			ms    int64
		}{{"U", 100}, {"P0", 110}, {"P1", 20}} {
			for round := 0; round < 2; round++ {
				for k := 0; k <= 3; k++ {
					out = append(out, sample.Sample{Kernel: "k", State: st.state, Boot: boot, Round: round, Sample: k,
						Warmup: k == 0, Scene: "T1-n900-d0", N: 900, WallNS: st.ms * 1e6, ThreadNS: st.ms * 9e5,
						UserNS: st.ms * 1e5, SysNS: st.ms * 8e5, Ops: 2640})
				}
			}
		}
	}
	// A warm-up far off must not count.
	out[0].WallNS = 1e12
	return out
}

// expectTable fails t for each of wants that table lacks.
func expectTable(t *testing.T, table string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestTableKnownAnswer(t *testing.T) {
	a, err := analyze(synthetic(), Options{Seed: 1, Reps: 1000})
	if err != nil {
		t.Fatal(err)
	}
	expectTable(t, a.Table(),
		"T1-n900-d0      100.000    110.000     20.000   +10.00   -80.00    -81.82",
		"P0/U: wall +10.00% [+10.00%, +10.00%]; thread CPU +10.00% [+10.00%, +10.00%]",
		"P1/U: wall -80.00% [-80.00%, -80.00%]",
		"U:  k; 2 boot(s) x 2 round(s) x 3 sample(s) per scene",
		"11.1", // user share 1/9
	)
	bf := a.Benchfmt("P1")
	if !strings.Contains(bf, "BenchmarkT1_n900_d0 1 20000000 ns/op 18000000 thread-ns/op") || strings.Count(bf, "\nBenchmark") != 12 {
		t.Errorf("benchfmt:\n%s", bf)
	}
	if svg := a.SVG(); !strings.HasPrefix(svg, "<svg") || strings.Count(svg, "<circle") != 2 {
		t.Errorf("svg: %s", svg)
	}
}

// -analyze on a results directory prints what the run printed, byte for
// byte, however often it runs, and writes nothing.
func TestReanalysisIsByteIdenticalAndReadOnly(t *testing.T) {
	dir := t.TempDir()
	first, err := WriteDir(dir, synthetic(), Options{Seed: DefaultSeed, Reps: 2000})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	for i := 0; i < 2; i++ {
		again, err := Reanalyze(dir, Options{Seed: DefaultSeed, Reps: 2000})
		if err != nil {
			t.Fatal(err)
		}
		if again != first {
			t.Fatalf("re-analysis %d differs:\n%s\n---\n%s", i, first, again)
		}
	}
	// Another seed gives another table, and still changes no file.
	if other, err := Reanalyze(dir, Options{Seed: 2, Reps: 100}); err != nil || !strings.Contains(other, "100 replicates\n(seed 2)") {
		t.Errorf("-seed 2 -reps 100: %v\n%s", err, other)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("Reanalyze changed the directory:\n%s\n---\n%s", before, after)
	}
}

// snapshot is every file of dir with its size, time and content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %d %v %x\n", e.Name(), info.Size(), info.ModTime().UnixNano(), sha256.Sum256(data))
	}
	return b.String()
}

// A run without a sample writes a results directory that says so: never
// the figures of a run before it. And CheckNew keeps a run from writing
// into an earlier run's directory at all.
func TestNoSamplesNoOldTable(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteDir(dir, synthetic(), Options{Seed: 1, Reps: 100}); err != nil {
		t.Fatal(err)
	}
	if err := CheckNew(dir); err == nil || !strings.Contains(err.Error(), "already holds the results of an earlier run") {
		t.Errorf("CheckNew on an earlier run's directory: %v", err)
	}
	table, err := WriteDir(dir, nil, Options{Seed: 1, Reps: 100})
	if err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(filepath.Join(dir, TableFile))
	jsonl, _ := os.ReadFile(filepath.Join(dir, SamplesFile))
	if !strings.Contains(table, "0 formal samples") || !strings.Contains(table, "nothing to analyse") ||
		strings.Contains(table, "T1-n900-d0") || string(written) != table || len(jsonl) != 0 {
		t.Errorf("with no samples: table\n%s\nsamples.jsonl %q", table, jsonl)
	}
}

func TestCheckNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := CheckNew(dir); err != nil {
		t.Fatalf("a new directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the probe stayed: %v", entries)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if err := CheckNew(filepath.Join(file, "out")); err == nil {
		t.Error("a directory under a regular file was accepted")
	}
}

// The samples of a scene run that did not pass stay in samples.jsonl,
// marked, and out of every figure; the table says which and why.
func TestFailedScenesAreLeftOut(t *testing.T) {
	in := synthetic()
	for _, s := range synthetic() {
		s.Scene = "C1-n0"
		s.WallNS *= 3
		if s.Boot == 1 && s.State == "P1" {
			// A stray delivery in one boot: P1 there fails.
			s.Failed = "not ok: state P1 round 1: socket f3 must receive nothing"
		}
		in = append(in, s)
	}
	dir := t.TempDir()
	table, err := WriteDir(dir, in, Options{Seed: 1, Reps: 500})
	if err != nil {
		t.Fatal(err)
	}
	expectTable(t, table,
		"netlink_mcast_bench: 66 formal samples (warm-ups left out)\n",
		"left out: 8 samples (warm-ups included) of scene runs that did not pass",
		"  C1-n0, boot 1, P1: 8 samples: not ok: state P1 round 1: socket f3 must receive nothing\n",
		"C1-n0           300.000    330.000     60.000   +10.00   -80.00    -81.82",
		// P1 is drawn from boot 0 alone now.
		"With 1 boot an interval resamples that boot's rounds only",
	)
	back, err := ReadDir(dir)
	if err != nil || len(back) != len(in) || back[len(back)-1].Failed == "" {
		t.Errorf("samples.jsonl: %d samples (want %d), the last marked %q; %v", len(back), len(in), back[len(back)-1].Failed, err)
	}
	if bf, _ := os.ReadFile(filepath.Join(dir, "bench-P1.txt")); strings.Count(string(bf), "BenchmarkC1_n0 ") != 6 {
		t.Errorf("bench-P1.txt holds the failed boot's samples:\n%s", bf)
	}
}

// One boot with one round per state cannot give an interval: the table
// and the SVG say so instead of printing [x, x]. Three boots give
// intervals with a note on what they cover.
func TestIntervalsThatCannotVaryAndCoverage(t *testing.T) {
	var one []sample.Sample
	for _, s := range synthetic() {
		if s.Boot == 0 && s.Round == 0 {
			s.WallNS += int64(s.Sample) * 1e6 // spread that a round resample would show
			one = append(one, s)
		}
	}
	a, err := analyze(one, Options{Seed: 1, Reps: 500})
	if err != nil {
		t.Fatal(err)
	}
	table := a.Table()
	if !strings.Contains(table, "P0/U: wall +9.80% (no interval: 1 boot x 1 round); thread CPU +10.00% (no interval: 1 boot x 1 round)") ||
		strings.Contains(table, "%]") || strings.Contains(table, "With 1 boot") {
		t.Errorf("1 boot x 1 round:\n%s", table)
	}
	if svg := a.SVG(); strings.Contains(svg, `stroke-width="2"`) || !strings.Contains(svg, "(no interval: 1 boot x 1 round)</title></circle>") {
		t.Errorf("svg draws an interval:\n%s", svg)
	}
	var three []sample.Sample
	for _, s := range synthetic() {
		if s.Boot != 0 {
			continue
		}
		for b := 0; b < 3; b++ {
			s.Boot = b
			three = append(three, s)
		}
	}
	a, err = analyze(three, Options{Seed: 1, Reps: 500})
	if err != nil {
		t.Fatal(err)
	}
	if table := a.Table(); !strings.Contains(table, "With 3 boots these are not 95 % intervals") ||
		!strings.Contains(table, "change about 75 % of the time (1 - 2^(1-3))") {
		t.Errorf("3 boots:\n%s", table)
	}
}

// The same sample twice (two runs with the same boot numbers merged) is
// refused: its rounds would be taken for one.
func TestDuplicateSamplesRefused(t *testing.T) {
	in := append(synthetic(), synthetic()[5])
	if _, err := analyze(in, Options{Seed: 1, Reps: 10}); err == nil || !strings.Contains(err.Error(), "is there twice") {
		t.Errorf("got %v", err)
	}
	if _, err := analyze(synthetic(), Options{Seed: 1, Reps: 0}); err == nil {
		t.Error("0 replicates accepted")
	}
	// Units of another size under the same name (-routes 660 beside 2640).
	mixed := synthetic()
	mixed[7].Ops = 660
	if _, err := analyze(mixed, Options{Seed: 1, Reps: 10}); err == nil || !strings.Contains(err.Error(), "mixes work units of [660 2640] operations") {
		t.Errorf("mixed units: %v", err)
	}
}

// benchfmt's goarch is the samples' own, and none when they do not say.
func TestBenchfmtArch(t *testing.T) {
	a, _ := analyze(synthetic(), Options{Seed: 1, Reps: 10})
	if bf := a.Benchfmt("U"); strings.Contains(bf, "goarch") {
		t.Errorf("unrecorded arch printed:\n%s", bf)
	}
	in := synthetic()
	for i := range in {
		in[i].Arch = "arm64"
	}
	a, _ = analyze(in, Options{Seed: 1, Reps: 10})
	if bf := a.Benchfmt("U"); !strings.HasPrefix(bf, "goos: linux\ngoarch: arm64\npkg: nlmcast/bench\n") {
		t.Errorf("arm64 samples:\n%s", bf)
	}
}

// A scene of two senders at once whose samples cannot show that they ran
// at once says so.
func TestParallelSceneNote(t *testing.T) {
	var in []sample.Sample
	for _, s := range synthetic() {
		s.Scene, s.Icount = "PAR-n900", true
		in = append(in, s)
	}
	a, _ := analyze(in, Options{Seed: 1, Reps: 10})
	if table := a.Table(); !strings.Contains(table, "PAR-n900: the samples do not record the guest's CPUs") {
		t.Errorf("icount, no CPU count:\n%s", table)
	}
	for i := range in {
		in[i].CPUs = 1
	}
	a, _ = analyze(in, Options{Seed: 1, Reps: 10})
	if table := a.Table(); !strings.Contains(table, "PAR-n900: measured on 1 CPU: its two senders took turns") || !strings.Contains(table, "; 1 CPU(s)\n") {
		t.Errorf("1 CPU:\n%s", table)
	}
	for i := range in {
		in[i].CPUs = 2
	}
	a, _ = analyze(in, Options{Seed: 1, Reps: 10})
	if table := a.Table(); strings.Contains(table, "PAR-n900: ") {
		t.Errorf("2 CPUs:\n%s", table)
	}
}

func TestSweepSlope(t *testing.T) {
	var in []sample.Sample
	for _, n := range []int{0, 100, 300} {
		for k := 1; k <= 2; k++ {
			// 10 ms plus 2640 notifications x n candidates x 5 ns.
			in = append(in, sample.Sample{State: "U", Scene: "SW-ord-n" + itoa(n), N: n, Sample: k,
				WallNS: 10e6 + int64(2640*n*5), Ops: 2640})
		}
	}
	a, err := analyze(in, Options{Seed: 1, Reps: 500})
	if err != nil {
		t.Fatal(err)
	}
	if tab := a.Table(); !strings.Contains(tab, "ordinary  n=0,100,300: U 5.00 (no interval: 1 boot x 1 round)") {
		t.Errorf("sweep:\n%s", tab)
	}
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+n/100)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10)))
}
