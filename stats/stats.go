// SPDX-License-Identifier: GPL-2.0

// Package stats computes medians, quantiles, ratios of medians and their
// 95 % intervals (for the bench and for the switch suite's walk-cost
// case), with a bootstrap that resamples paired boots and, inside
// each drawn boot, whole rounds: samples of one round share a fixture, a
// warm cache and a switch setting, so they are not independent and are never
// resampled one by one.
//
// Everything is deterministic: the generator is seeded from the caller's
// seed and a label (the scene), and every iteration runs in a fixed order,
// so a re-run of the analysis prints the same numbers.
package stats

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Obs is one sample's value with the boot and round it belongs to.
type Obs struct {
	Boot, Round int
	Value       float64
}

// Median returns the median of v (the mean of the two middle values for an
// even count), NaN for no values. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// quantile returns the q quantile of v with linear interpolation between
// order statistics (type 7, as R's default).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Values returns the values of obs.
func Values(obs []Obs) []float64 {
	v := make([]float64, len(obs))
	for i, o := range obs {
		v[i] = o.Value
	}
	return v
}

// Interval is a point estimate with its bootstrap interval: the 2.5 % and
// 97.5 % quantiles of the replicates (a nominal 95 % interval; how much it
// covers depends on Boots, see Coverage).
type Interval struct {
	Point, Lo, Hi float64
	// Boots is how many boots the replicates drew from (those present in
	// every compared group).
	Boots int
	// Fixed says that every replicate is the same resample (one boot
	// with one round in each group): Lo and Hi then equal the point
	// estimate by construction and are no interval at all.
	Fixed bool
}

// Coverage is about how often an interval from b boots contains the true
// change when the boots differ more than their rounds do. A replicate that
// draws the same boot b times has probability b^-b (3.7 % for three boots,
// more than the 2.5 % of each tail), so the interval is about the range of
// the b boots' own changes, and the range of b independent draws contains
// the median of their distribution with probability 1 - 2^(1-b): 50 % for
// two boots, 75 % for three, not the nominal 95 %. It is 0 for fewer than
// two: one boot says nothing of how another would differ.
func Coverage(b int) float64 {
	if b < 2 {
		return 0
	}
	return 1 - math.Pow(2, float64(1-b))
}

// grouped is one state's samples as boot -> rounds (in round order) ->
// values.
type grouped struct {
	boots map[int][][]float64
}

func group(obs []Obs) grouped {
	byRound := map[int]map[int][]float64{}
	for _, o := range obs {
		if byRound[o.Boot] == nil {
			byRound[o.Boot] = map[int][]float64{}
		}
		byRound[o.Boot][o.Round] = append(byRound[o.Boot][o.Round], o.Value)
	}
	g := grouped{boots: map[int][][]float64{}}
	for b, rounds := range byRound {
		keys := make([]int, 0, len(rounds))
		for r := range rounds {
			keys = append(keys, r)
		}
		sort.Ints(keys)
		for _, r := range keys {
			g.boots[b] = append(g.boots[b], rounds[r])
		}
	}
	return g
}

// draw appends to dst the samples of boot b's rounds drawn with
// replacement (as many draws as the boot has rounds).
func (g grouped) draw(dst []float64, b int, rng *rand.Rand) []float64 {
	rounds := g.boots[b]
	for range rounds {
		dst = append(dst, rounds[rng.IntN(len(rounds))]...)
	}
	return dst
}

// pairedBoots returns the boot ids present in every group, sorted. A boot
// of the unpatched kernel is paired with the boot of the patched one that
// has the same id.
func pairedBoots(gs ...grouped) []int {
	var ids []int
	for b := range gs[0].boots {
		ok := true
		for _, g := range gs[1:] {
			if _, has := g.boots[b]; !has {
				ok = false
			}
		}
		if ok {
			ids = append(ids, b)
		}
	}
	sort.Ints(ids)
	return ids
}

// Rng returns the generator for one analysis: seed and label (e.g. the
// scene name and the compared states) fix its stream.
func Rng(seed uint64, label string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(label))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// RatioChange is median(treat)/median(base) - 1 with its 95 % interval from
// reps bootstrap replicates; each replicate draws the paired boots with
// replacement and, inside each drawn boot, each state's rounds with
// replacement. Boots present in only one of the two are left out of the
// resampling but not of the point estimate. ok is false when the two share
// no boot.
//
// reps must be at least 1; a caller that prints the interval wants
// thousands (the 2.5 % and 97.5 % quantiles rest on the replicates in each
// tail).
func RatioChange(base, treat []Obs, reps int, rng *rand.Rand) (iv Interval, ok bool) {
	checkReps(reps)
	gb, gt := group(base), group(treat)
	boots := pairedBoots(gb, gt)
	if len(boots) == 0 || len(base) == 0 || len(treat) == 0 {
		return Interval{}, false
	}
	iv.Point = Median(Values(treat))/Median(Values(base)) - 1
	iv.Boots = len(boots)
	iv.Fixed = len(boots) == 1 && len(gb.boots[boots[0]]) == 1 && len(gt.boots[boots[0]]) == 1
	changes := make([]float64, reps)
	var bs, ts []float64
	for i := range changes {
		bs, ts = bs[:0], ts[:0]
		for range boots {
			b := boots[rng.IntN(len(boots))]
			bs = gb.draw(bs, b, rng)
			ts = gt.draw(ts, b, rng)
		}
		changes[i] = Median(ts)/Median(bs) - 1
	}
	iv.Lo, iv.Hi = quantile(changes, 0.025), quantile(changes, 0.975)
	return iv, true
}

func checkReps(reps int) {
	if reps < 1 {
		panic(fmt.Sprintf("stats: %d bootstrap replicates", reps))
	}
}

// leastSquaresSlope is the ordinary least-squares slope of y over x; NaN
// with fewer than two distinct x.
func leastSquaresSlope(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// SlopeCI fits the least-squares slope of the median over x (points maps
// each x to its samples) and bootstraps it: each replicate draws the boots
// shared by every x, and inside each drawn boot the rounds of every x, then
// fits the slope through the replicate's medians.
func SlopeCI(points map[float64][]Obs, reps int, rng *rand.Rand) (iv Interval, ok bool) {
	checkReps(reps)
	xs := make([]float64, 0, len(points))
	for x := range points {
		xs = append(xs, x)
	}
	sort.Float64s(xs)
	if len(xs) < 2 {
		return Interval{}, false
	}
	gs := make([]grouped, len(xs))
	meds := make([]float64, len(xs))
	for i, x := range xs {
		gs[i] = group(points[x])
		meds[i] = Median(Values(points[x]))
	}
	boots := pairedBoots(gs...)
	if len(boots) == 0 {
		return Interval{}, false
	}
	iv.Point = leastSquaresSlope(xs, meds)
	iv.Boots = len(boots)
	iv.Fixed = len(boots) == 1
	for _, g := range gs {
		iv.Fixed = iv.Fixed && len(g.boots[boots[0]]) == 1
	}
	slopes := make([]float64, reps)
	bufs := make([][]float64, len(xs))
	for r := range slopes {
		drawn := make([]int, len(boots))
		for i := range drawn {
			drawn[i] = boots[rng.IntN(len(boots))]
		}
		for i := range xs {
			bufs[i] = bufs[i][:0]
			for _, b := range drawn {
				bufs[i] = gs[i].draw(bufs[i], b, rng)
			}
			meds[i] = Median(bufs[i])
		}
		slopes[r] = leastSquaresSlope(xs, meds)
	}
	iv.Lo, iv.Hi = quantile(slopes, 0.025), quantile(slopes, 0.975)
	return iv, true
}
