//go:build ignore

// SPDX-License-Identifier: GPL-2.0

// Command bench_compare sets two netlink_mcast_bench results directories
// side by side, per scene and state: the median work unit of each (every
// formal sample, warm-ups and failed scenes left out), the change from the
// first to the second, and the range of the per-boot medians of each, so
// that a change can be read against the spread between boots. Meant for
// -icount runs, whose figures are guest instructions.
//
//	go run evidence/kernel-fixes/bench_compare.go BEFORE AFTER
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
)

type sample struct {
	State  string `json:"state"`
	Boot   int    `json:"boot"`
	Scene  string `json:"scene"`
	Warmup bool   `json:"warmup"`
	Failed string `json:"failed"`
	WallNS int64  `json:"wall_ns"`
}

type key struct{ scene, state string }

// load returns every formal sample's wall time, in Minsn (ns under
// icount, divided by 1e6), by scene and state, and by boot.
func load(dir string) (map[key][]float64, map[key]map[int][]float64, []string) {
	f, err := os.Open(dir + "/samples.jsonl")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	all := map[key][]float64{}
	byBoot := map[key]map[int][]float64{}
	var scenes []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var s sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", dir, err)
			os.Exit(1)
		}
		if s.Warmup || s.Failed != "" {
			continue
		}
		k := key{s.Scene, s.State}
		if !slices.Contains(scenes, s.Scene) {
			scenes = append(scenes, s.Scene)
		}
		v := float64(s.WallNS) / 1e6
		all[k] = append(all[k], v)
		if byBoot[k] == nil {
			byBoot[k] = map[int][]float64{}
		}
		byBoot[k][s.Boot] = append(byBoot[k][s.Boot], v)
	}
	return all, byBoot, scenes
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// bootRange is the lowest and highest per-boot median.
func bootRange(b map[int][]float64) (lo, hi float64) {
	first := true
	for _, v := range b {
		m := median(v)
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
		fmt.Fprintln(os.Stderr, "usage: bench_compare BEFORE AFTER")
		os.Exit(2)
	}
	a, ab, scenes := load(os.Args[1])
	b, bb, _ := load(os.Args[2])
	fmt.Printf("%-16s %-5s %12s %12s %8s   %-19s %-19s\n", "scene", "state", "before Minsn", "after Minsn", "change", "before: boot range", "after: boot range")
	for _, sc := range scenes {
		for _, st := range []string{"U", "P0", "P1"} {
			k := key{sc, st}
			if len(a[k]) == 0 || len(b[k]) == 0 {
				continue
			}
			ma, mb := median(a[k]), median(b[k])
			alo, ahi := bootRange(ab[k])
			blo, bhi := bootRange(bb[k])
			fmt.Printf("%-16s %-5s %12.3f %12.3f %+7.2f%%   %8.3f-%-10.3f %8.3f-%-10.3f\n", sc, st, ma, mb, 100*(mb-ma)/ma, alo, ahi, blo, bhi)
		}
	}
}
