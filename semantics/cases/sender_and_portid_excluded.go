// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// senderAndPortidExcluded: a multicast skips the socket that sent it and
// every socket whose portid equals the excluded portid, in every namespace.
// In S, `a`, `r` (portid P, selftests.CollidingPortid) and `c` join RTNLGRP_IPV4_IFADDR; in O, which
// maps S as 9, `y` and `x` (portid P too) have LISTEN_ALL_NSID and join it.
//
//  1. a multicasts a NOOP to the group and to portid 0 (the kernel rtnl
//     socket, which ignores a message without NLM_F_REQUEST): everyone but
//     a gets it, msg_name showing a's portid; x included.
//  2. a sends to the group and to portid P: r gets exactly one copy, the
//     unicast (the broadcast skips portid P); x, in another namespace,
//     gets nothing, because the excluded portid is compared before the
//     namespace.
//  3. r adds an address with NLM_F_ECHO: r gets the echo then the ACK, one
//     copy although it is subscribed; x gets nothing; the others get the
//     notification.
//  4. The same without NLM_F_ECHO: r gets the multicast then the ACK, and x
//     gets the notification.
//
// Kernel: do_one_broadcast(): if (p->exclude_sk == sk) return; then
// nlk->portid == p->portid, before the !net_eq() test; netlink_sendmsg()
// calls netlink_broadcast(sk, skb, dst_portid, dst_group) and then
// netlink_unicast(sk, skb, dst_portid); nlmsg_notify() excludes the
// requester's portid when report (NLM_F_ECHO) and unicasts the echo after
// the broadcast; netlink_rcv_skb() sends the ACK after the handler. Both
// copies of one skb carry its dst_group, so the unicast and the echo show
// the group in msg_name like a multicast copy.
func senderAndPortidExcluded(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	o.Map(s, 9)
	const ifaddr = unix.RTNLGRP_IPV4_IFADDR
	join := selftests.Join(ifaddr)
	allNSID := selftests.With(unix.NETLINK_LISTEN_ALL_NSID)
	a := s.Socket("a", join)
	r := s.Socket("r", join, selftests.Portid(selftests.CollidingPortid))
	c := s.Socket("c", join)
	y := o.Socket("y", allNSID, join)
	x := o.Socket("x", allNSID, join, selftests.Portid(selftests.CollidingPortid))

	// 1.
	m := a.MustMulticast(0, ifaddr)
	a.Expect()
	r.Expect(m)
	c.Expect(m)
	y.Expect(m.NSID(9))
	x.Expect(m.NSID(9))

	// 2.
	m = a.MustMulticast(selftests.CollidingPortid, ifaddr)
	a.Expect()
	r.Expect(m)
	c.Expect(m)
	y.Expect(m.NSID(9))
	x.Expect()

	// 3.
	e := s.AddAddrAs(r, netlink.Echo)
	r.Expect(e.NewAddr(), selftests.Ack(e.Seq, selftests.CollidingPortid))
	a.Expect(e.NewAddr())
	c.Expect(e.NewAddr())
	y.Expect(e.NewAddr().NSID(9))
	x.Expect()

	// 4.
	e = s.AddAddrAs(r, 0)
	r.Expect(e.NewAddr(), selftests.Ack(e.Seq, selftests.CollidingPortid))
	a.Expect(e.NewAddr())
	c.Expect(e.NewAddr())
	y.Expect(e.NewAddr().NSID(9))
	x.Expect(e.NewAddr().NSID(9))
}
