// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// netnsDeleteWhileSubscribed: a namespace whose handle is gone lives on
// while sockets in it are open, and keeps delivering: its own subscriber
// and a foreign ALL_NSID listener that maps it get its notifications. Only
// when the last socket closes does it die, and then every namespace that
// had an id for it gets one RTM_DELNSID, asynchronously. The listener is
// unaffected for the namespaces that remain.
//
// Nothing is mounted here, so `ip netns del D` is dropping the process's
// handle on D; what keeps D alive afterwards is d (group 5), the control
// socket dc, and the sentinel socket that delimits d's transcript.
//
// The RTM_DELNSID is sent in O about O's own idr (a local event: no nsid
// control message) by the cleanup_net() work, after the last reference
// went. o is not on RTNLGRP_LINK, and D's later RTM_DELADDR (IFADDR, which
// o is on) come from pernet exit methods that run after unhash_nsid(),
// when peernet_has_id(O, D) already fails: they never reach o, which the
// final check proves for the ones already sent.
//
// Kernel: sk_alloc() takes a netns reference for user sockets
// (sk_net_refcnt); cleanup_net() -> unhash_nsid() -> rtnl_net_notifyid(tmp,
// RTM_DELNSID, id, 0, NULL) for every tmp with an id for the dying netns,
// before ops_pre_exit_list()/ops_exit_list().
func netnsDeleteWhileSubscribed(t selftests.T) {
	nsO, nsD, nsS := selftests.NewNS(t, "O"), selftests.NewNS(t, "D"), selftests.NewNS(t, "S")
	const idOfD, idOfS = 13, 14
	nsO.Map(nsD, idOfD)
	nsO.Map(nsS, idOfS)
	o := nsO.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID),
		selftests.Join(unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_NSID))
	d := nsD.Socket("d", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	dc := nsD.Ctl
	d.Expect() // also opens d's sentinel while D can still be entered

	nsD.Delete() // `ip netns del D`
	o.Expect()   // no RTM_DELNSID: D is alive

	e1 := nsD.AddAddrFrom(dc, 0)
	d.Expect(e1.NewAddr())
	o.Expect(e1.NewAddr().NSID(idOfD))

	// Without d, D lives on through dc (and d's sentinel).
	if err := d.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	e1 = nsD.AddAddrFrom(dc, 0)
	o.Expect(e1.NewAddr().NSID(idOfD))

	nsD.Release() // dc and d's sentinel: D's last references
	o.ExpectEventually(selftests.NetnsDeathDeadline, selftests.NSIDNotification(unix.RTM_DELNSID, idOfD))

	e1 = nsS.AddAddr()
	o.Expect(e1.NewAddr().NSID(idOfS))
}
