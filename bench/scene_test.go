// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"nlmcast/selftests/rtnl"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (namespaces, SO_RCVBUFFORCE)")
	}
}

// A small fixture of every kind runs its unit and passes validation on the
// running kernel.
func TestScenesRunOnThisKernel(t *testing.T) {
	needRoot(t)
	senders := []*sender{newSender(), newSender()}
	defer senders[0].stop()
	defer senders[1].stop()
	for _, name := range []string{"T1-n900-d2", "T3-monitor1", "C2-candidate900", "C4-all450", "C7-option-route", "PAR-n900"} {
		list, err := findScenes(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := list[0].override(10, -1)
		f, err := build(sc, 64, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var units []func() error
		if sc.Kind == optionChanges {
			units = []func() error{func() error { return optionUnit(f.pool) }}
		} else {
			for _, s := range f.sources {
				units = append(units, s.batch.run)
			}
		}
		for k := 0; k < 3; k++ {
			if _, err := measure(senders, units); err != nil {
				t.Errorf("%s unit %d: %v", name, k, err)
			}
		}
		if err := f.checkSilent(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.close()
	}
}

// A receive buffer too small for a batch overruns, and the unit fails.
func TestOverrunFailsTheUnit(t *testing.T) {
	needRoot(t)
	saved := receiveBuffer
	receiveBuffer = 4096
	defer func() { receiveBuffer = saved }()
	f, err := build(scenes[5], 2640, nil) // C1-n0
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	err = f.sources[0].batch.run()
	if err == nil || !strings.Contains(err.Error(), "overrun") {
		t.Errorf("got %v, want an overrun", err)
	}
}

// A request the kernel refuses fails the pipeline with its errno.
func TestPipelineReportsARefusedRequest(t *testing.T) {
	needRoot(t)
	f, err := build(scenes[5], 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	b := f.sources[0].batch
	// Route 3 through a nexthop that does not exist.
	binary := b.reqs[0]
	m := binary.buf[binary.offs[3]:binary.offs[4]]
	patched := false
	for off := unixNlmsgHdr + 12; off+8 <= len(m); {
		al := int(m[off]) | int(m[off+1])<<8
		if int(m[off+2])|int(m[off+3])<<8 == 30 { // RTA_NH_ID
			m[off+4] = 99
			patched = true
		}
		off += (al + 3) &^ 3
	}
	if !patched {
		t.Fatal("no RTA_NH_ID in request 3")
	}
	err = b.run()
	if err == nil || !strings.Contains(err.Error(), "request 3") {
		t.Errorf("got %v, want request 3 refused", err)
	}
}

const unixNlmsgHdr = 16

// A notification on a socket that must receive nothing is reported: C2's
// local candidates are on RTNLGRP_LINK, so a link change in the source
// reaches them.
func TestCheckSilentCatchesAStrayNotification(t *testing.T) {
	needRoot(t)
	sc := scenes[6].override(3, -1) // C2-candidate900
	f, err := build(sc, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	if err := f.checkSilent(); err != nil {
		t.Fatalf("before: %v", err)
	}
	if _, err := f.sources[0].ctl.Do(rtnl.SetUp(rtnl.LoopbackIndex, false)); err != nil {
		t.Fatal(err)
	}
	err = f.checkSilent()
	if err == nil || !strings.Contains(err.Error(), "must receive nothing") {
		t.Errorf("got %v, want a stray datagram reported", err)
	}
}

// A label names every parameter that is not the letter's, so that a
// smaller run is never mistaken for the letter's scene; -routes does not
// concern a unit that replaces no routes.
func TestLabelNamesOverrides(t *testing.T) {
	byName := func(name string) Scene {
		list, err := findScenes(name)
		if err != nil {
			t.Fatal(err)
		}
		return list[0]
	}
	for _, c := range []struct {
		sc   Scene
		want string
	}{
		{byName("T1-n900-d0").override(-1, -1).withRoutes(defaultRoutes), "T1-n900-d0"},
		{byName("T1-n900-d0").override(900, 0).withRoutes(defaultRoutes), "T1-n900-d0"},
		{byName("T1-n900-d0").override(50, -1).withRoutes(defaultRoutes), "T1-n900-d0[n=50,d=0]"},
		{byName("T1-n900-d0").override(-1, -1).withRoutes(660), "T1-n900-d0[routes=660]"},
		{byName("PAR-n900").override(50, -1).withRoutes(264), "PAR-n900[n=50,d=0,routes=264]"},
		{byName("C7-option-route").override(-1, -1).withRoutes(264), "C7-option-route"},
		{byName("TC-filter-echo").override(-1, -1).withRoutes(264), "TC-filter-echo"},
	} {
		if got := c.sc.Label(); got != c.want {
			t.Errorf("Label() = %q, want %q", got, c.want)
		}
	}
}

// A work unit takes no sequence number from rtnl's counter, which both of
// PAR's senders would share inside their timed units: each batch numbers
// its requests from a range of its own, and the ranges of two sources
// never meet.
func TestBatchesNumberFromTheirOwnRanges(t *testing.T) {
	needRoot(t)
	list, err := findScenes("PAR-n900")
	if err != nil {
		t.Fatal(err)
	}
	f, err := build(list[0].override(4, -1), 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	before := rtnl.NextSeq()
	var firsts []uint32
	for _, src := range f.sources {
		for k := 0; k < 2; k++ {
			firsts = append(firsts, src.batch.seqStart+src.batch.seqOff)
			if err := src.batch.run(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if after := rtnl.NextSeq(); after != before+1 {
		t.Errorf("rtnl's counter went from %d to %d over 4 units: the units took %d numbers from it", before, after, after-before-1)
	}
	if want := []uint32{1 << 31, 1<<31 + 64, 1<<31 + 1<<28, 1<<31 + 1<<28 + 64}; !slices.Equal(firsts, want) {
		t.Errorf("units started at %v, want %v", firsts, want)
	}
	// The last unit that fits in the range, then back to its start.
	b := f.sources[0].batch
	b.seqOff = batchSeqSpan - 64
	for k := 0; k < 2; k++ {
		if err := b.run(); err != nil {
			t.Fatalf("at the range's end, unit %d: %v", k, err)
		}
	}
	if b.seqOff != 64 {
		t.Errorf("after the range's last unit and one more, the next starts at +%d, want +64", b.seqOff)
	}
}
