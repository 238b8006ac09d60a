// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// switchDeviceMoveFollowsNetns: a device's notifications follow it into
// its new namespace, with the switch at 1 and at 0. In each mode, fresh
// namespaces: A holds the veth vx/vy (both down), O maps A as 21 and B as
// 22; a (in A), b (in B) and the ALL_NSID o (in O) join RTNLGRP_LINK and
// RTNLGRP_IPV4_IFADDR. vy moves from A to B: a gets the RTM_DELLINK
// (IFLA_NEW_NETNSID: A's id for B; IFLA_NEW_IFINDEX: vy's ifindex in B),
// b the RTM_NEWLINK (IFLA_LINK_NETNSID: B's id for A, where vx stayed), o
// both, with 21 and then 22. Then, in B, 203.0.113.1/24 is added to vy and
// vy goes up and down: each change reaches b and o (with 22, B's id, not
// A's 21) and never a. vx stays down, so vy
// never gets a carrier and no asynchronous linkwatch notification comes.
//
// The RTM_NEWLINK of a flag change is the kernel's own (__dev_notify_flags()
// -> rtmsg_ifinfo() with no request header): seq 0, pid 0.
//
// Kernel: __dev_change_net_namespace() (rtmsg_ifinfo_newnet(RTM_DELLINK)
// in the old namespace, dev_net_set(), RTM_NEWLINK in the new one); with
// the switch at 1 the walk starts at netlink_route_mc_head(net) of the
// device's current namespace, sock_net(ssk) for net->rtnl.
func switchDeviceMoveFollowsNetns(t selftests.T) {
	sw := requireSwitch(t)
	restoreAtEnd(t, sw)
	for _, mode := range []string{"1", "0"} {
		setSwitch(t, sw, mode)
		deviceMoveFollowsNetns(t, mode)
	}
}

func deviceMoveFollowsNetns(t selftests.T, mode string) {
	t.Helper()
	nsA, nsB, nsO := selftests.NewNS(t, "A"+mode), selftests.NewNS(t, "B"+mode), selftests.NewNS(t, "O"+mode)
	const idOfA, idOfB = 21, 22
	nsO.Map(nsA, idOfA)
	nsO.Map(nsB, idOfB)
	nsA.Do(rtnl.NewVeth("vx", "vy", -1))
	vy := nsLinkIndex(t, nsA, "vy")

	groups := selftests.Join(unix.RTNLGRP_LINK, unix.RTNLGRP_IPV4_IFADDR)
	a := nsA.Socket("a", groups)
	b := nsB.Socket("b", groups)
	o := nsO.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), groups)

	nsA.Do(rtnl.MoveLink(vy, nsB.FD()))
	bInA, aInB := nsA.IDOf(nsB), nsB.IDOf(nsA)
	vyInB := nsLinkIndex(t, nsB, "vy")
	delLink := selftests.Notification(unix.RTM_DELLINK, unix.RTNLGRP_LINK,
		fmt.Sprintf("vy new_netnsid %d new_ifindex %d", bInA, vyInB))
	newLink := selftests.Notification(unix.RTM_NEWLINK, unix.RTNLGRP_LINK,
		fmt.Sprintf("vy link_netnsid %d", aInB))
	a.Expect(delLink)
	b.Expect(newLink)
	o.Expect(delLink.NSID(idOfA), newLink.NSID(idOfB))

	p := netip.MustParsePrefix("203.0.113.1/24")
	rep := nsB.Do(rtnl.NewAddr(vyInB, p))
	newAddr := selftests.Msg{Type: unix.RTM_NEWADDR, Seq: rep.Seq, Pid: nsB.Ctl.Portid(), Group: unix.RTNLGRP_IPV4_IFADDR,
		Detail: fmt.Sprintf("%s dev %d", p, vyInB)}
	b.Expect(newAddr)
	o.Expect(newAddr.NSID(idOfB))
	a.Expect()

	for _, up := range []bool{true, false} {
		nsB.Do(rtnl.SetUp(vyInB, up))
		link := selftests.Notification(unix.RTM_NEWLINK, unix.RTNLGRP_LINK, fmt.Sprintf("vy link_netnsid %d", aInB))
		b.Expect(link)
		o.Expect(link.NSID(idOfB))
		a.Expect()
	}
}

// nsLinkIndex returns the ifindex of the interface called name in n.
func nsLinkIndex(t selftests.T, n *selftests.NS, name string) uint32 {
	t.Helper()
	rep := n.Do(rtnl.GetLink(name))
	if len(rep.Msgs) != 1 {
		t.Fatalf("netns %s: RTM_GETLINK %s: %d replies, want 1", n.Name, name, len(rep.Msgs))
	}
	i, err := rtnl.LinkIndex(rep.Msgs[0])
	if err != nil {
		t.Fatalf("netns %s: RTM_GETLINK %s: %v", n.Name, name, err)
	}
	return i
}
