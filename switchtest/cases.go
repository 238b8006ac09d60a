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
	{Name: "switch_default_off", Run: switchDefaultOff},
	{Name: "switch_visible_only_in_init_net", Run: switchVisibleOnlyInInitNet},
	{Name: "switch_accepts_only_0_and_1", Run: switchAcceptsOnly0And1},
	{Name: "switch_applies_to_all_netns", Run: switchAppliesToAllNetns},
	{Name: "switch_live_includes_existing_subscriptions", Run: switchLiveIncludesExistingSubscriptions},
	{Name: "switch_modes_deliver_identically", Run: switchModesDeliverIdentically},
	{Name: "switch_device_move_follows_netns", Run: switchDeviceMoveFollowsNetns},
}
