// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// netnsDeathRemovesLinkedDevice: a device in a namespace that lives on but
// linked to one that dies (a macvlan whose lower device is in D) goes with
// it. The surviving namespace's subscribers get RTM_DELNSID for D first,
// then RTM_DELLINK for the device, whose IFLA_LINK_NETNSID is -1
// (NETNSA_NSID_NOT_ASSIGNED): the id went before the device did, and a
// dying namespace is given no new one. The id is free again afterwards: the
// next peer given an id of the kernel's choice gets it.
//
// mv is made in D on the down veth dx/dy and moved to P, which gives P an
// id for D (the RTM_NEWLINK in P carries it as IFLA_LINK_NETNSID). mv stays
// down, so nothing about it is asynchronous but D's death. p, in P on
// RTNLGRP_LINK and RTNLGRP_NSID, opens after the move.
//
// Kernel: cleanup_net(): unhash_nsid() removes P's id for D and sends
// RTM_DELNSID (rtnl_net_notifyid(P, RTM_DELNSID, id, 0, NULL)) before
// ops_exit_list() unregisters D's devices; dx's NETDEV_UNREGISTER ->
// macvlan_device_event() -> unregister_netdevice_many(mv) ->
// rtmsg_ifinfo_build_skb(RTM_DELLINK) -> rtnl_fill_link_netnsid(): the link
// net is dx's, D -> peernet2id_alloc(P, D): no id, and maybe_get_net(D)
// fails (its count is 0): spin_unlock_bh(), NETNSA_NSID_NOT_ASSIGNED.
func netnsDeathRemovesLinkedDevice(t selftests.T) {
	nsP, nsD, nsQ := selftests.NewNS(t, "P"), selftests.NewNS(t, "D"), selftests.NewNS(t, "Q")
	nsD.Do(rtnl.NewVeth("dx", "dy", -1))
	if _, err := nsD.Ctl.Do(rtnl.NewMacvlan("mv", linkIndex(t, nsD, "dx"))); errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("netns D: %v: the kernel has no macvlan (CONFIG_MACVLAN), the case's linked device", err)
	} else if err != nil {
		t.Fatalf("netns D: %v", err)
	}
	nsD.Do(rtnl.MoveLink(linkIndex(t, nsD, "mv"), nsP.FD()))
	idOfD := nsP.IDOf(nsD)
	if idOfD != 0 {
		t.Fatalf("after mv moved from D to P, P has the id %d for D; want 0, the lowest free (given by the move)", idOfD)
	}
	p := nsP.Socket("p", selftests.Join(unix.RTNLGRP_LINK, unix.RTNLGRP_NSID))
	p.Expect()

	nsD.Release() // the handle, the control socket: D's last references
	p.ExpectEventually(selftests.NetnsDeathDeadline,
		selftests.NSIDNotification(unix.RTM_DELNSID, idOfD),
		selftests.Notification(unix.RTM_DELLINK, unix.RTNLGRP_LINK,
			rtnl.LinkDetail("mv", rtnl.LinkNetnsid(rtnl.NotAssigned))))

	// D's id is free: Q, given an id of the kernel's choice, gets it.
	got := nsP.Map(nsQ, -1)
	p.Expect(got.NewNSID())
	if got.ID != idOfD {
		t.Errorf("P gave Q the id %d of its own choice after D died, want %d: D's id, the lowest free", got.ID, idOfD)
	}
}
