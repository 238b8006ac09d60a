// SPDX-License-Identifier: GPL-2.0

package main

import "nlmcast/selftests"

// switchLiveIncludesExistingSubscriptions: flipping the switch takes every
// subscription into account at once, whichever mode it was made or
// changed in. The matrix is built with the switch at 0 and, without
// touching a socket, the switch goes to 1: E1 in S and F and the group-36
// event reach exactly the unpatched kernel's recipients. Then, at 1: sp
// binds again with group 7 only (bind replaces 5 and 7), sx leaves group
// 5 (keeping 28, 32 and 36), fa leaves its only group (so it is on no
// list), oa clears LISTEN_ALL_NSID, fp (F maps S) sets it, sa is closed,
// and new members sn (S, plain) and on (O, ALL_NSID) appear; the events
// follow the changes at 1 and, after switching back, at 0. fa rejoins at
// 0 with LISTEN_ALL_NSID still set, and the switch flips twice more with
// the events after each flip.
//
// Kernel (the patch): netlink_update_subscriptions(), which bind() and
// NETLINK_ADD/DROP_MEMBERSHIP go through, calls
// netlink_route_mc_update() on every subscription change, in both modes,
// adding the socket to its namespace's list and, with LISTEN_ALL_NSID, to
// the ALL_NSID list, or removing it from both when it has no group left;
// the NETLINK_LISTEN_ALL_NSID setsockopt updates the ALL_NSID list under
// netlink_table_grab(); netlink_remove() drops a closing socket from both.
func switchLiveIncludesExistingSubscriptions(t selftests.T) {
	sw := requireSwitch(t)
	restoreAtEnd(t, sw)
	setSwitch(t, sw, "0")
	sc := newScenario(t, "")

	setSwitch(t, sw, "1")
	sc.basic()

	sc.rebind("sp", gRoute)
	sc.leave("sx", gAddr)
	sc.leave("fa", gAddr)
	sc.setAllNSID("oa", false)
	sc.setAllNSID("fp", true)
	sc.close("sa")
	sc.add(spec{ns: "S", name: "sn", groups: []uint32{gAddr, gStats}})
	sc.add(spec{ns: "O", name: "on", groups: []uint32{gAddr, gStats}, opts: []int{allNSID}})
	sc.basic()

	setSwitch(t, sw, "0")
	sc.basic()

	sc.join("fa", gAddr)
	for range 2 {
		setSwitch(t, sw, "1")
		sc.basic()
		setSwitch(t, sw, "0")
		sc.basic()
	}
}
