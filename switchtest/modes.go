// SPDX-License-Identifier: GPL-2.0

package main

import (
	"nlmcast/selftests"
	semantics "nlmcast/semantics/cases"
)

// The semantics table in each mode. A default run boots with the switch
// at 0, so netlink_mcast_semantics alone never exercises the indexed walk;
// here the same table (All of package nlmcast/semantics/cases, not a copy)
// runs once with the switch at 1 and once at 0, each case a result of its
// own: netlink_mcast_switch.mode1.<case> and .mode0.<case>.
//
// Order: the whole table at 1, then the whole table at 0. Each block then
// reads like a run of netlink_mcast_semantics booted in that mode, case
// by case in the same order, and the two blocks compare line by line. Mode
// 1 comes first because it is what nothing else in a default run covers:
// a run cut short by the runner's timeout has those results. Each case
// sets the mode itself, so a case's result never depends on the one
// before it. The cases of a block run concurrently, as in the semantics
// program (their Group, suffixed with the mode, keeps the two blocks
// apart): every case of a block sets the same value, and none puts back
// what it found, which would pull the switch from under the others; the
// program restores the value it saved when it ends.

// modeTable returns the semantics table wrapped to run with the switch at mode.
func modeTable(mode string) []selftests.Case {
	out := make([]selftests.Case, len(semantics.All))
	for i, c := range semantics.All {
		out[i] = c
		out[i].Name = "mode" + mode + "." + c.Name
		out[i].Run = selftests.InSwitchMode(mode, false, c.Run)
		out[i].About = "with the switch at " + mode + ": " + c.About
		if c.Group != "" {
			out[i].Group = c.Group + ".mode" + mode
		}
	}
	return out
}
