// SPDX-License-Identifier: GPL-2.0

package report

import (
	"fmt"
	"strings"

	"nlmcast/stats"
)

// sweepFamilies are the sweep's scene name prefixes and what they vary.
var sweepFamilies = []struct{ prefix, what string }{
	{"SW-ord-n", "ordinary"},
	{"SW-all-n", "ALL_NSID"},
}

// sweepTable fits, per family and state, the least-squares slope of the
// median wall time over the number of foreign subscribers n, divided by the
// notifications per unit: the cost of one more candidate per notification.
// Empty when the samples hold no sweep.
func (a *analysis) sweepTable() string {
	var b strings.Builder
	unit := "ns"
	if a.icount {
		unit = "insn"
	}
	var rows strings.Builder
	boots := map[int]bool{}
	for _, fam := range sweepFamilies {
		var row []string
		ns := map[int]bool{}
		for _, st := range a.states {
			points := map[float64][]stats.Obs{}
			ops := 0
			for _, sc := range a.scenes {
				if !strings.HasPrefix(sc, fam.prefix) {
					continue
				}
				ss := a.byScene[sc][st]
				if len(ss) == 0 {
					continue
				}
				points[float64(ss[0].N)] = obs(ss, wall)
				ns[ss[0].N] = true
				ops = ss[0].Ops
			}
			iv, ok := stats.SlopeCI(points, a.opts.Reps, stats.Rng(a.opts.Seed, "sweep/"+fam.prefix+st))
			if !ok || ops == 0 {
				row = append(row, fmt.Sprintf("%s -", st))
				continue
			}
			d := float64(ops)
			if iv.Fixed {
				row = append(row, fmt.Sprintf("%s %.2f %s", st, iv.Point/d, noInterval))
				continue
			}
			boots[iv.Boots] = true
			row = append(row, fmt.Sprintf("%s %.2f [%.2f, %.2f]", st, iv.Point/d, iv.Lo/d, iv.Hi/d))
		}
		if len(ns) < 2 {
			continue
		}
		fmt.Fprintf(&rows, "  %-9s n=%s: %s\n", fam.what, joinInts(ns), strings.Join(row, "; "))
	}
	if rows.Len() == 0 {
		return ""
	}
	fmt.Fprintf(&b, "\nSweep: cost of one more foreign candidate per notification, %s\n"+
		"(least-squares slope of the median wall per unit over n, / notifications per unit;\n"+
		"bootstrap interval, 2.5 %% and 97.5 %% quantiles, over paired boots and whole rounds):\n%s\n%s",
		unit, coverageNote(boots), rows.String())
	return b.String()
}

func joinInts(m map[int]bool) string {
	var v []int
	for k := range m {
		v = append(v, k)
	}
	for i := range v {
		for j := i + 1; j < len(v); j++ {
			if v[j] < v[i] {
				v[i], v[j] = v[j], v[i]
			}
		}
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
