// SPDX-License-Identifier: GPL-2.0

package main

import (
	"slices"

	"nlmcast/selftests"
)

// cases is the suite in run order: the switch's own cases, the changes
// made in one mode and checked in the other (flips.go), then the
// semantics table at 1 and at 0 (modes.go). Each case's doc comment says
// what it checks and names the kernel code behind it.
var cases = slices.Concat(switchCases, flipCases("0", "1"), flipCases("1", "0"), modeTable("1"), modeTable("0"))

var switchCases = []selftests.Case{
	{Name: "switch_default_off", Run: switchDefaultOff, About: "the switch reads 0 unless configured otherwise, and delivery at that value is the unpatched kernel's"},
	{Name: "switch_visible_only_in_init_net", Run: switchVisibleOnlyInInitNet, About: "the switch is a 0644 file in the initial netns and does not exist in a child netns"},
	{Name: "switch_accepts_only_0_and_1", Run: switchAcceptsOnly0And1, About: "writes other than 0 and 1 fail with EINVAL and leave the value as it was"},
	{Name: "switch_applies_to_all_netns", Run: switchAppliesToAllNetns, About: "one write in the initial netns sets the walk for notifications from every netns, with the unpatched kernel's recipients"},
	{Name: "switch_live_includes_existing_subscriptions", Run: switchLiveIncludesExistingSubscriptions, About: "a flip takes every existing subscription into account at once, whichever mode it was made in"},
	{Name: "switch_modes_deliver_identically", Run: switchModesDeliverIdentically, About: "the whole matrix gives identical transcripts, member by member, at 0 and at 1"},
	{Name: "switch_device_move_follows_netns", Run: switchDeviceMoveFollowsNetns, About: "a moved device's notifications come from its new netns, at 1 and at 0"},
	{Name: "switch_changes_walk_cost", Run: switchChangesWalkCost, About: "at 1 a notification costs less with many foreign subscribers than at 0: the switch changes the walk, not only a stored value"},
}
