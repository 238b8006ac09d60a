// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"fmt"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// deviceMoveBetweenNetns: moving a device out of a namespace notifies the
// old namespace with RTM_DELLINK and the new one with RTM_NEWLINK, each to
// its own subscribers and to the ALL_NSID listeners that map it; the move
// allocates the nsids the messages carry and announces them with
// RTM_NEWNSID first. The veth vx/vy stays down throughout: a down device
// gets no asynchronous linkwatch RTM_NEWLINK (linkwatch_do_dev() notifies
// only IFF_UP devices), so every message is synchronous, queued before the
// ACK of the move.
//
// Every socket joins RTNLGRP_LINK and RTNLGRP_NSID, so that the transcripts
// account for every message of both groups:
//   - b (in B): RTM_NEWNSID "nsid X" (B's new id for A, allocated by
//     peernet2id_alloc(B, A) in __dev_change_net_namespace()), then
//     RTM_DELLINK vy with IFLA_NEW_NETNSID X and IFLA_NEW_IFINDEX
//     (rtmsg_ifinfo_newnet()).
//   - a (in A): RTM_NEWNSID "nsid Y" (A's new id for B, allocated by
//     rtnl_fill_link_netnsid() -> peernet2id_alloc(A, B) while the
//     RTM_NEWLINK is built, because vy's peer vx stays in B), then
//     RTM_NEWLINK vy with IFLA_LINK_NETNSID Y.
//   - o (in O, ALL_NSID, maps B as 11 and A as 12): B's two messages with
//     nsid 11, then A's two with nsid 12.
//   - f (in F, plain): nothing.
//
// X and Y are read back with RTM_GETNSID after the move; ids mapped before
// it make them differ (the kernel picks the lowest free id), so a message
// carrying the other namespace's id fails.
//
// All are kernel-originated (rtmsg_ifinfo*() and rtnl_net_notifyid() get
// no request header), so seq and pid are 0.
//
// Kernel: __dev_change_net_namespace() (net/core/dev.c);
// rtnl_fill_ifinfo() (IFLA_NEW_NETNSID, IFLA_NEW_IFINDEX,
// rtnl_fill_link_netnsid()); peernet2id_alloc() -> rtnl_net_notifyid(
// RTM_NEWNSID) (net/core/net_namespace.c); do_one_broadcast().
func deviceMoveBetweenNetns(t selftests.T) {
	nsB, nsA, nsO, nsF := selftests.NewNS(t, "B"), selftests.NewNS(t, "A"), selftests.NewNS(t, "O"), selftests.NewNS(t, "F")
	nsB.Do(rtnl.NewVeth("vx", "vy", -1))
	vy := linkIndex(t, nsB, "vy")
	const idOfB, idOfA = 11, 12
	nsO.Map(nsB, idOfB)
	nsO.Map(nsA, idOfA)
	// Unrelated ids take the lowest free ids in B (0) and A (0, 1): the
	// move will allocate 1 in B and 2 in A.
	nsB.Map(nsF, 0)
	nsA.Map(nsF, 0)
	nsA.Map(nsO, 1)
	nsB.RequireNoID(nsA)
	nsA.RequireNoID(nsB)

	groups := selftests.Join(unix.RTNLGRP_LINK, unix.RTNLGRP_NSID)
	b := nsB.Socket("b", groups)
	a := nsA.Socket("a", groups)
	o := nsO.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), groups)
	f := nsF.Socket("f", groups)

	nsB.Do(rtnl.MoveLink(vy, nsA.FD()))

	// The ids the move allocated, as the two namespaces report them now.
	aInB, bInA := nsB.IDOf(nsA), nsA.IDOf(nsB)
	if aInB == rtnl.NotAssigned || bInA == rtnl.NotAssigned || aInB == bInA {
		t.Fatalf("after the move: id of A in B = %d, id of B in A = %d; want two different ids", aInB, bInA)
	}
	if got := linkIndex(t, nsA, "vy"); got != vy {
		t.Errorf("vy has ifindex %d in A, want %d as in B (free in A)", got, vy)
	}
	newIDInB := nsidNotification(unix.RTM_NEWNSID, aInB)
	delLink := selftests.Notification(unix.RTM_DELLINK, unix.RTNLGRP_LINK,
		fmt.Sprintf("vy new_netnsid %d new_ifindex %d", aInB, vy))
	newIDInA := nsidNotification(unix.RTM_NEWNSID, bInA)
	newLink := selftests.Notification(unix.RTM_NEWLINK, unix.RTNLGRP_LINK,
		fmt.Sprintf("vy link_netnsid %d", bInA))

	b.Expect(newIDInB, delLink)
	a.Expect(newIDInA, newLink)
	o.Expect(newIDInB.NSID(idOfB), delLink.NSID(idOfB), newIDInA.NSID(idOfA), newLink.NSID(idOfA))
	f.Expect()
}

// linkIndex returns the ifindex of the interface called name in n.
func linkIndex(t selftests.T, n *selftests.NS, name string) uint32 {
	t.Helper()
	return n.LinkIndex(name)
}
