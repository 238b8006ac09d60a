// SPDX-License-Identifier: GPL-2.0

package kmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// records makes rounds of a socket scene and a namespace scene on two
// kernels: on "m" the patched kernel's netlink_sock moves to kmalloc-2k,
// and each namespace has one kmalloc-8 object more.
func records() []Record {
	var out []Record
	for _, st := range []string{"U", "P0", "P1"} {
		sock, nsCache := "kmalloc-1k", int64(14000)
		size := int64(1024)
		if st != "U" {
			sock, size, nsCache = "kmalloc-2k", 2048, 15000
		}
		for round := 0; round < 3; round++ {
			n := int64(1000)
			extra := int64(round) // rounds differ a little
			out = append(out,
				Record{Machine: "m", Kernel: "k " + st[:1], State: st, Round: round, Scene: "M1", Object: ObjectRouteSocket, N: 1000, Method: MethodExact,
					ObjectBytes: n*(size+256) + extra*256, SlabBytes: n * (size + 256), MemFree: -n * (size + 300),
					Caches: []CacheDelta{{Name: sock, ObjSize: size, Objects: n}, {Name: "filp", ObjSize: 256, Objects: n + extra}}},
				Record{Machine: "m", Kernel: "k " + st[:1], State: st, Round: round, Scene: "M2", Object: ObjectNetns, N: 1000, Method: MethodExact,
					ObjectBytes: nsCache * 8, SlabBytes: nsCache * 8, MemFree: -nsCache * 8,
					Caches: []CacheDelta{{Name: "kmalloc-8", ObjSize: 8, Objects: nsCache}}})
		}
	}
	return out
}

func TestTable(t *testing.T) {
	got := Table(records())
	for _, want := range []string{
		"M1: N = 1000 (open NETLINK_ROUTE sockets, each bound to RTNLGRP_IPV4_ROUTE, in one namespace)",
		"  m U:       k U; 3 round(s)",
		"  m U          1280.3 [1280.0, 1280.5]",
		"    kmalloc-1k               1024    1.000    0.000    0.000   -1024.0",
		"    kmalloc-2k               2048    0.000    1.000    1.000   +2048.0",
		"    m: U kmalloc-1k (1024 B objects), P0 kmalloc-2k (2048 B objects), P1 kmalloc-2k (2048 B objects): the bucket differs between the states",
		"M2: N = 1000 (network namespaces, each held by an open nsfs file)",
		"    kmalloc-8                   8   14.000   15.000   15.000      +8.0",
		"Counting: exact (a kernel booted with slub_debug=F",
		"  m P-U       +1024.0 B/obj of slab objects (P: the P0 and P1 rounds together)",
	} {
		if !strings.Contains(got, want+"\n") && !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "kmalloc bucket") != 1 {
		t.Errorf("the bucket is for the socket scene only:\n%s", got)
	}
	same := Table(records()[:6]) // U only
	if !strings.Contains(same, "m: U kmalloc-1k (1024 B objects): the same bucket in every state") {
		t.Errorf("one state:\n%s", same)
	}
}

// The records survive the results directory, and re-reading it prints the
// same table.
func TestWriteDirRoundTrip(t *testing.T) {
	dir := t.TempDir()
	table, err := WriteDir(dir, records())
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(filepath.Join(dir, TableFile))
	if err != nil {
		t.Fatal(err)
	}
	again, err := Reanalyze(dir)
	if err != nil || again != table {
		t.Errorf("re-analysis differs (%v):\n%s\nvs\n%s", err, again, table)
	}
	if after, err := os.Stat(filepath.Join(dir, TableFile)); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("Reanalyze wrote %s", TableFile)
	}
	if b, err := os.ReadFile(filepath.Join(dir, TableFile)); err != nil || string(b) != table {
		t.Errorf("%s: %v", TableFile, err)
	}
	f, err := os.Open(filepath.Join(dir, RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := ReadJSONL(f)
	if err != nil || len(back) != len(records()) || back[4].Caches[0].Name != "kmalloc-1k" {
		t.Errorf("records: %d, %v", len(back), err)
	}
	tap := "# # " + Line(records()[0]) + "\nok 1 x\n# memory: {broken\n"
	if got, err := ReadTAP(strings.NewReader(tap)); err == nil || len(got) != 1 {
		t.Errorf("ReadTAP: %d records, %v; want 1 and an error for the broken line", len(got), err)
	}
}

// A record of a scene that did not pass is kept in the file and left out
// of the table, which says so; a scene without a verdict counts as one
// that did not pass.
func TestMarkLeavesFailedScenesOut(t *testing.T) {
	marked := Mark(records(), map[string]string{"M1": "", "M2": "not ok: kernel report during the case: WARNING"})
	got := Table(marked)
	if strings.Contains(got, "M2: N =") || !strings.Contains(got, "M1: N =") {
		t.Errorf("M2 (failed) is in the table or M1 (passed) is not:\n%s", got)
	}
	for _, want := range []string{
		"Left out, their scene did not pass (9 rounds):",
		"  3 x M2 m U (boot 0): not ok: kernel report during the case: WARNING",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	none := Table(Mark(records(), map[string]string{}))
	if !strings.HasPrefix(none, "no memory records of a scene that passed\n") || !strings.Contains(none, "no result line") {
		t.Errorf("no verdicts at all:\n%s", none)
	}
	if unmarked := Mark(records(), nil); unmarked[0].Failed != "" {
		t.Errorf("a nil verdict map marked %q", unmarked[0].Failed)
	}
}
