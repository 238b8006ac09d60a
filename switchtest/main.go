// SPDX-License-Identifier: GPL-2.0

// Command netlink_mcast_switch checks net.core.netlink_route_mc_index, the
// switch of the "optional per-netns ROUTE multicast index" series: that it
// defaults to 0, exists only in the initial namespace, accepts only 0 and
// 1, applies to every namespace at once, takes existing subscriptions into
// account the moment it flips, and never changes which sockets receive a
// notification: a delivery matrix run in mode 0 and in mode 1 must give
// the unpatched kernel's result, socket by socket, message by message.
// Each kind of subscription change is made in one mode and checked after
// the flip to the other (flips.go), and the semantics suite's whole table
// runs again with the switch at 1 and at 0 (modes.go), so that one default
// run covers both walks.
//
// On a kernel without the switch every case SKIPs (exit status 4). The
// program saves the switch's value before the first case and puts it back
// on every way out; copies of it running at once take turns (Suite.Switch).
package main

import (
	"os"

	"nlmcast/selftests"
)

func main() {
	os.Exit(selftests.Main(suite))
}

var suite = selftests.Suite{
	Name:   "netlink_mcast_switch",
	About:  "Checks net.core.netlink_route_mc_index: its default, where it exists, the values it takes, that it applies to every namespace at once and at once to existing subscriptions, and that both modes deliver exactly what the unpatched kernel delivers (the semantics cases run again at 1 and at 0).",
	Cases:  cases,
	Switch: true,
}
