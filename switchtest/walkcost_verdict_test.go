// SPDX-License-Identifier: GPL-2.0

package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// pairsOf builds n alternating pairs whose per-multicast costs come from
// cost(pair, mode, position in the pair).
func pairsOf(n int, cost func(i, mode, pos int) time.Duration) []walkPair {
	ps := make([]walkPair, n)
	for i := range ps {
		ps[i].first = firstModeOfPair(i)
		for pos, mode := range []int{ps[i].first, 1 - ps[i].first} {
			ps[i].cost[mode] = cost(i, mode, pos)
		}
	}
	return ps
}

func TestFirstModeAlternates(t *testing.T) {
	count := [2]int{}
	for i := range walkCostDefaults.pairs {
		m := firstModeOfPair(i)
		if i > 0 && m == firstModeOfPair(i-1) {
			t.Errorf("pairs %d and %d both start with mode %d", i-1, i, m)
		}
		count[m]++
	}
	if count[0] != count[1] {
		t.Errorf("with %d pairs, mode 0 goes first %d times and mode 1 %d times", walkCostDefaults.pairs, count[0], count[1])
	}
}

// The detector: when mode 1 costs what mode 0 costs, the verdict is
// "not cheaper" and the message carries the ratio.
func TestVerdictEqualModesFails(t *testing.T) {
	v := judgeWalkCost(pairsOf(8, func(i, mode, pos int) time.Duration { return 200 * time.Microsecond }), walkCostThreshold)
	if v.cheaper || v.ratio != 1 {
		t.Fatalf("equal costs: cheaper=%v ratio %v, want not cheaper, ratio 1", v.cheaper, v.ratio)
	}
	msg := walkCostFailure(v, walkCostDefaults)
	for _, want := range []string{"median mode1/mode0 ratio 1.000 over 8 pairs", "pair 7 (mode 1 first)", "below 0.50"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, msg)
		}
	}
}

// Under TCG the second block of a pair can look 10-30 % cheaper whatever
// its mode. With the order alternating, equal walks still fail.
func TestVerdictOrderBiasCancels(t *testing.T) {
	for _, bias := range []float64{0.7, 0.8, 0.9, 1.3} {
		v := judgeWalkCost(pairsOf(8, func(i, mode, pos int) time.Duration {
			return time.Duration(200e3 * math.Pow(bias, float64(pos)))
		}), walkCostThreshold)
		if v.cheaper || math.Abs(v.ratio-1) > 1e-9 {
			t.Errorf("second block %.0f%% of the first, equal walks: cheaper=%v ratio %.3f, want not cheaper, ratio 1",
				100*bias, v.cheaper, v.ratio)
		}
	}
}

func TestVerdictClearSavingPasses(t *testing.T) {
	v := judgeWalkCost(pairsOf(8, func(i, mode, pos int) time.Duration {
		return [2]time.Duration{800 * time.Microsecond, 160 * time.Microsecond}[mode]
	}), walkCostThreshold)
	if !v.cheaper || math.Abs(v.ratio-0.2) > 1e-9 {
		t.Fatalf("mode 1 at a fifth of mode 0: cheaper=%v ratio %.3f, want cheaper, ratio 0.2", v.cheaper, v.ratio)
	}
}

// A few pairs spoilt in either direction move no median of pairs.
func TestVerdictRobustToSpoiltPairs(t *testing.T) {
	saving := func(spoil func(i, mode int) float64) walkVerdict {
		return judgeWalkCost(pairsOf(8, func(i, mode, pos int) time.Duration {
			base := [2]float64{800e3, 160e3}[mode]
			return time.Duration(base * spoil(i, mode))
		}), walkCostThreshold)
	}
	// Three mode-1 blocks ten times too slow: still cheaper.
	if v := saving(func(i, mode int) float64 {
		if mode == 1 && i < 3 {
			return 10
		}
		return 1
	}); !v.cheaper {
		t.Errorf("three slow mode-1 blocks turned a clear saving into %v", v)
	}
	// Equal walks with three mode-0 blocks ten times too slow: not cheaper.
	if v := judgeWalkCost(pairsOf(8, func(i, mode, pos int) time.Duration {
		if mode == 0 && i%3 == 0 {
			return 2 * time.Millisecond
		}
		return 200 * time.Microsecond
	}), walkCostThreshold); v.cheaper {
		t.Errorf("three slow mode-0 blocks made equal walks look different: %v", v)
	}
}

// Nothing measured, or a mode-0 block that measured zero, shows nothing.
func TestVerdictDegenerateFails(t *testing.T) {
	if v := judgeWalkCost(nil, walkCostThreshold); v.cheaper {
		t.Errorf("no pairs: %v", v)
	}
	if v := judgeWalkCost(pairsOf(8, func(i, mode, pos int) time.Duration { return 0 }), walkCostThreshold); v.cheaper {
		t.Errorf("zero costs: %v", v)
	}
}

func TestMedianDuration(t *testing.T) {
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{5}, 5},
		{[]time.Duration{9, 1, 5}, 5},
		{[]time.Duration{9, 1, 5, 7}, 6},
		{[]time.Duration{1, 1, 1, 1000}, 1},
	} {
		if got := medianDuration(c.in); got != c.want {
			t.Errorf("medianDuration(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
