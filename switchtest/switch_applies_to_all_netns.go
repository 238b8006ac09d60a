// SPDX-License-Identifier: GPL-2.0

package main

import "nlmcast/selftests"

// switchAppliesToAllNetns: one write in the initial namespace sets the
// walk for notifications from every namespace. With the switch at 1 and
// then at 0, each of the four namespaces of the matrix in turn is the
// source of E1 and of the group-36 event, and every member gets exactly
// the unpatched kernel's result: local plain and ALL_NSID members one copy
// without nsid, mapped ALL_NSID members one copy with their own id for the
// source, plain and unmapped foreign members nothing. Delivery is the same
// in both modes by design, so what the case observes is that the indexed
// walk is right whichever child namespace sends, not only for one. (A
// child namespace cannot set its own value: switch_visible_only_in_init_net.)
//
// Kernel: netlink_broadcast() reads the single global
// netlink_route_mc_index and, at 1, walks netlink_route_mc_head(net) of
// the sender's namespace, then netlink_route_all_nsid_list skipping that
// namespace's sockets; do_one_broadcast() decides as before.
func switchAppliesToAllNetns(t selftests.T) {
	sw := requireSwitch(t)
	restoreAtEnd(t, sw)
	sc := newScenario(t, "")
	for _, mode := range []string{"1", "0"} {
		setSwitch(t, sw, mode)
		sc.everySource()
	}
}
