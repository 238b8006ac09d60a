// SPDX-License-Identifier: GPL-2.0

package stats

import (
	"math"
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
		if got := Quantile(v, q); !near(got, want) {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
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

// Two boot pairs that disagree: boot 0 halves the time, boot 1 adds half.
// A replicate draws {0,0} (-50 %), {1,1} (+50 %) or one of each (median
// 100: 0 %) with probabilities 1/4, 1/4, 1/2, so the 2.5 % and 97.5 %
// quantiles are exactly -50 % and +50 %, and the point estimate 0 %.
func TestRatioChangePairsBoots(t *testing.T) {
	base := obs([][][]float64{{{100}}, {{100}}})
	treat := obs([][][]float64{{{50}}, {{150}}})
	iv, ok := RatioChange(base, treat, 10000, Rng(1, "pairs"))
	if !ok || !near(iv.Point, 0) || !near(iv.Lo, -0.5) || !near(iv.Hi, 0.5) {
		t.Errorf("got %+v, want 0 [-0.5, +0.5]", iv)
	}
}

// One boot, treat's two rounds at 10 and 20 (three samples each), base at
// 10. Drawing whole rounds gives only 0 %, +50 % and +100 %; drawing
// samples one by one would also give other medians. The interval is
// [0, +100 %] and every replicate is one of the three.
func TestRatioChangeDrawsWholeRounds(t *testing.T) {
	base := obs([][][]float64{{{10, 10, 10}, {10, 10, 10}}})
	treat := obs([][][]float64{{{10, 10, 10}, {20, 20, 20}}})
	iv, ok := RatioChange(base, treat, 10000, Rng(7, "rounds"))
	if !ok || !near(iv.Point, 0.5) || !near(iv.Lo, 0) || !near(iv.Hi, 1) {
		t.Errorf("got %+v, want +0.5 [0, +1]", iv)
	}
	g := group(treat)
	rng := Rng(7, "draw")
	for i := 0; i < 1000; i++ {
		m := Median(g.draw(nil, 0, rng))
		if m != 10 && m != 15 && m != 20 {
			t.Fatalf("a replicate's median is %v: samples were not drawn as whole rounds", m)
		}
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
	if s := LeastSquaresSlope([]float64{0, 1, 2, 3}, []float64{5, 8, 11, 14}); !near(s, 3) {
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
