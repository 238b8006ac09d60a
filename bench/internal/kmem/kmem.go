// SPDX-License-Identifier: GPL-2.0

// Package kmem measures the kernel memory that objects of one kind cost:
// it reads the slab allocator's counters (/proc/slabinfo) and the page
// allocator's (/proc/meminfo) before and after a workload creates N of
// them, and divides the difference by N. A Record is one such measurement;
// it travels from a VM in a TAP diagnostic line ("# memory: {json}"), as
// the bench's samples do, and Table lays records from several kernels side
// by side.
//
// SLUB keeps a slab per CPU (and per-CPU partial slabs) to allocate from
// without locks; /proc/slabinfo counts every object of those as in use,
// so an untouched count is only exact to a few slabs of each cache. Before
// each reading the package shrinks every cache (/sys/kernel/slab/*/shrink,
// which flushes the per-CPU slabs back to the node lists); what the reading
// itself and the rest of the system allocate and free after that still
// leaves some slabs per cache partly counted, a few bytes per object over
// thousands of objects, more for caches of small objects (512 to a slab).
// A kernel booted with slub_debug=F has debug caches only, which allocate
// and free on the node lists with no per-CPU slabs (mm/slub.c,
// alloc_single_from_new_slab, free_to_partial_list): its counts are exact.
// F adds consistency checks only: object sizes, and which caches merge,
// stay as without it.
package kmem

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Cache is one line of /proc/slabinfo (version 2.1).
type Cache struct {
	Name         string
	Active       int64 // objects in use (active_objs)
	Objects      int64 // objects in all slabs (num_objs)
	ObjSize      int64 // bytes per object, alignment and metadata included
	PerSlab      int64 // objects per slab
	PagesPerSlab int64
	Slabs        int64 // num_slabs
}

// Snapshot is the kernel's memory counters at one moment.
type Snapshot struct {
	Caches  map[string]Cache
	Meminfo map[string]int64 // /proc/meminfo, in bytes
}

// Paths the counters are read from; tests point them elsewhere.
var (
	slabinfoPath = "/proc/slabinfo"
	meminfoPath  = "/proc/meminfo"
	slabSysfs    = "/sys/kernel/slab"
)

// ParseSlabinfo reads /proc/slabinfo's format 2.1.
func ParseSlabinfo(r io.Reader) (map[string]Cache, error) {
	sc := bufio.NewScanner(r)
	caches := map[string]Cache{}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			if !strings.HasPrefix(text, "slabinfo - version: 2.") {
				return nil, fmt.Errorf("slabinfo: unknown format %q", text)
			}
			continue
		}
		if strings.HasPrefix(text, "#") {
			continue
		}
		// name active num objsize objperslab pagesperslab : tunables l b s : slabdata active_slabs num_slabs shared
		f := strings.Fields(text)
		if len(f) < 16 || f[6] != ":" || f[7] != "tunables" || f[11] != ":" || f[12] != "slabdata" {
			return nil, fmt.Errorf("slabinfo line %d: unexpected layout %q", line, text)
		}
		var n [6]int64
		for i, idx := range []int{1, 2, 3, 4, 5, 14} {
			v, err := strconv.ParseInt(f[idx], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("slabinfo line %d: field %d: %w", line, idx+1, err)
			}
			n[i] = v
		}
		caches[f[0]] = Cache{Name: f[0], Active: n[0], Objects: n[1], ObjSize: n[2], PerSlab: n[3], PagesPerSlab: n[4], Slabs: n[5]}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(caches) == 0 {
		return nil, errors.New("slabinfo: no caches")
	}
	return caches, nil
}

// ParseMeminfo reads /proc/meminfo into bytes per field.
func ParseMeminfo(r io.Reader) (map[string]int64, error) {
	sc := bufio.NewScanner(r)
	out := map[string]int64{}
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("meminfo %s: %w", name, err)
		}
		if len(f) > 1 && f[1] == "kB" {
			v *= 1024
		}
		out[name] = v
	}
	return out, sc.Err()
}

// Available says why the counters cannot be read here, or "".
func Available() string {
	if _, err := os.Stat(slabinfoPath); err != nil {
		return "no /proc/slabinfo (a kernel without CONFIG_SLUB_DEBUG, or SLOB): " + err.Error()
	}
	f, err := os.Open(slabinfoPath)
	if err != nil {
		return "cannot read /proc/slabinfo (needs root): " + err.Error()
	}
	f.Close()
	return ""
}

// shrinkAll writes 1 to every cache's shrink file and says whether every
// cache has sanity checks on (slub_debug=F). Merged caches appear under
// several names as links to one directory; each directory is shrunk once.
func shrinkAll() (allDebug bool, err error) {
	entries, err := os.ReadDir(slabSysfs)
	if err != nil {
		return false, err
	}
	n, debug := 0, 0
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 || !e.IsDir() {
			continue
		}
		dir := filepath.Join(slabSysfs, e.Name())
		if err := os.WriteFile(filepath.Join(dir, "shrink"), []byte("1"), 0); err != nil {
			return false, err
		}
		if b, err := os.ReadFile(filepath.Join(dir, "sanity_checks")); err == nil && strings.TrimSpace(string(b)) == "1" {
			debug++
		}
		n++
	}
	if n == 0 {
		return false, fmt.Errorf("%s: no caches", slabSysfs)
	}
	return debug == n, nil
}

// Method says how a Snapshot's counts were made exact.
const (
	MethodExact  = "exact"  // slub_debug=F: no per-CPU slabs at all
	MethodShrink = "shrink" // every cache shrunk before the reading
	MethodPlain  = "plain"  // no /sys/kernel/slab: counts include per-CPU slabs
)

// exactCounts remembers that every cache is a debug cache (slub_debug=F),
// once seen: the flags cannot change while the kernel runs.
var exactCounts bool

// Read reads the counters, after shrinking every cache (where
// /sys/kernel/slab allows it) unless the counts are exact anyway. It
// returns the method it could use. In exact mode a reading opens two files
// and nothing else: each of the hundred-odd shrink files a shrink opens
// costs objects the kernel frees only after an RCU grace period, which
// would be counted as in use.
func Read() (Snapshot, string, error) {
	method := MethodExact
	if !exactCounts {
		method = MethodShrink
		if allDebug, err := shrinkAll(); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return Snapshot{}, "", fmt.Errorf("shrink the slab caches: %w", err)
			}
			method = MethodPlain
		} else if allDebug {
			exactCounts, method = true, MethodExact
		}
	}
	var s Snapshot
	f, err := os.Open(slabinfoPath)
	if err != nil {
		return s, "", err
	}
	s.Caches, err = ParseSlabinfo(f)
	f.Close()
	if err != nil {
		return s, "", err
	}
	f, err = os.Open(meminfoPath)
	if err != nil {
		return s, "", err
	}
	s.Meminfo, err = ParseMeminfo(f)
	f.Close()
	return s, method, err
}

// ActiveBytes is the memory in use in objects, over all caches.
func (s Snapshot) ActiveBytes() int64 {
	var t int64
	for _, c := range s.Caches {
		t += c.Active * c.ObjSize
	}
	return t
}

// CacheDelta is how one cache changed between two snapshots.
type CacheDelta struct {
	Name      string `json:"name"`
	ObjSize   int64  `json:"objsize"`
	Objects   int64  `json:"objects"`    // change of objects in use
	SlabBytes int64  `json:"slab_bytes"` // change of the cache's slab pages, in bytes
}

// Delta is what changed between two snapshots.
type Delta struct {
	Caches []CacheDelta // caches whose objects or slabs changed, largest change first
	// ObjectBytes is the change in objects in use, times their size.
	ObjectBytes int64
	// SlabBytes is the change in slab pages (what the caches hold,
	// partly filled slabs included).
	SlabBytes int64
	// MemFree is the change of MemFree, in bytes (negative: used).
	MemFree int64
}

// pageSize is the page size of the slab counters; both arm64 images and
// every x86-64 kernel use 4 KiB pages.
var pageSize = int64(os.Getpagesize())

// Diff is after minus before.
func Diff(before, after Snapshot) Delta {
	var d Delta
	names := map[string]bool{}
	for n := range before.Caches {
		names[n] = true
	}
	for n := range after.Caches {
		names[n] = true
	}
	for n := range names {
		b, a := before.Caches[n], after.Caches[n]
		size := max(a.ObjSize, b.ObjSize)
		cd := CacheDelta{Name: n, ObjSize: size, Objects: a.Active - b.Active,
			SlabBytes: (a.Slabs*a.PagesPerSlab - b.Slabs*b.PagesPerSlab) * pageSize}
		if cd.Objects == 0 && cd.SlabBytes == 0 {
			continue
		}
		d.Caches = append(d.Caches, cd)
		d.ObjectBytes += cd.Objects * size
		d.SlabBytes += cd.SlabBytes
	}
	sort.Slice(d.Caches, func(i, j int) bool {
		bi, bj := abs(d.Caches[i].Objects*d.Caches[i].ObjSize), abs(d.Caches[j].Objects*d.Caches[j].ObjSize)
		if bi != bj {
			return bi > bj
		}
		return d.Caches[i].Name < d.Caches[j].Name
	})
	d.MemFree = after.Meminfo["MemFree"] - before.Meminfo["MemFree"]
	return d
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
