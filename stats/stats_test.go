// SPDX-License-Identifier: GPL-2.0

package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestMedianAndQuantile(t *testing.T) {
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("Median odd = %v, want 2", m)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("Median even = %v, want 2.5", m)
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
	v := []float64{10, 20, 30, 40, 50}
	for q, want := range map[float64]float64{0: 10, 0.25: 20, 0.5: 30, 0.1: 14, 1: 50} {
		if got := quantile(v, q); !near(got, want) {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
}

// obs builds samples: values[boot][round] is that round's samples.
func obs(values [][][]float64) []Obs {
	var o []Obs
	for b, rounds := range values {
		for r, vs := range rounds {
			for _, v := range vs {
				o = append(o, Obs{Boot: b, Round: r, Value: v})
			}
		}
	}
	return o
}

func TestRatioChangeConstant(t *testing.T) {
	base := obs([][][]float64{{{100, 100}, {100, 100}}, {{100, 100}, {100, 100}}})
	treat := obs([][][]float64{{{80, 80}, {80, 80}}, {{80, 80}, {80, 80}}})
	iv, ok := RatioChange(base, treat, 10000, Rng(1, "const"))
	if !ok || !near(iv.Point, -0.2) || !near(iv.Lo, -0.2) || !near(iv.Hi, -0.2) {
		t.Errorf("got %+v ok=%v, want -0.2 [-0.2, -0.2]", iv, ok)
	}
}

// Two boot pairs whose levels differ tenfold (a slower boot, a different
// host), each with treat 10 % above its own base. Drawn paired, every
// replicate compares treat with base of the same boots: +10 % exactly,
// whatever is drawn. Drawn unpaired, a replicate of boot 0's base against
// boot 1's treat says +1000 %, one of the reverse -89 %.
func TestRatioChangePairsBoots(t *testing.T) {
	base := obs([][][]float64{{{100}}, {{1000}}})
	treat := obs([][][]float64{{{110}}, {{1100}}})
	iv, ok := RatioChange(base, treat, 10000, Rng(1, "pairs"))
	if !ok || !near(iv.Point, 0.1) || !near(iv.Lo, 0.1) || !near(iv.Hi, 0.1) || iv.Boots != 2 || iv.Fixed {
		t.Errorf("got %+v, want +0.1 [+0.1, +0.1] from 2 boots", iv)
	}
}

// Two boot pairs that disagree: boot 0 halves the time, boot 1 adds half.
// A replicate draws {0,0} (-50 %), {1,1} (+50 %) or one of each (median
// 100: 0 %) with probabilities 1/4, 1/4, 1/2, so the 2.5 % and 97.5 %
// quantiles are exactly -50 % and +50 %, and the point estimate 0 %.
func TestRatioChangeBootsThatDisagree(t *testing.T) {
	base := obs([][][]float64{{{100}}, {{100}}})
	treat := obs([][][]float64{{{50}}, {{150}}})
	iv, ok := RatioChange(base, treat, 10000, Rng(1, "pairs"))
	if !ok || !near(iv.Point, 0) || !near(iv.Lo, -0.5) || !near(iv.Hi, 0.5) {
		t.Errorf("got %+v, want 0 [-0.5, +0.5]", iv)
	}
}

// One boot; base at 10 throughout; treat's four rounds at 10, 20, 30 and
// 40 (25 samples each: 10.00, 10.01, ..., 10.24, and so on). A replicate
// that draws whole rounds pools four rounds' blocks: with all four drawn
// once, the 50th and 51st of the 100 values are 20.24 and 30.00 (the point,
// +151.2 %); with the 10 round drawn four times (probability 1/256) the
// median is 10.12, three times (12/256) 10.16, so the 2.5 % quantile is
// +1.6 % and by symmetry the 97.5 % one +300.8 %. Drawing the 100 samples
// one by one mixes the rounds in every replicate, and the interval shrinks
// to about +150 % +- 50 %.
func TestRatioChangeDrawsWholeRounds(t *testing.T) {
	var base, treat []Obs
	for r := 0; r < 4; r++ {
		for k := 0; k < 25; k++ {
			base = append(base, Obs{Boot: 0, Round: r, Value: 10})
			treat = append(treat, Obs{Boot: 0, Round: r, Value: float64(10*(r+1)) + 0.01*float64(k)})
		}
	}
	iv, ok := RatioChange(base, treat, 10000, Rng(7, "rounds"))
	if !ok || !near(iv.Point, 1.512) || !near(iv.Lo, 0.016) || !near(iv.Hi, 3.008) || iv.Boots != 1 || iv.Fixed {
		t.Errorf("got %+v, want +1.512 [+0.016, +3.008] from 1 boot", iv)
	}
}

// One boot with one round in each group: every replicate is that round
// again, and the "interval" is the point: Fixed says so.
func TestRatioChangeOneRoundIsFixed(t *testing.T) {
	iv, ok := RatioChange(obs([][][]float64{{{10, 11, 12}}}), obs([][][]float64{{{20, 21, 23}}}), 100, Rng(1, "fixed"))
	if !ok || !iv.Fixed || iv.Lo != iv.Point || iv.Hi != iv.Point {
		t.Errorf("got %+v, want a fixed point", iv)
	}
	iv, _ = RatioChange(obs([][][]float64{{{10}, {11}}}), obs([][][]float64{{{20}}}), 100, Rng(1, "fixed"))
	if iv.Fixed {
		t.Errorf("two base rounds, but Fixed: %+v", iv)
	}
}

// With three boots whose changes differ (normal, sd 2 %) and no variation
// between rounds, the interval contains the true change (0) in about 75 %
// of the trials, as Coverage says, far from the nominal 95 %.
func TestCoverageOfThreeBoots(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	hit, trials := 0, 400
	for trial := 0; trial < trials; trial++ {
		var base, treat []Obs
		for b := 0; b < 3; b++ {
			change, level := rng.NormFloat64()*0.02, 100*(1+rng.NormFloat64()*0.1)
			for r := 0; r < 3; r++ {
				for k := 0; k < 4; k++ {
					base = append(base, Obs{Boot: b, Round: r, Value: level})
					treat = append(treat, Obs{Boot: b, Round: r, Value: level * (1 + change)})
				}
			}
		}
		if iv, _ := RatioChange(base, treat, 1000, Rng(uint64(trial), "coverage")); iv.Lo <= 0 && 0 <= iv.Hi {
			hit++
		}
	}
	got := float64(hit) / float64(trials)
	if want := Coverage(3); want != 0.75 || math.Abs(got-want) > 0.06 {
		t.Errorf("coverage %.3f over %d trials, Coverage(3) = %.3f: want both near 0.75", got, trials, want)
	}
	if Coverage(1) != 0 || Coverage(2) != 0.5 {
		t.Errorf("Coverage(1), Coverage(2) = %v, %v; want 0, 0.5", Coverage(1), Coverage(2))
	}
}

func TestRatioChangeNeedsSharedBoot(t *testing.T) {
	if _, ok := RatioChange(obs([][][]float64{{{1}}}), []Obs{{Boot: 5, Value: 1}}, 10, Rng(1, "")); ok {
		t.Error("no shared boot, but ok")
	}
}

func TestSeededBootstrapRepeats(t *testing.T) {
	base := obs([][][]float64{{{100, 103, 98}, {101, 99, 97}}, {{104, 96, 100}, {99, 102, 101}}})
	treat := obs([][][]float64{{{90, 95, 93}, {91, 97, 88}}, {{96, 92, 89}, {94, 90, 99}}})
	a, _ := RatioChange(base, treat, 10000, Rng(42, "T1"))
	b, _ := RatioChange(base, treat, 10000, Rng(42, "T1"))
	c, _ := RatioChange(base, treat, 10000, Rng(42, "T2"))
	if a != b {
		t.Errorf("same seed and label: %+v then %+v", a, b)
	}
	if a == c {
		t.Errorf("different labels gave the same interval %+v", a)
	}
	if !(a.Lo <= a.Point && a.Point <= a.Hi) {
		t.Errorf("point %v outside its interval [%v, %v]", a.Point, a.Lo, a.Hi)
	}
}

func TestSlope(t *testing.T) {
	if s := leastSquaresSlope([]float64{0, 1, 2, 3}, []float64{5, 8, 11, 14}); !near(s, 3) {
		t.Errorf("slope = %v, want 3", s)
	}
	// y = 5 + 3x exactly in every sample of every round: slope 3, no spread.
	points := map[float64][]Obs{}
	for _, x := range []float64{0, 100, 300, 900} {
		points[x] = obs([][][]float64{{{5 + 3*x, 5 + 3*x}, {5 + 3*x}}, {{5 + 3*x}}})
	}
	iv, ok := SlopeCI(points, 1000, Rng(1, "slope"))
	if !ok || !near(iv.Point, 3) || !near(iv.Lo, 3) || !near(iv.Hi, 3) {
		t.Errorf("got %+v, want 3 [3, 3]", iv)
	}
	// Boot 1 sits 1000 above boot 0, both with slope 1: paired, every
	// replicate fits both x through the same boots, slope 1 exactly;
	// unpaired, boot 1's x=0 against boot 0's x=10 would say -99.
	points = map[float64][]Obs{}
	for _, x := range []float64{0, 10} {
		points[x] = obs([][][]float64{{{x}}, {{1000 + x}}})
	}
	iv, _ = SlopeCI(points, 10000, Rng(1, "slope-paired"))
	if !near(iv.Point, 1) || !near(iv.Lo, 1) || !near(iv.Hi, 1) || iv.Fixed {
		t.Errorf("got %+v, want 1 [1, 1]", iv)
	}
	// One boot, one round at each x: no interval.
	points = map[float64][]Obs{0: obs([][][]float64{{{5}}}), 10: obs([][][]float64{{{25}}})}
	if iv, ok := SlopeCI(points, 100, Rng(1, "slope-fixed")); !ok || !iv.Fixed || !near(iv.Point, 2) {
		t.Errorf("got %+v, want a fixed 2", iv)
	}
	// Boot 1 has slope 5, boot 0 slope 1: the interval spans [1, 5].
	points = map[float64][]Obs{}
	for _, x := range []float64{0, 10} {
		points[x] = obs([][][]float64{{{x}}, {{5 * x}}})
	}
	iv, _ = SlopeCI(points, 10000, Rng(1, "slope2"))
	if !near(iv.Point, 3) || !near(iv.Lo, 1) || !near(iv.Hi, 5) {
		t.Errorf("got %+v, want 3 [1, 5]", iv)
	}
}
