// SPDX-License-Identifier: GPL-2.0

package kmem

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"nlmcast/stats"
)

// Objects that memory scenes count, as a Record's Object names them.
const (
	ObjectRouteSocket = "route-socket" // an open NETLINK_ROUTE socket bound to a group
	ObjectNetns       = "netns"        // a network namespace
)

// group is the records of one scene on one kernel in one state.
type group struct {
	machine, state, kernel, image string
	records                       []Record
}

func (g *group) label() string { return g.machine + " " + g.state }

// perObject is a total divided by the record's N.
func perObject(r Record, total int64) float64 { return float64(total) / float64(r.N) }

func (g *group) values(total func(Record) int64) []float64 {
	var v []float64
	for _, r := range g.records {
		v = append(v, perObject(r, total(r)))
	}
	return v
}

// cacheObjects is, per cache, the median over rounds of its change in
// objects per object created.
func (g *group) cacheObjects() map[string]float64 {
	per := map[string][]float64{}
	for _, r := range g.records {
		for _, c := range r.Caches {
			per[c.Name] = append(per[c.Name], float64(c.Objects)/float64(r.N))
		}
	}
	out := map[string]float64{}
	for name, v := range per {
		for len(v) < len(g.records) { // rounds where the cache did not change
			v = append(v, 0)
		}
		out[name] = stats.Median(v)
	}
	return out
}

// cacheSizes is each cache's object size on this kernel.
func (g *group) cacheSizes() map[string]int64 {
	out := map[string]int64{}
	for _, r := range g.records {
		for _, c := range r.Caches {
			out[c.Name] = c.ObjSize
		}
	}
	return out
}

// SocketCache is, for records of a socket scene, the cache netlink_sock
// comes from: sk_alloc takes it from kmalloc (netlink_proto has no cache
// of its own), so it is the kmalloc cache of the largest objects that
// grows by one object per socket (the socket's other kmalloc object, its
// group bitmap, is small). "" when none does.
func SocketCache(records []Record) (name string, objSize int64) {
	return (&group{records: records}).ownCache()
}

func (g *group) ownCache() (string, int64) {
	objs, sizes := g.cacheObjects(), g.cacheSizes()
	best, size := "", int64(0)
	for name, n := range objs {
		if strings.HasPrefix(name, "kmalloc-") && math.Abs(n-1) < 0.1 && sizes[name] > size {
			best, size = name, sizes[name]
		}
	}
	return best, size
}

var stateOrder = map[string]int{"U": 0, "P0": 1, "P1": 2}

// groups splits records by scene, then by machine and state, in table
// order.
func groups(records []Record) (scenes []string, byScene map[string][]*group) {
	byScene = map[string][]*group{}
	index := map[[3]string]*group{}
	for _, r := range records {
		k := [3]string{r.Scene, r.Machine, r.State}
		g := index[k]
		if g == nil {
			g = &group{machine: r.Machine, state: r.State, kernel: r.Kernel, image: r.Image}
			index[k] = g
			if byScene[r.Scene] == nil {
				scenes = append(scenes, r.Scene)
			}
			byScene[r.Scene] = append(byScene[r.Scene], g)
		}
		g.records = append(g.records, r)
	}
	sort.Strings(scenes)
	for _, gs := range byScene {
		sort.SliceStable(gs, func(i, j int) bool {
			if gs[i].machine != gs[j].machine {
				return machineOrder(gs[i].machine) < machineOrder(gs[j].machine)
			}
			return stateOrder[gs[i].state] < stateOrder[gs[j].state]
		})
	}
	return scenes, byScene
}

func machineOrder(m string) string {
	if m == "x86_64" {
		return "0" // the suite's first platform first
	}
	return "1" + m
}

func medianRange(v []float64) string {
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmt.Sprintf("%8.1f [%.1f, %.1f]", stats.Median(v), lo, hi)
}

// Table lays the records out: for each scene, per kernel and state the
// memory per object (objects in use, slab pages, MemFree) with the rounds'
// range; each cache's change in objects per object; what the patched
// kernel adds over the unpatched one, per cache; and for the socket scene
// which kmalloc bucket netlink_sock is in.
func Table(records []Record) string {
	var b strings.Builder
	var kept, left []Record
	for _, r := range records {
		if r.Failed == "" {
			kept = append(kept, r)
		} else {
			left = append(left, r)
		}
	}
	if len(kept) == 0 {
		b.WriteString("no memory records of a scene that passed\n")
		writeLeftOut(&b, left)
		return b.String()
	}
	records = kept
	methods := map[string]bool{}
	for _, r := range records {
		methods[r.Method] = true
	}
	fmt.Fprintf(&b, "netlink_mcast_bench memory: %d rounds\n", len(records))
	fmt.Fprintf(&b, "Kernel memory per object: the change of the counters while N objects were created and held,\n"+
		"divided by N; median over rounds [min, max]. \"slab objects\": objects in use x their size, over every cache\n"+
		"(/proc/slabinfo); \"slab pages\": the caches' pages; \"MemFree\": all memory the kernel handed out (page\n"+
		"allocator too, e.g. a grown hash table or fd table). Counting: %s.\n",
		strings.Join(methodNames(methods), ", "))
	scenes, byScene := groups(records)
	for _, sc := range scenes {
		gs := byScene[sc]
		r0 := gs[0].records[0]
		fmt.Fprintf(&b, "\n%s: N = %d (%s)\n", sc, r0.N, objectName(r0.Scene, gs))
		for _, g := range gs {
			image := ""
			if g.image != "" {
				image = " (" + g.image + ")"
			}
			fmt.Fprintf(&b, "  %-10s %s%s; %d round(s)\n", g.label()+":", g.kernel, image, len(g.records))
		}
		fmt.Fprintf(&b, "  %-10s %-26s %-26s %-26s\n", "", "slab objects B/obj", "slab pages B/obj", "MemFree B/obj")
		for _, g := range gs {
			fmt.Fprintf(&b, "  %-10s %-26s %-26s %-26s\n", g.label(),
				medianRange(g.values(func(r Record) int64 { return r.ObjectBytes })),
				medianRange(g.values(func(r Record) int64 { return r.SlabBytes })),
				medianRange(g.values(func(r Record) int64 { return -r.MemFree })))
		}
		writeTotalDiff(&b, gs)
		writeCaches(&b, gs)
		if isSocketScene(gs) {
			writeBucket(&b, gs)
		}
	}
	writeLeftOut(&b, left)
	return b.String()
}

// writeLeftOut says which records the table leaves out, and why: their
// scene did not pass.
func writeLeftOut(b *strings.Builder, left []Record) {
	if len(left) == 0 {
		return
	}
	count := map[string]int{}
	var keys []string
	for _, r := range left {
		k := fmt.Sprintf("%s %s %s (boot %d): %s", r.Scene, r.Machine, r.State, r.Boot, r.Failed)
		if count[k] == 0 {
			keys = append(keys, k)
		}
		count[k]++
	}
	fmt.Fprintf(b, "\nLeft out, their scene did not pass (%d rounds):\n", len(left))
	for _, k := range keys {
		fmt.Fprintf(b, "  %d x %s\n", count[k], k)
	}
}

func methodNames(m map[string]bool) []string {
	var out []string
	for k := range m {
		switch k {
		case MethodExact:
			out = append(out, "exact (a kernel booted with slub_debug=F: debug caches have no per-CPU slabs, so /proc/slabinfo's counts are exact)")
		case MethodShrink:
			out = append(out, "every cache shrunk (/sys/kernel/slab/*/shrink) before each reading, so per-CPU slabs are not counted as in use")
		case MethodPlain:
			out = append(out, "plain /proc/slabinfo (no /sys/kernel/slab: per-CPU slabs count as in use, a few slabs of noise)")
		default:
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func isSocketScene(gs []*group) bool {
	return gs[0].records[0].Object == ObjectRouteSocket
}

func objectName(scene string, gs []*group) string {
	switch gs[0].records[0].Object {
	case ObjectRouteSocket:
		return "open NETLINK_ROUTE sockets, each bound to RTNLGRP_IPV4_ROUTE, in one namespace"
	case ObjectNetns:
		return "network namespaces, each held by an open nsfs file"
	}
	return scene
}

// writeCaches prints, per machine, each cache's change in objects per
// object in each state, and P-U in bytes (P: the P0 and P1 rounds
// together, since both modes keep the same structures), for every cache
// that moved by at least 0.01 objects per object somewhere.
func writeCaches(b *strings.Builder, gs []*group) {
	var machines []string
	byMachine := map[string][]*group{}
	for _, g := range gs {
		if byMachine[g.machine] == nil {
			machines = append(machines, g.machine)
		}
		byMachine[g.machine] = append(byMachine[g.machine], g)
	}
	for _, m := range machines {
		mg := byMachine[m]
		objs := make([]map[string]float64, len(mg))
		sizes := map[string]int64{}
		names := map[string]bool{}
		for i, g := range mg {
			objs[i] = g.cacheObjects()
			for n, v := range objs[i] {
				if math.Abs(v) >= 0.01 {
					names[n] = true
				}
			}
			for n, s := range g.cacheSizes() {
				sizes[n] = s
			}
		}
		list := make([]string, 0, len(names))
		for n := range names {
			list = append(list, n)
		}
		sort.Slice(list, func(i, j int) bool {
			bi, bj := math.Abs(objs[0][list[i]])*float64(sizes[list[i]]), math.Abs(objs[0][list[j]])*float64(sizes[list[j]])
			if bi != bj {
				return bi > bj
			}
			return list[i] < list[j]
		})
		fmt.Fprintf(b, "  %s, per cache: objects per object", m)
		u := stateIndex(mg, "U")
		var pooled *group
		for _, g := range mg {
			if g.state == "P0" || g.state == "P1" {
				if pooled == nil {
					pooled = &group{}
				}
				pooled.records = append(pooled.records, g.records...)
			}
		}
		var pObjs map[string]float64
		if pooled != nil {
			pObjs = pooled.cacheObjects()
		}
		diff := u >= 0 && pooled != nil
		if diff {
			fmt.Fprintf(b, "; P-U in bytes per object (P0 and P1 rounds together)")
		}
		fmt.Fprintf(b, "\n    %-22s %6s", "cache", "size")
		for _, g := range mg {
			fmt.Fprintf(b, " %8s", g.state)
		}
		if diff {
			fmt.Fprintf(b, " %9s", "P-U B")
		}
		b.WriteString("\n")
		for _, n := range list {
			fmt.Fprintf(b, "    %-22s %6d", n, sizes[n])
			for i := range mg {
				fmt.Fprintf(b, " %8.3f", objs[i][n])
			}
			if diff {
				fmt.Fprintf(b, " %+9.1f", (pObjs[n]-objs[u][n])*float64(sizes[n]))
			}
			b.WriteString("\n")
		}
	}
}

// writeTotalDiff prints, per machine with U and P rounds, P-U of the
// objects in use per object (medians; P: the P0 and P1 rounds together).
func writeTotalDiff(b *strings.Builder, gs []*group) {
	u := map[string]*group{}
	p := map[string]*group{}
	var machines []string
	for _, g := range gs {
		if u[g.machine] == nil && p[g.machine] == nil {
			machines = append(machines, g.machine)
		}
		switch g.state {
		case "U":
			u[g.machine] = g
		case "P0", "P1":
			if p[g.machine] == nil {
				p[g.machine] = &group{}
			}
			p[g.machine].records = append(p[g.machine].records, g.records...)
		}
	}
	objects := func(r Record) int64 { return r.ObjectBytes }
	for _, m := range machines {
		if u[m] == nil || p[m] == nil {
			continue
		}
		d := stats.Median(p[m].values(objects)) - stats.Median(u[m].values(objects))
		fmt.Fprintf(b, "  %-10s %+8.1f B/obj of slab objects (P: the P0 and P1 rounds together)\n", m+" P-U", d)
	}
}

func stateIndex(gs []*group, state string) int {
	for i, g := range gs {
		if g.state == state {
			return i
		}
	}
	return -1
}

// writeBucket says, per machine, which kmalloc cache netlink_sock is in
// for each state, and whether the patch moved it.
func writeBucket(b *strings.Builder, gs []*group) {
	b.WriteString("  netlink_sock's kmalloc bucket (the kmalloc cache of the largest objects that grows by one per socket):\n")
	perMachine := map[string][]string{}
	var machines []string
	for _, g := range gs {
		name, size := g.ownCache()
		if name == "" {
			name, size = "none found", 0
		}
		if perMachine[g.machine] == nil {
			machines = append(machines, g.machine)
		}
		perMachine[g.machine] = append(perMachine[g.machine], fmt.Sprintf("%s %s (%d B objects)", g.state, name, size))
	}
	for _, m := range machines {
		verdict := "the same bucket in every state"
		first := ""
		for _, s := range perMachine[m] {
			_, c, _ := strings.Cut(s, " ")
			if first == "" {
				first = c
			} else if c != first {
				verdict = "the bucket differs between the states"
			}
		}
		fmt.Fprintf(b, "    %s: %s: %s\n", m, strings.Join(perMachine[m], ", "), verdict)
	}
}
