// SPDX-License-Identifier: GPL-2.0

// Package report turns the bench's raw samples into its results: the table
// laid out like the cover letter's (median U, P0, P1, P0/U %, P1/U %) with
// 95 % bootstrap intervals, the thread CPU and userspace share, the sweep's
// fitted cost per candidate, an SVG plot of the changes, and the samples in
// Go's benchmark format for benchstat. The same samples always give the
// same bytes.
package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"nlmcast/bench/internal/sample"
	"nlmcast/stats"
)

// Defaults of the analysis: the letter's 10000 replicates, a fixed seed.
const (
	DefaultSeed = 1
	DefaultReps = 10000
)

// Options are the bootstrap's parameters.
type Options struct {
	Seed uint64
	Reps int
}

// States in table order.
var States = []string{"U", "P0", "P1"}

// metric picks one number out of a sample.
type metric func(sample.Sample) float64

func wall(s sample.Sample) float64   { return float64(s.WallNS) }
func thread(s sample.Sample) float64 { return float64(s.ThreadNS) }

// Analysis is everything the table shows.
type Analysis struct {
	opts    Options
	icount  bool
	total   int
	scenes  []string
	byScene map[string]map[string][]sample.Sample // scene -> state -> samples
	states  []string                              // states present, in table order
	info    map[string]string                     // state -> kernel, image and design
}

// Analyze groups the formal samples (warm-ups left out).
func Analyze(all []sample.Sample, opts Options) (*Analysis, error) {
	a := &Analysis{opts: opts, byScene: map[string]map[string][]sample.Sample{}, info: map[string]string{}}
	seenIcount := map[bool]bool{}
	present := map[string]bool{}
	for _, s := range all {
		if s.Warmup {
			continue
		}
		seenIcount[s.Icount] = true
		a.icount = s.Icount
		if a.byScene[s.Scene] == nil {
			a.byScene[s.Scene] = map[string][]sample.Sample{}
			a.scenes = append(a.scenes, s.Scene)
		}
		a.byScene[s.Scene][s.State] = append(a.byScene[s.Scene][s.State], s)
		present[s.State] = true
		a.total++
	}
	if len(seenIcount) > 1 {
		return nil, fmt.Errorf("the samples mix icount and wall-clock runs: analyze them apart")
	}
	if a.total == 0 {
		return nil, fmt.Errorf("no formal samples")
	}
	for _, st := range States {
		if present[st] {
			a.states = append(a.states, st)
		}
	}
	for _, st := range a.states {
		a.info[st] = describeState(all, st)
	}
	return a, nil
}

// describeState says which kernel and how many boots, rounds and samples.
func describeState(all []sample.Sample, state string) string {
	kernels := map[string]bool{}
	boots := map[int]bool{}
	rounds := map[[3]int]bool{} // boot, round, 0
	perRound := map[[2]int]int{}
	var scene string
	for _, s := range all {
		if s.State != state || s.Warmup {
			continue
		}
		k := s.Kernel
		if s.Image != "" {
			k += " (" + s.Image + ")"
		}
		kernels[k] = true
		boots[s.Boot] = true
		if scene == "" {
			scene = s.Scene
		}
		if s.Scene == scene {
			rounds[[3]int{s.Boot, s.Round}] = true
			perRound[[2]int{s.Boot, s.Round}]++
		}
	}
	maxPer := 0
	for _, c := range perRound {
		maxPer = max(maxPer, c)
	}
	ks := sortedKeys(kernels)
	return fmt.Sprintf("%s; %d boot(s) x %d round(s) x %d sample(s) per scene", strings.Join(ks, ", "),
		len(boots), len(rounds)/max(1, len(boots)), maxPer)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func obs(samples []sample.Sample, m metric) []stats.Obs {
	o := make([]stats.Obs, len(samples))
	for i, s := range samples {
		o[i] = stats.Obs{Boot: s.Boot, Round: s.Round, Value: m(s)}
	}
	return o
}

func (a *Analysis) median(scene, state string, m metric) float64 {
	ss := a.byScene[scene][state]
	if len(ss) == 0 {
		return math.NaN()
	}
	return stats.Median(stats.Values(obs(ss, m)))
}

// change is treat against base in one scene, with its interval.
func (a *Analysis) change(scene, base, treat, what string, m metric) (stats.Interval, bool) {
	b, t := a.byScene[scene][base], a.byScene[scene][treat]
	if len(b) == 0 || len(t) == 0 {
		return stats.Interval{}, false
	}
	rng := stats.Rng(a.opts.Seed, scene+"/"+treat+"/"+base+"/"+what)
	return stats.RatioChange(obs(b, wallOr(m)), obs(t, wallOr(m)), a.opts.Reps, rng)
}

func wallOr(m metric) metric {
	if m == nil {
		return wall
	}
	return m
}

// unit is the column unit: milliseconds, or millions of instructions
// under icount (one guest nanosecond is one instruction there).
func (a *Analysis) unit() string {
	if a.icount {
		return "Minsn"
	}
	return "ms"
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v/1e6)
}

func pct(iv stats.Interval, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%+.2f", 100*iv.Point)
}

func interval(iv stats.Interval, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%+.2f%% [%+.2f%%, %+.2f%%]", 100*iv.Point, 100*iv.Lo, 100*iv.Hi)
}

func (a *Analysis) labelWidth() int {
	w := len("Scenario")
	for _, s := range a.scenes {
		w = max(w, len(s))
	}
	return w + 2
}

// Table is the text the command prints; -analyze prints the same bytes.
func (a *Analysis) Table() string {
	var b strings.Builder
	u := a.unit()
	fmt.Fprintf(&b, "netlink_mcast_bench: %d formal samples (warm-ups left out)\n", a.total)
	if a.icount {
		b.WriteString("clock: QEMU -icount shift=0,sleep=off: the guest clock advances 1 ns per guest instruction;\n" +
			"       figures are millions of guest instructions (Minsn), not time\n")
	} else {
		b.WriteString("clock: CLOCK_MONOTONIC wall time and CLOCK_THREAD_CPUTIME_ID, in ms\n")
	}
	for _, st := range a.states {
		fmt.Fprintf(&b, "%-3s %s\n", st+":", a.info[st])
	}
	lw := a.labelWidth()
	fmt.Fprintf(&b, "\nMedian wall per work unit; negative changes mean less %s:\n\n", map[bool]string{true: "instructions", false: "time"}[a.icount])
	fmt.Fprintf(&b, "%-*s%11s%11s%11s%9s%9s%10s\n", lw, "Scenario", "U "+u, "P0 "+u, "P1 "+u, "P0/U %", "P1/U %", "P1/P0 %")
	for _, sc := range a.scenes {
		p0, ok0 := a.change(sc, "U", "P0", "wall", wall)
		p1, ok1 := a.change(sc, "U", "P1", "wall", wall)
		pp, okp := a.change(sc, "P0", "P1", "wall", wall)
		fmt.Fprintf(&b, "%-*s%11s%11s%11s%9s%9s%10s\n", lw, sc,
			num(a.median(sc, "U", wall)), num(a.median(sc, "P0", wall)), num(a.median(sc, "P1", wall)),
			pct(p0, ok0), pct(p1, ok1), pct(pp, okp))
	}
	fmt.Fprintf(&b, "\nMedian changes with 95%% intervals (bootstrap over paired boots and whole rounds,\n%d replicates, seed %d):\n", a.opts.Reps, a.opts.Seed)
	for _, sc := range a.scenes {
		var lines []string
		for _, cmp := range [][2]string{{"U", "P0"}, {"U", "P1"}, {"P0", "P1"}} {
			w, okw := a.change(sc, cmp[0], cmp[1], "wall", wall)
			t, okt := a.change(sc, cmp[0], cmp[1], "thread", thread)
			if !okw && !okt {
				continue
			}
			lines = append(lines, fmt.Sprintf("    %s/%s: wall %s; thread CPU %s\n", cmp[1], cmp[0], interval(w, okw), interval(t, okt)))
		}
		if len(lines) == 0 {
			fmt.Fprintf(&b, "  %s: one state only, nothing to compare\n", sc)
			continue
		}
		fmt.Fprintf(&b, "  %s:\n%s", sc, strings.Join(lines, ""))
	}
	fmt.Fprintf(&b, "\nThread CPU of the sender(s) (median, %s) and userspace share of it\n(sum of user / sum of user+system over the state's samples, getrusage(RUSAGE_THREAD);\na tick-sampled split, so only the sum over many samples is meaningful):\n\n", u)
	fmt.Fprintf(&b, "%-*s%11s%11s%11s%9s%9s%9s\n", lw, "Scenario", "U cpu", "P0 cpu", "P1 cpu", "U usr%", "P0 usr%", "P1 usr%")
	for _, sc := range a.scenes {
		fmt.Fprintf(&b, "%-*s%11s%11s%11s%9s%9s%9s\n", lw, sc,
			num(a.median(sc, "U", thread)), num(a.median(sc, "P0", thread)), num(a.median(sc, "P1", thread)),
			share100(a.userShare(sc, "U")), share100(a.userShare(sc, "P0")), share100(a.userShare(sc, "P1")))
	}
	b.WriteString(a.perOpTable())
	b.WriteString(a.sweepTable())
	return b.String()
}

// userShare is the state's userspace share of thread CPU: the rusage split
// is sampled at the scheduler tick, so per-sample shares of short units
// are 0 or large; the ratio of sums over all samples is the estimate.
func (a *Analysis) userShare(scene, state string) float64 {
	var user, sys int64
	for _, s := range a.byScene[scene][state] {
		user += s.UserNS
		sys += s.SysNS
	}
	if user+sys == 0 {
		return math.NaN()
	}
	return float64(user) / float64(user+sys)
}

func share100(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*v)
}
