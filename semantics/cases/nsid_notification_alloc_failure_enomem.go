// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"fmt"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// nsidNotificationAllocFailureENOMEM: when the kernel cannot build the
// RTM_NEWNSID that announces a new id, the RTNLGRP_NSID subscribers of the
// namespace that gave it are told with ENOMEM, once, and not with ENOBUFS:
// rtnl_net_notifyid() passes on the allocation's own error. Being no
// ENOBUFS, it reaches a NETLINK_NO_ENOBUFS subscriber too. The id is given
// all the same (the request is ACKed with errno 0 and RTM_GETNSID reports
// the id), and no subscriber in another netns is told anything.
//
// Kernel: rtnl_net_newid() -> alloc_netid(), then rtnl_net_notifyid(net,
// RTM_NEWNSID, id, portid, nlh, GFP_KERNEL): `int err = -ENOMEM;`, nlmsg_new()
// fails -> out: rtnl_set_sk_err(net, RTNLGRP_NSID, err) ->
// netlink_set_err(net->rtnl, 0, group, -ENOMEM) -> do_one_set_err(): only
// ENOBUFS is withheld from NETLINK_F_RECV_NO_ENOBUFS sockets; sk_err =
// ENOMEM, which recvmsg() returns once. rtnl_net_newid() returns 0 whatever
// the notification did. The same in 6.1 and 6.12.
//
// The search (failNthSearch, as in notification_alloc_failure_enobufs): fail-nth N = 1, 2,
// ... on a thread that sends one RTM_NEWNSID (the kernel to choose the id)
// until the probe reads ENOMEM. An id once given cannot be taken back, so
// each attempt asks for a peer of its own.
func nsidNotificationAllocFailureENOMEM(t selftests.T) {
	openFailNth(t)
	o, f := selftests.NewNS(t, "O"), selftests.NewNS(t, "F")
	group := selftests.Join(unix.RTNLGRP_NSID)
	probe := o.Socket("probe", group)
	quiet := o.Socket("no_enobufs", selftests.With(unix.NETLINK_NO_ENOBUFS), group)
	foreign := f.Socket("foreign", group)
	requester := o.Socket("requester")

	// Without injection the id is announced to both subscribers in O, and
	// to no one in F.
	given := o.Map(selftests.NewNS(t, "P0"), -1)
	probe.Expect(given.NewNSID())
	quiet.Expect(given.NewNSID())
	foreign.Expect()

	var peer *selftests.NS
	a, _ := failNthSearch{
		request: "RTM_NEWNSID", alloc: "rtnl_net_notifyid()'s", probe: probe, want: unix.ENOMEM,
		send: func(n int) attempt {
			peer = selftests.NewNS(t, fmt.Sprintf("P%d", n))
			return newArmedRequest(t, requester, rtnl.NewNSID(peer.FD(), -1)).send(t, n)
		},
		clean: []*selftests.Sock{quiet, foreign},
	}.run(t)
	if a.sendErr != nil || a.recvErr != nil || a.ackErrno != 0 {
		t.Errorf("RTM_NEWNSID for netns %s with fail-nth %d: %s; want an ACK with errno 0: the id is given though its notification failed", peer.Name, a.n, a)
	}
	if id := o.IDOf(peer); id == rtnl.NotAssigned {
		t.Errorf("netns O has no id for netns %s after the RTM_NEWNSID that was ACKed", peer.Name)
	}
	probe.Expect()
	quiet.Expect(selftests.RecvError(unix.ENOMEM))
	foreign.Expect()
}
