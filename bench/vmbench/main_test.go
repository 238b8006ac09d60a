// SPDX-License-Identifier: GPL-2.0

package main

import (
	"slices"
	"testing"
)

// Pairs alternate which image boots first; -first-boot continues the
// numbering; a missing image leaves its boots out.
func TestPlanRotatesImages(t *testing.T) {
	kinds := func(bs []boot) (out []string) {
		for _, b := range bs {
			out = append(out, b.kind+string(rune('0'+b.index)))
		}
		return out
	}
	got := kinds(plan(options{kernelU: "u", kernelP: "p", boots: 3}))
	if want := []string{"U0", "P0", "P1", "U1", "U2", "P2"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v, want %v", got, want)
	}
	got = kinds(plan(options{kernelP: "p", boots: 2, firstBoot: 3}))
	if want := []string{"P3", "P4"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v, want %v", got, want)
	}
}
