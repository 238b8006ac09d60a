package main

import "nlmcast/selftests"

// cases is the suite in run order; ../shared/design/cases.md §6 describes
// each one, and each case's doc comment names the kernel code behind it.
var cases = []selftests.Case{
	{Name: "switch_default_off", Run: switchDefaultOff},
	{Name: "switch_visible_only_in_init_net", Run: switchVisibleOnlyInInitNet},
	{Name: "switch_accepts_only_0_and_1", Run: switchAcceptsOnly0And1},
	{Name: "switch_applies_to_all_netns", Run: switchAppliesToAllNetns},
	{Name: "switch_live_includes_existing_subscriptions", Run: switchLiveIncludesExistingSubscriptions},
	{Name: "switch_modes_deliver_identically", Run: switchModesDeliverIdentically},
	{Name: "switch_changes_walk_cost", Run: switchChangesWalkCost},
}
