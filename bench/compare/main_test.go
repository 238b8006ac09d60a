// SPDX-License-Identifier: GPL-2.0

package main

import (
	"testing"

	"nlmcast/bench/internal/sample"
)

// Every unit counts once in its scene and state, and the per-boot range
// is the lowest and highest boot median.
func TestUnits(t *testing.T) {
	var u units
	u.all, u.byBoot = map[key][]float64{}, map[key]map[int][]float64{}
	for _, s := range []sample.Sample{
		{Scene: "T1", State: "P0", Boot: 0, WallNS: 10e6},
		{Scene: "T1", State: "P0", Boot: 0, WallNS: 12e6},
		{Scene: "T1", State: "P0", Boot: 1, WallNS: 20e6},
	} {
		u.add(s)
	}
	k := key{"T1", "P0"}
	if len(u.all[k]) != 3 {
		t.Fatalf("%d units, want 3", len(u.all[k]))
	}
	if lo, hi := u.bootRange(k); lo != 11 || hi != 20 {
		t.Errorf("boot range %v-%v, want 11-20 (boot 0's median 11, boot 1's 20)", lo, hi)
	}
}
