// SPDX-License-Identifier: GPL-2.0

package main

import (
	"flag"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/mcswitch"
)

// Sizes for trying the measurement out (go test -run TestWalkCostSizes
// -args -walkcost.subscribers=N ...); 0 keeps walkCostDefaults.
var (
	sizeSubscribers = flag.Int("walkcost.subscribers", 0, "foreign subscribers for TestWalkCostSizes")
	sizeNamespaces  = flag.Int("walkcost.namespaces", 0, "foreign namespaces for TestWalkCostSizes")
	sizePairs       = flag.Int("walkcost.pairs", 0, "pairs of blocks for TestWalkCostSizes")
	sizeBlock       = flag.Duration("walkcost.block", 0, "CPU time per block for TestWalkCostSizes")
)

// walkCostTestConfig is walkCostDefaults with the flags applied.
func walkCostTestConfig() walkCostConfig {
	cfg := walkCostDefaults
	for _, o := range []struct {
		flag int
		dst  *int
	}{{*sizeSubscribers, &cfg.subscribers}, {*sizeNamespaces, &cfg.namespaces}, {*sizePairs, &cfg.pairs}} {
		if o.flag > 0 {
			*o.dst = o.flag
		}
	}
	if *sizeBlock > 0 {
		cfg.block = *sizeBlock
	}
	return cfg
}

// TestWalkCostWithOneWalkFails is the detector shown firing on a real
// kernel: the measurement of switch_changes_walk_cost with both blocks of
// every pair at the same walk, mode 0, as on a kernel that stores the
// switch and ignores it. The verdict must be "not cheaper" and shows the
// ratio. On a kernel with the switch, the switch is held at 0 for the
// test; without it, mode 0 is the only walk there is.
func TestWalkCostWithOneWalkFails(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	sw, restore, _, err := mcswitch.Hold(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if sw != nil {
		t.Cleanup(restore)
		if err := sw.Set("0"); err != nil {
			t.Fatal(err)
		}
	}
	f := newWalkFixture(t, walkCostTestConfig())
	// Every block, whichever mode it stands for, runs at 0.
	stillZero := func(int) error { return nil }
	if sw != nil {
		stillZero = func(int) error { return switchIs(sw, 0) }
	}
	pairs, err := f.measure(func(int) error { return nil }, stillZero)
	if err != nil {
		t.Fatal(err)
	}
	v := judgeWalkCost(pairs, walkCostThreshold)
	if v.cheaper {
		t.Fatalf("both blocks of every pair walked mc_list, yet the verdict says mode 1 is cheaper: %v", v)
	}
	t.Logf("the case would fail as it must:\n%s", walkCostFailure(v, f.cfg))
}

// TestWalkCostSizes runs switch_changes_walk_cost with the sizes given by
// the walkcost.* flags, to try other sizes; without them it skips.
func TestWalkCostSizes(t *testing.T) {
	if walkCostTestConfig() == walkCostDefaults {
		t.Skip("no -walkcost.* flag given")
	}
	holdSwitch(t)
	saved := walkCostDefaults
	walkCostDefaults = walkCostTestConfig()
	t.Cleanup(func() { walkCostDefaults = saved })
	t.Logf("sizes %+v", walkCostDefaults)
	switchChangesWalkCost(t)
}

// TestRaiseNoFileRestores: raiseNoFile lifts a soft limit that is too
// low for the subscribers and puts it back when the case ends.
func TestRaiseNoFileRestores(t *testing.T) {
	var orig unix.Rlimit
	if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &orig); err != nil {
		t.Fatal(err)
	}
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	low := unix.Rlimit{Cur: uint64(len(open) + 8), Max: orig.Max}
	if low.Cur+100 > orig.Max {
		t.Skipf("hard RLIMIT_NOFILE %d is too low to test with", orig.Max)
	}
	if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, &low, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Prlimit(0, unix.RLIMIT_NOFILE, &orig, nil) })
	t.Run("raised", func(t *testing.T) {
		raiseNoFile(t, 100)
		var now unix.Rlimit
		if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &now); err != nil {
			t.Fatal(err)
		}
		if now.Cur < uint64(len(open)+100) {
			t.Errorf("RLIMIT_NOFILE is %d after raiseNoFile(100) with %d files open", now.Cur, len(open))
		}
	})
	var after unix.Rlimit
	if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &after); err != nil {
		t.Fatal(err)
	}
	if after != low {
		t.Errorf("RLIMIT_NOFILE is %+v after the case, want it restored to %+v", after, low)
	}
}
