// SPDX-License-Identifier: GPL-2.0

// Command compare sets two netlink_mcast_bench results directories side
// by side, per scene and state: each one's median work unit (formal
// samples of passed scenes only, as the table counts them), the change
// from the first to the second, and the range of each one's per-boot
// medians, so that a change can be read against the spread between boots.
// Meant for two kernels measured the same way under -icount, whose figures
// are guest instructions (Minsn).
//
//	go run ./bench/compare BEFORE AFTER
package main

import (
	"fmt"
	"os"
	"slices"

	"nlmcast/bench/internal/report"
	"nlmcast/bench/internal/sample"
	"nlmcast/stats"
)

type key struct{ scene, state string }

// units is a results directory's wall time per work unit, in Minsn (ns
// under icount / 1e6), by scene and state, all of them and by boot; and
// its scenes in the order they were measured.
type units struct {
	all    map[key][]float64
	byBoot map[key]map[int][]float64
	scenes []string
}

func load(dir string) (units, error) {
	samples, err := report.ReadDir(dir)
	if err != nil {
		return units{}, err
	}
	u := units{all: map[key][]float64{}, byBoot: map[key]map[int][]float64{}}
	for _, s := range samples {
		if s.Warmup || s.Failed != "" {
			continue
		}
		u.add(s)
	}
	return u, nil
}

func (u *units) add(s sample.Sample) {
	k := key{s.Scene, s.State}
	if !slices.Contains(u.scenes, s.Scene) {
		u.scenes = append(u.scenes, s.Scene)
	}
	v := float64(s.WallNS) / 1e6
	u.all[k] = append(u.all[k], v)
	if u.byBoot[k] == nil {
		u.byBoot[k] = map[int][]float64{}
	}
	u.byBoot[k][s.Boot] = append(u.byBoot[k][s.Boot], v)
}

// bootRange is the lowest and highest per-boot median of k.
func (u units) bootRange(k key) (lo, hi float64) {
	first := true
	for _, v := range u.byBoot[k] {
		m := stats.Median(v)
		if first || m < lo {
			lo = m
		}
		if first || m > hi {
			hi = m
		}
		first = false
	}
	return lo, hi
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: compare BEFORE AFTER (two netlink_mcast_bench results directories)")
		os.Exit(2)
	}
	a, err := load(os.Args[1])
	if err == nil {
		var b units
		if b, err = load(os.Args[2]); err == nil {
			printComparison(a, b)
			return
		}
	}
	fmt.Fprintf(os.Stderr, "compare: %v\n", err)
	os.Exit(1)
}

// printComparison prints one line per scene and state that both measured.
func printComparison(a, b units) {
	fmt.Printf("%-16s %-5s %12s %12s %8s   %-19s %-19s\n", "scene", "state", "before Minsn", "after Minsn", "change", "before: boot range", "after: boot range")
	for _, sc := range a.scenes {
		for _, st := range []string{"U", "P0", "P1"} {
			k := key{sc, st}
			if len(a.all[k]) == 0 || len(b.all[k]) == 0 {
				continue
			}
			ma, mb := stats.Median(a.all[k]), stats.Median(b.all[k])
			alo, ahi := a.bootRange(k)
			blo, bhi := b.bootRange(k)
			fmt.Printf("%-16s %-5s %12.3f %12.3f %+7.2f%%   %8.3f-%-10.3f %8.3f-%-10.3f\n", sc, st, ma, mb, 100*(mb-ma)/ma, alo, ahi, blo, bhi)
		}
	}
}
