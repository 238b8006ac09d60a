// SPDX-License-Identifier: GPL-2.0

package report

import (
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

func TestTableKnownAnswer(t *testing.T) {
	a, err := Analyze(synthetic(), Options{Seed: 1, Reps: 1000})
	if err != nil {
		t.Fatal(err)
	}
	table := a.Table()
	for _, want := range []string{
		"T1-n900-d0      100.000    110.000     20.000   +10.00   -80.00    -81.82",
		"P0/U: wall +10.00% [+10.00%, +10.00%]; thread CPU +10.00% [+10.00%, +10.00%]",
		"P1/U: wall -80.00% [-80.00%, -80.00%]",
		"U:  k; 2 boot(s) x 2 round(s) x 3 sample(s) per scene",
		"11.1", // user share 1/9
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	bf := a.Benchfmt("P1")
	if !strings.Contains(bf, "BenchmarkT1_n900_d0 1 20000000 ns/op 18000000 thread-ns/op") || strings.Count(bf, "\nBenchmark") != 12 {
		t.Errorf("benchfmt:\n%s", bf)
	}
	if svg := a.SVG(); !strings.HasPrefix(svg, "<svg") || strings.Count(svg, "<circle") != 2 {
		t.Errorf("svg: %s", svg)
	}
}

// -analyze on a results directory prints what the run printed, byte for
// byte, however often it runs.
func TestReanalysisIsByteIdentical(t *testing.T) {
	dir := t.TempDir()
	first, err := WriteDir(dir, synthetic(), Options{Seed: DefaultSeed, Reps: 2000})
	if err != nil {
		t.Fatal(err)
	}
	svg1, _ := os.ReadFile(filepath.Join(dir, PlotFile))
	for i := 0; i < 2; i++ {
		again, err := WriteDir(dir, nil, Options{Seed: DefaultSeed, Reps: 2000})
		if err != nil {
			t.Fatal(err)
		}
		if again != first {
			t.Fatalf("re-analysis %d differs:\n%s\n---\n%s", i, first, again)
		}
	}
	svg2, _ := os.ReadFile(filepath.Join(dir, PlotFile))
	if string(svg1) != string(svg2) {
		t.Error("the SVG changed on re-analysis")
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
	a, err := Analyze(in, Options{Seed: 1, Reps: 500})
	if err != nil {
		t.Fatal(err)
	}
	if tab := a.Table(); !strings.Contains(tab, "ordinary  n=0,100,300: U 5.00 [5.00, 5.00]") {
		t.Errorf("sweep:\n%s", tab)
	}
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+n/100)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10)))
}
