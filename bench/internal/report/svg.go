// SPDX-License-Identifier: GPL-2.0

package report

import (
	"fmt"
	"math"
	"strings"

	"nlmcast/stats"
)

// SVG plots each scene's P0/U and P1/U wall change (and P1/P0 when there is
// no U) as a point with its bootstrap interval (none where it cannot vary:
// one boot, one round), one row per scene.
func (a *analysis) SVG() string {
	type bar struct {
		name  string
		color string
		iv    stats.Interval
	}
	type row struct {
		scene string
		bars  []bar
	}
	var rows []row
	lo, hi := 0.0, 0.0
	for _, sc := range a.scenes {
		r := row{scene: sc}
		cmps := [][3]string{{"U", "P0", "#1f77b4"}, {"U", "P1", "#d62728"}}
		if len(a.byScene[sc]["U"]) == 0 {
			cmps = [][3]string{{"P0", "P1", "#2ca02c"}}
		}
		for _, c := range cmps {
			iv, ok := a.change(sc, c[0], c[1], "wall", wall)
			if !ok {
				continue
			}
			r.bars = append(r.bars, bar{c[1] + "/" + c[0], c[2], iv})
			lo, hi = math.Min(lo, iv.Lo), math.Max(hi, iv.Hi)
		}
		rows = append(rows, r)
	}
	lo, hi = math.Floor(lo*10)/10, math.Ceil(hi*10)/10
	if hi-lo < 0.2 {
		hi = lo + 0.2
	}
	const left, width, rowH, top = 200.0, 560.0, 34.0, 40.0
	x := func(v float64) float64 { return left + (v-lo)/(hi-lo)*width }
	height := top + rowH*float64(len(rows)) + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", int(left+width+40), int(height))
	fmt.Fprintf(&b, `<text x="10" y="20">median wall change against U (P0 blue, P1 red; green: P1/P0 without U) with bootstrap interval (2.5-97.5 %% quantiles)</text>`+"\n")
	for v := lo; v <= hi+1e-9; v += 0.1 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x(v), top-5, x(v), height-35, map[bool]string{true: "#000", false: "#ddd"}[math.Abs(v) < 1e-9])
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%+.0f%%</text>`+"\n", x(v), height-20, 100*v)
	}
	for i, r := range rows {
		y := top + rowH*float64(i) + rowH/2
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-10, y+4, r.scene)
		for j, br := range r.bars {
			yy := y - 6 + 12*float64(j)
			if br.iv.Fixed {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s %+.2f%% %s</title></circle>`+"\n",
					x(br.iv.Point), yy, br.color, br.name, 100*br.iv.Point, noInterval)
				continue
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"><title>%s %+.2f%% [%+.2f%%, %+.2f%%]</title></line>`+"\n",
				x(br.iv.Lo), yy, x(br.iv.Hi), yy, br.color, br.name, 100*br.iv.Point, 100*br.iv.Lo, 100*br.iv.Hi)
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`+"\n", x(br.iv.Point), yy, br.color)
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}
