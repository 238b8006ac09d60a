// SPDX-License-Identifier: GPL-2.0

package sample

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestTAPRoundTrip(t *testing.T) {
	want := Sample{Kernel: "6.1.192", State: "P1", Boot: 2, Round: 1, Sample: 3, Scene: "T1-n900-d0",
		N: 900, WallNS: 123456, ThreadNS: 120000, UserNS: 4000, SysNS: 116000, Ops: 2640, CPUs: 2}
	// The bench prints "# sample: ..."; vmtest's guest runner indents it
	// with one more "# ".
	tap := "TAP version 13\n# " + Line(want) + "\n# # " + Line(want) + "\nok 1 bench.T1-n900-d0\n"
	got, err := ReadTAP(strings.NewReader(tap), "bench")
	if err != nil || len(got.Samples) != 2 || got.Samples[0] != want || got.Samples[1] != want || len(got.Malformed) != 0 {
		t.Fatalf("got %+v, %v; want two copies of %+v", got, err, want)
	}
	var b bytes.Buffer
	if err := WriteJSONL(&b, got.Marked()); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSONL(&b)
	if err != nil || len(back) != 2 || back[1] != want {
		t.Errorf("JSONL round trip: %+v, %v", back, err)
	}
}

// A sample line cut short (the guest killed in the middle of it) is left
// out alone: the samples before and after it stay. Each sample is marked
// with its scene's result in that TAP; a scene without a result line (the
// run ended during it) is marked too.
func TestReadTAPMarksAndKeeps(t *testing.T) {
	s := func(scene string, k int) Sample {
		return Sample{Kernel: "k", State: "U", Scene: scene, Sample: k, WallNS: int64(100 + k), Ops: 64}
	}
	lines := []string{
		"TAP version 13",
		"# # " + Line(s("C1-n0", 0)),
		"# # " + cut(Line(s("C1-n0", 1))), // the guest killed mid-line
		"# # " + Line(s("C1-n0", 2)),
		"# ok 1 netlink_mcast_bench.C1-n0 # time=80ms",
		"# # " + Line(s("C4-all450", 1)),
		"# # C4-all450: main.go:203: state U round 0: socket \"f3\" in netns F1, which must receive nothing, has a 20-byte datagram queued",
		"# not ok 2 netlink_mcast_bench.C4-all450 # time=90ms",
		"# # " + Line(s("C2-candidate900", 1)),
		"# not ok 3 netlink_mcast_bench.C2-candidate900 # kernel report during the case: KASAN time=12ms",
		"# # " + Line(s("T2-field-c0", 1)),
		"# ok 4 netlink_mcast_bench.T2-field-c0 # SKIP net.ipv4.nexthop_compat_mode not supported time=1ms",
		"# # " + Line(s("PAR-n900", 1)),
		"# # " + cut(Line(s("PAR-n900", 2))),
		"not ok 1 selftests: netlink_mcast: netlink_mcast_bench # exit=1", // the runner's own line
	}
	got, err := ReadTAP(strings.NewReader(strings.Join(lines, "\n")), "netlink_mcast_bench")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Samples) != 6 || len(got.Malformed) != 2 || !strings.Contains(got.Malformed[0], `"scene":"C1`) {
		t.Fatalf("%d samples, malformed %q; want 6 and 2", len(got.Samples), got.Malformed)
	}
	var marks []string
	for _, m := range got.Marked() {
		marks = append(marks, m.Scene+"="+m.Failed)
	}
	want := []string{
		"C1-n0=", "C1-n0=",
		`C4-all450=not ok: main.go:203: state U round 0: socket "f3" in netns F1, which must receive nothing, has a 20-byte datagram queued`,
		"C2-candidate900=not ok: kernel report during the case: KASAN",
		"T2-field-c0=SKIP: net.ipv4.nexthop_compat_mode not supported",
		"PAR-n900=" + NoResult,
	}
	if !slices.Equal(marks, want) {
		t.Errorf("marks:\n%s\nwant:\n%s", strings.Join(marks, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := got.Results["netlink_mcast"]; ok || len(got.Results) != 4 {
		t.Errorf("results %v: the runner's own line was taken for a scene", got.Results)
	}
}

// cut is a line cut short 20 bytes before its end.
func cut(line string) string { return line[:len(line)-20] }
