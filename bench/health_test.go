// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"

	"nlmcast/selftests"
	"nlmcast/selftests/kmsg"
)

// A kernel report during a scene fails that scene, with the report's
// lines, and leaves the next scene alone.
func TestKernelReportFailsTheScene(t *testing.T) {
	needRoot(t)
	polls := 0
	restore := selftests.ReplaceKernelLog(func() []kmsg.Report {
		polls++
		if polls != 1 {
			return nil
		}
		return []kmsg.Report{{Kind: "KASAN", Lines: []string{
			"BUG: KASAN: slab-use-after-free in netlink_broadcast+0x1e/0x90",
			"Read of size 8 at addr ffff888012345678 by task netlink_mcast_b/77",
		}}}
	})
	t.Cleanup(restore)
	var out strings.Builder
	code := selftests.Run(suite, []string{"-scene", "C1-n0,C4-all450", "-n", "10", "-rounds", "1", "-samples", "1", "-routes", "64"}, &out, &out)
	for _, want := range []string{
		"# kernel report during C1-n0[n=10,d=0,routes=64]: BUG: KASAN: slab-use-after-free in netlink_broadcast+0x1e/0x90\n",
		"#   | Read of size 8 at addr ffff888012345678 by task netlink_mcast_b/77\n",
		"not ok 1 netlink_mcast_bench.C1-n0[n=10,d=0,routes=64] # kernel report during the case: KASAN time=",
		"\nok 2 netlink_mcast_bench.C4-all450[n=10,d=0,routes=64] # time=",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}
