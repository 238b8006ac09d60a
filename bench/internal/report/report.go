// SPDX-License-Identifier: GPL-2.0

// Package report turns the bench's raw samples into its results: the table
// laid out like the cover letter's (median U, P0, P1, P0/U %, P1/U %) with
// bootstrap intervals and what they can cover, the scene runs that did not
// pass (left out, and said), the thread CPU and userspace share, the sweep's
// fitted cost per candidate, an SVG plot of the changes, and the samples in
// Go's benchmark format for benchstat. The same samples always give the
// same bytes.
package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
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

// stateOrder is the states in table order.
var stateOrder = []string{"U", "P0", "P1"}

// metric picks one number out of a sample.
type metric func(sample.Sample) float64

func wall(s sample.Sample) float64   { return float64(s.WallNS) }
func thread(s sample.Sample) float64 { return float64(s.ThreadNS) }

// analysis is everything the table shows.
type analysis struct {
	opts    Options
	icount  bool
	total   int
	scenes  []string
	byScene map[string]map[string][]sample.Sample // scene -> state -> samples
	states  []string                              // states present, in table order
	info    map[string]string                     // state -> kernel, image and design
	leftOut []leftOut                             // samples of scene runs that did not pass
}

// leftOut is one scene run (a scene in one boot) that did not pass: its
// samples stay in samples.jsonl, marked, and out of every figure.
type leftOut struct {
	scene, image, why string
	boot              int
	states            []string
	samples           int
}

// analyze groups the formal samples (warm-ups left out) of the scenes
// that passed; the samples marked Failed are counted apart, by scene run.
// The same sample twice (two runs with the same boot numbers, merged) is
// an error: its rounds would be taken for one.
func analyze(all []sample.Sample, opts Options) (*analysis, error) {
	if opts.Reps < 1 {
		return nil, fmt.Errorf("%d bootstrap replicates: want at least 1", opts.Reps)
	}
	a := &analysis{opts: opts, byScene: map[string]map[string][]sample.Sample{}, info: map[string]string{}}
	seenIcount := map[bool]bool{}
	present := map[string]bool{}
	type key struct {
		scene, state, kernel, image string
		boot, round, sample         int
	}
	seen := map[key]bool{}
	var kept []sample.Sample
	for _, s := range all {
		k := key{s.Scene, s.State, s.Kernel, s.Image, s.Boot, s.Round, s.Sample}
		if seen[k] {
			return nil, fmt.Errorf("scene %s state %s boot %d round %d sample %d is there twice: the samples of two runs with the same boot numbers? (vmbench -first-boot numbers the boots of a later run apart)",
				s.Scene, s.State, s.Boot, s.Round, s.Sample)
		}
		seen[k] = true
		if s.Failed != "" {
			a.leaveOut(s)
			continue
		}
		kept = append(kept, s)
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
	for _, sc := range a.scenes {
		ops := map[int]bool{}
		for _, ss := range a.byScene[sc] {
			for _, s := range ss {
				ops[s.Ops] = true
			}
		}
		if len(ops) > 1 {
			return nil, fmt.Errorf("scene %s mixes work units of %v operations: analyze them apart", sc, slices.Sorted(maps.Keys(ops)))
		}
	}
	for _, st := range stateOrder {
		if present[st] {
			a.states = append(a.states, st)
		}
	}
	for _, st := range a.states {
		a.info[st] = describeState(kept, st)
	}
	return a, nil
}

// leaveOut counts s with the other samples of its scene run.
func (a *analysis) leaveOut(s sample.Sample) {
	for i := range a.leftOut {
		l := &a.leftOut[i]
		if l.scene == s.Scene && l.boot == s.Boot && l.image == s.Image && l.why == s.Failed {
			l.samples++
			if !slices.Contains(l.states, s.State) {
				l.states = append(l.states, s.State)
			}
			return
		}
	}
	a.leftOut = append(a.leftOut, leftOut{scene: s.Scene, image: s.Image, why: s.Failed, boot: s.Boot, states: []string{s.State}, samples: 1})
}

// describeState says which kernel and how many boots, rounds and samples.
func describeState(all []sample.Sample, state string) string {
	kernels := map[string]bool{}
	boots := map[int]bool{}
	rounds := map[[3]int]bool{} // boot, round, 0
	perRound := map[[2]int]int{}
	cpuCounts := map[int]bool{}
	var scene string
	for _, s := range all {
		if s.State != state || s.Warmup {
			continue
		}
		cpuCounts[s.CPUs] = true
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
	cpus := ""
	if len(cpuCounts) == 1 {
		for c := range cpuCounts {
			if c > 0 {
				cpus = fmt.Sprintf("; %d CPU(s)", c)
			}
		}
	}
	return fmt.Sprintf("%s; %d boot(s) x %d round(s) x %d sample(s) per scene%s", strings.Join(ks, ", "),
		len(boots), len(rounds)/max(1, len(boots)), maxPer, cpus)
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

func (a *analysis) median(scene, state string, m metric) float64 {
	ss := a.byScene[scene][state]
	if len(ss) == 0 {
		return math.NaN()
	}
	return stats.Median(stats.Values(obs(ss, m)))
}

// change is treat against base in one scene, with its interval.
func (a *analysis) change(scene, base, treat, what string, m metric) (stats.Interval, bool) {
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
func (a *analysis) unit() string {
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
	if iv.Fixed {
		return fmt.Sprintf("%+.2f%% %s", 100*iv.Point, noInterval)
	}
	return fmt.Sprintf("%+.2f%% [%+.2f%%, %+.2f%%]", 100*iv.Point, 100*iv.Lo, 100*iv.Hi)
}

// noInterval stands where an interval cannot vary: with one boot and one
// round every replicate is the same resample.
const noInterval = "(no interval: 1 boot x 1 round)"

// coverageNote says how far from 95 % the intervals of the given boot
// counts are (stats.Coverage), or "" when none is.
func coverageNote(boots map[int]bool) string {
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(boots)) {
		switch {
		case n == 1:
			b.WriteString("With 1 boot an interval resamples that boot's rounds only: it is the spread\n" +
				"between rounds, and says nothing of how another boot would differ.\n")
		case stats.Coverage(n) < 0.95:
			fmt.Fprintf(&b, "With %d boots these are not 95 %% intervals: the boots are the resampling unit, an\n"+
				"interval is about the range of the %d boots' own changes, and that contains the true\n"+
				"change about %.0f %% of the time (1 - 2^(1-%d)). Read it as the spread between boots.\n",
				n, n, 100*stats.Coverage(n), n)
		}
	}
	return b.String()
}

func (a *analysis) labelWidth() int {
	w := len("Scenario")
	for _, s := range a.scenes {
		w = max(w, len(s))
	}
	return w + 2
}

// Table is the text the command prints; -analyze prints the same bytes.
func (a *analysis) Table() string {
	var b strings.Builder
	u := a.unit()
	fmt.Fprintf(&b, "netlink_mcast_bench: %d formal samples (warm-ups left out)\n", a.total)
	if len(a.leftOut) > 0 {
		n := 0
		for _, l := range a.leftOut {
			n += l.samples
		}
		fmt.Fprintf(&b, "left out: %d samples (warm-ups included) of scene runs that did not pass, kept in\n"+
			"samples.jsonl with the reason (\"failed\"):\n", n)
		for _, l := range a.leftOut {
			img := ""
			if l.image != "" {
				img = " (" + l.image + ")"
			}
			fmt.Fprintf(&b, "  %s, boot %d%s, %s: %d samples: %s\n", l.scene, l.boot, img, strings.Join(l.states, " "), l.samples, l.why)
		}
	}
	if a.icount {
		b.WriteString("clock: QEMU -icount shift=0,sleep=off: the guest clock advances 1 ns per guest instruction;\n" +
			"       figures are millions of guest instructions (Minsn), not time\n")
	} else {
		b.WriteString("clock: CLOCK_MONOTONIC wall time and CLOCK_THREAD_CPUTIME_ID, in ms\n")
	}
	for _, st := range a.states {
		fmt.Fprintf(&b, "%-3s %s\n", st+":", a.info[st])
	}
	if a.total == 0 {
		b.WriteString("\nNo formal sample of a scene that passed: nothing to analyse.\n")
		return b.String()
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
	var changes strings.Builder
	boots := map[int]bool{}
	for _, sc := range a.scenes {
		var lines []string
		for _, cmp := range [][2]string{{"U", "P0"}, {"U", "P1"}, {"P0", "P1"}} {
			w, okw := a.change(sc, cmp[0], cmp[1], "wall", wall)
			t, okt := a.change(sc, cmp[0], cmp[1], "thread", thread)
			if !okw && !okt {
				continue
			}
			for _, iv := range []stats.Interval{w, t} {
				if !iv.Fixed && iv.Boots > 0 {
					boots[iv.Boots] = true
				}
			}
			lines = append(lines, fmt.Sprintf("    %s/%s: wall %s; thread CPU %s\n", cmp[1], cmp[0], interval(w, okw), interval(t, okt)))
		}
		if len(lines) == 0 {
			fmt.Fprintf(&changes, "  %s: one state only, nothing to compare\n", sc)
			continue
		}
		fmt.Fprintf(&changes, "  %s:\n%s", sc, strings.Join(lines, ""))
	}
	fmt.Fprintf(&b, "\nMedian changes with bootstrap intervals: the 2.5 %% and 97.5 %% quantiles of %d replicates\n"+
		"(seed %d), each drawing the paired boots and, inside each drawn boot, whole rounds.\n%s", a.opts.Reps, a.opts.Seed, coverageNote(boots))
	b.WriteString(changes.String())
	b.WriteString(a.parallelNote())
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

// parallelPrefix names the scenes whose senders run at once.
const parallelPrefix = "PAR-"

// parallelNote says, for a scene of two senders at once, when its samples
// cannot show that they ran at once: taken on one CPU, or (samples of an
// older bench) under icount without a CPU count, where vmbench's guest
// had one CPU unless -smp said otherwise.
func (a *analysis) parallelNote() string {
	var b strings.Builder
	for _, sc := range a.scenes {
		if !strings.HasPrefix(sc, parallelPrefix) {
			continue
		}
		cpus := map[int]bool{}
		for _, ss := range a.byScene[sc] {
			for _, s := range ss {
				cpus[s.CPUs] = true
			}
		}
		switch {
		case cpus[1]:
			fmt.Fprintf(&b, "  %s: measured on 1 CPU: its two senders took turns, they did not run at once.\n", sc)
		case cpus[0] && a.icount:
			fmt.Fprintf(&b, "  %s: the samples do not record the guest's CPUs; vmbench gives an -icount guest one\n"+
				"  CPU unless -smp says otherwise, and on one CPU the two senders take turns instead of\n"+
				"  running at once.\n", sc)
		}
	}
	return b.String()
}

// userShare is the state's userspace share of thread CPU: the rusage split
// is sampled at the scheduler tick, so per-sample shares of short units
// are 0 or large; the ratio of sums over all samples is the estimate.
func (a *analysis) userShare(scene, state string) float64 {
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
