// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"

	"nlmcast/selftests/kmsg"
)

// reportOnce hands out one kernel report on the first Poll.
type reportOnce struct{ polled bool }

func (r *reportOnce) Poll() []kmsg.Report {
	if r.polled {
		return nil
	}
	r.polled = true
	return []kmsg.Report{{Kind: "KASAN", Lines: []string{
		"BUG: KASAN: slab-use-after-free in netlink_broadcast+0x1e/0x90",
		"Read of size 8 at addr ffff888012345678 by task netlink_mcast_b/77",
	}}}
}

func (r *reportOnce) Close() error { return nil }

// A kernel report during a scene fails that scene, with the report's
// lines, and leaves the next scene alone.
func TestKernelReportFailsTheScene(t *testing.T) {
	needRoot(t)
	openKernelLog = func() (kernelReporter, error) { return &reportOnce{}, nil }
	t.Cleanup(func() { openKernelLog = func() (kernelReporter, error) { return kmsg.Open() } })
	f, err := parse([]string{"-scene", "C1-n0,C1-n0", "-rounds", "1", "-samples", "1", "-routes", "64"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := chosenScenes(f)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	code := bench(f, list, &out)
	for _, want := range []string{
		"# C1-n0: kernel report during the scene: BUG: KASAN: slab-use-after-free in netlink_broadcast+0x1e/0x90\n",
		"#   | Read of size 8 at addr ffff888012345678 by task netlink_mcast_b/77\n",
		"not ok 1 netlink_mcast_bench.C1-n0 # kernel report during the scene: KASAN time=",
		"\nok 2 netlink_mcast_bench.C1-n0 # time=",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}
