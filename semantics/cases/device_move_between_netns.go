// SPDX-License-Identifier: GPL-2.0

package cases

import (
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
// Then wy, the end of a second down veth wx/wy in B, moves to A, where its
// ifindex is taken: A holds the veth ca/cb, created before any socket with
// ca at wy's ifindex (and cb at an ifindex nothing else uses). The kernel
// gives wy a fresh ifindex N in A (dev_new_index()), and the RTM_DELLINK
// in B says so exactly: IFLA_NEW_NETNSID X again (no new id, so no
// RTM_NEWNSID anywhere) and IFLA_NEW_IFINDEX N, the ifindex A reports for
// wy afterwards. The RTM_NEWLINK in A carries IFLA_LINK_NETNSID Y (wx
// stays in B). o gets the two with 11 and 12 as before, f nothing. (A
// second move of vx would do as well, but its RTM_DELLINK would also carry
// IFLA_LINK_NETNSID, vy being in A by then, and kernels differ in where
// they put it among the attributes.)
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
	nsB.Do(rtnl.NewVeth("wx", "wy", -1))
	wy := linkIndex(t, nsB, "wy")
	// ca takes wy's ifindex in A; cb gets one far above anything in use.
	nsA.Do(rtnl.NewVethAt("ca", wy, "cb", wy+100))
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
	newIDInB := selftests.NSIDNotification(unix.RTM_NEWNSID, aInB)
	delLink := selftests.Notification(unix.RTM_DELLINK, unix.RTNLGRP_LINK,
		rtnl.LinkDetail("vy", rtnl.NewNetnsid(aInB), rtnl.NewIfindex(int32(vy))))
	newIDInA := selftests.NSIDNotification(unix.RTM_NEWNSID, bInA)
	newLink := selftests.Notification(unix.RTM_NEWLINK, unix.RTNLGRP_LINK,
		rtnl.LinkDetail("vy", rtnl.LinkNetnsid(bInA)))

	b.Expect(newIDInB, delLink)
	a.Expect(newIDInA, newLink)
	o.Expect(newIDInB.NSID(idOfB), delLink.NSID(idOfB), newIDInA.NSID(idOfA), newLink.NSID(idOfA))
	f.Expect()

	// wy into A, where its ifindex is ca's.
	nsB.Do(rtnl.MoveLink(wy, nsA.FD()))
	wyInA := linkIndex(t, nsA, "wy")
	if wyInA == wy || wyInA == vy {
		t.Errorf("wy has ifindex %d in A, want a fresh one (not %d, ca's, nor %d, vy's)", wyInA, wy, vy)
	}
	if got, back := nsB.IDOf(nsA), nsA.IDOf(nsB); got != aInB || back != bInA {
		t.Errorf("after the second move: id of A in B = %d, of B in A = %d; want %d and %d as before", got, back, aInB, bInA)
	}
	delLink = selftests.Notification(unix.RTM_DELLINK, unix.RTNLGRP_LINK,
		rtnl.LinkDetail("wy", rtnl.NewNetnsid(aInB), rtnl.NewIfindex(int32(wyInA))))
	newLink = selftests.Notification(unix.RTM_NEWLINK, unix.RTNLGRP_LINK,
		rtnl.LinkDetail("wy", rtnl.LinkNetnsid(bInA)))
	b.Expect(delLink)
	a.Expect(newLink)
	o.Expect(delLink.NSID(idOfB), newLink.NSID(idOfA))
	f.Expect()
}

// linkIndex returns the ifindex of the interface called name in n.
func linkIndex(t selftests.T, n *selftests.NS, name string) uint32 {
	t.Helper()
	return n.LinkIndex(name)
}
