// SPDX-License-Identifier: GPL-2.0

package kmem

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Lines as 6.1 prints them (x86-64 guest, slub_debug=F slab_nomerge).
const slabinfoBefore = `slabinfo - version: 2.1
# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>
kmalloc-2k           120    128   2048   16    8 : tunables    0    0    0 : slabdata      8      8      0
kmalloc-8           2040   2048      8  512    1 : tunables    0    0    0 : slabdata      4      4      0
ip6-frags              0      0    184   22    1 : tunables    0    0    0 : slabdata      0      0      0
filp                 400    416    256   16    1 : tunables    0    0    0 : slabdata     26     26      0
`

const slabinfoAfter = `slabinfo - version: 2.1
# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>
kmalloc-2k          2120   2128   2048   16    8 : tunables    0    0    0 : slabdata    133    133      0
kmalloc-8           4040   4096      8  512    1 : tunables    0    0    0 : slabdata      8      8      0
ip6-frags              0      0    184   22    1 : tunables    0    0    0 : slabdata      0      0      0
filp                2400   2416    256   16    1 : tunables    0    0    0 : slabdata    151    151      0
`

func TestParseSlabinfo(t *testing.T) {
	got, err := ParseSlabinfo(strings.NewReader(slabinfoBefore))
	if err != nil {
		t.Fatal(err)
	}
	want := Cache{Name: "kmalloc-2k", Active: 120, Objects: 128, ObjSize: 2048, PerSlab: 16, PagesPerSlab: 8, Slabs: 8}
	if len(got) != 4 || got["kmalloc-2k"] != want {
		t.Errorf("got %+v, want 4 caches and %+v", got, want)
	}
	for _, bad := range []string{
		"slabinfo - version: 1.1\n",
		"slabinfo - version: 2.1\nkmalloc-8 1 2 3\n",
		"slabinfo - version: 2.1\nkmalloc-8 x 2048 8 512 1 : tunables 0 0 0 : slabdata 4 4 0\n",
		"slabinfo - version: 2.1\n",
	} {
		if _, err := ParseSlabinfo(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseSlabinfo(%q) accepted it", bad)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	got, err := ParseMeminfo(strings.NewReader("MemTotal:        1008364 kB\nMemFree:          918100 kB\nHugePages_Total:       0\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"MemTotal": 1008364 * 1024, "MemFree": 918100 * 1024, "HugePages_Total": 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func snapshot(t *testing.T, slabinfo string, memfree int64) Snapshot {
	t.Helper()
	c, err := ParseSlabinfo(strings.NewReader(slabinfo))
	if err != nil {
		t.Fatal(err)
	}
	return Snapshot{Caches: c, Meminfo: map[string]int64{"MemFree": memfree}}
}

func TestDiff(t *testing.T) {
	d := Diff(snapshot(t, slabinfoBefore, 1<<30), snapshot(t, slabinfoAfter, 1<<30-7<<20))
	want := []CacheDelta{
		{Name: "kmalloc-2k", ObjSize: 2048, Objects: 2000, SlabBytes: 125 * 8 * 4096},
		{Name: "filp", ObjSize: 256, Objects: 2000, SlabBytes: 125 * 4096},
		{Name: "kmalloc-8", ObjSize: 8, Objects: 2000, SlabBytes: 4 * 4096},
	}
	if !reflect.DeepEqual(d.Caches, want) {
		t.Errorf("caches %+v\nwant %+v", d.Caches, want)
	}
	if d.ObjectBytes != 2000*(2048+256+8) || d.SlabBytes != (1000+125+4)*4096 || d.MemFree != -7<<20 {
		t.Errorf("totals: objects %d slabs %d memfree %d", d.ObjectBytes, d.SlabBytes, d.MemFree)
	}
}

// A fake /sys/kernel/slab: every cache directory is shrunk once (links,
// the merged names, are not), and the method says whether every cache has
// sanity checks on.
func TestReadShrinksAndNamesTheMethod(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []string{":0000192", "kmalloc-8"} {
		if err := os.MkdirAll(filepath.Join(dir, c), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c, "sanity_checks"), []byte("0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A merged name is a link; here to a directory of its own, which
	// shows whether the link was followed.
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, "dentry")); err != nil {
		t.Fatal(err)
	}
	slabinfo := filepath.Join(dir, "slabinfo")
	meminfo := filepath.Join(dir, "meminfo")
	if err := os.WriteFile(slabinfo, []byte(slabinfoBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meminfo, []byte("MemFree: 10 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(a, b, c string) { slabSysfs, slabinfoPath, meminfoPath = a, b, c; exactCounts = false }(slabSysfs, slabinfoPath, meminfoPath)
	slabSysfs, slabinfoPath, meminfoPath = dir, slabinfo, meminfo

	s, method, err := Read()
	if err != nil || method != MethodShrink || len(s.Caches) != 4 || s.Meminfo["MemFree"] != 10240 {
		t.Fatalf("Read = %d caches, %q, %v", len(s.Caches), method, err)
	}
	for _, c := range []string{":0000192", "kmalloc-8"} {
		if b, err := os.ReadFile(filepath.Join(dir, c, "shrink")); err != nil || string(b) != "1" {
			t.Errorf("%s not shrunk: %q %v", c, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "shrink")); err == nil {
		t.Error("a merged name (a link) was shrunk as a cache of its own")
	}
	for _, c := range []string{":0000192", "kmalloc-8"} {
		if err := os.WriteFile(filepath.Join(dir, c, "sanity_checks"), []byte("1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, method, err := Read(); err != nil || method != MethodExact {
		t.Errorf("all caches with sanity checks: method %q, %v", method, err)
	}
	// Exact counts need no shrinking from then on.
	for _, c := range []string{":0000192", "kmalloc-8"} {
		os.Remove(filepath.Join(dir, c, "shrink"))
	}
	if _, method, err := Read(); err != nil || method != MethodExact {
		t.Errorf("second exact reading: method %q, %v", method, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kmalloc-8", "shrink")); err == nil {
		t.Error("an exact reading shrank the caches")
	}

	exactCounts = false
	slabSysfs = filepath.Join(dir, "missing")
	if _, method, err := Read(); err != nil || method != MethodPlain {
		t.Errorf("no /sys/kernel/slab: method %q, %v", method, err)
	}
}
