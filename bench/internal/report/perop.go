// SPDX-License-Identifier: GPL-2.0

package report

import (
	"fmt"
	"strings"
)

// perOpPrefixes are the related series' scenes, whose figure of merit is
// the cost of one request (or one namespace), not of a unit.
var perOpPrefixes = []string{"A1-", "TC-", "NS-"}

func perOpScene(scene string) bool {
	for _, p := range perOpPrefixes {
		if strings.HasPrefix(scene, p) {
			return true
		}
	}
	return false
}

// perOpTable shows, for the related series' scenes, the median wall per
// operation (µs, or thousands of instructions under icount) and its
// inverse, operations per second (per 10^9 instructions under icount).
// Empty when there are none.
func (a *analysis) perOpTable() string {
	var b strings.Builder
	lw := a.labelWidth()
	u, r := "us/op", "op/s"
	if a.icount {
		// Under icount a guest second is 10^9 instructions.
		u, r = "kinsn/op", "op/Ginsn"
	}
	for _, sc := range a.scenes {
		if !perOpScene(sc) {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\nRelated series, per operation (median wall per unit / operations per unit):\n\n")
			fmt.Fprintf(&b, "%-*s", lw, "Scenario")
			for _, st := range stateOrder {
				fmt.Fprintf(&b, "%13s%12s", st+" "+u, st+" "+r)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%-*s", lw, sc)
		for _, st := range stateOrder {
			ss := a.byScene[sc][st]
			if len(ss) == 0 {
				fmt.Fprintf(&b, "%13s%12s", "-", "-")
				continue
			}
			per := a.median(sc, st, wall) / float64(max(ss[0].Ops, 1)) // ns (or insn)
			rate := "-"
			if per > 0 {
				rate = fmt.Sprintf("%.1f", 1e9/per)
			}
			fmt.Fprintf(&b, "%13.2f%12s", per/1e3, rate)
		}
		b.WriteString("\n")
	}
	return b.String()
}
