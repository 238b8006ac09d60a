// SPDX-License-Identifier: GPL-2.0

// Command netlink_mcast_semantics checks which sockets receive NETLINK_ROUTE
// multicast notifications: local and foreign subscribers, LISTEN_ALL_NSID
// with and without an nsid mapping, sender and portid exclusion, bind
// bitmasks and setsockopt membership, groups above 32, PKTINFO, reads
// into short buffers (MSG_TRUNC), the namespace's count of open netlink
// sockets across close, overruns, device moves, namespace death, nexthop
// and tc notifications (also when tc builds them only for NLM_F_ECHO or a
// listener), NETLINK_USERSOCK, and the RTM_GETADDR dumps targeted with
// IFA_TARGET_NETNSID at the nsid a LISTEN_ALL_NSID notification carries.
//
// Every case must pass on every kernel, with net.core.netlink_route_mc_index
// absent, 0 or 1: the switch changes which sockets the kernel visits, never
// which sockets receive. The program prints kselftest TAP and never changes
// the switch.
package main

import (
	"os"

	"nlmcast/selftests"
	"nlmcast/semantics/cases"
)

func main() {
	os.Exit(selftests.Main(suite))
}

var suite = selftests.Suite{
	Name: "netlink_mcast_semantics",
	About: "Checks which sockets receive NETLINK_ROUTE multicast notifications, exactly (every message each socket got,\n" +
		"compared with the expected): local and foreign subscribers, LISTEN_ALL_NSID, exclusions, memberships, groups\n" +
		"above 32, PKTINFO, overruns, device moves, namespace death. Every case must pass on every kernel, with\n" +
		"net.core.netlink_route_mc_index absent, 0 or 1; the program never changes the switch.",
	Cases: cases.All,
}
