package cases

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// collidingPortid is bound explicitly by `r` in S and by `x` in O. Portids
// are unique per namespace and protocol only, so both binds succeed; the
// kernel never picks it by autobind (the process id, at most pid_max, then
// values from -4096 downwards).
const collidingPortid = 0x7fff0001

// senderAndPortidExcluded: a multicast skips the socket that sent it and
// every socket whose portid equals the excluded portid, in every namespace.
// In S, `a`, `r` (portid P) and `c` join RTNLGRP_IPV4_IFADDR; in O, which
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
	env := selftests.NewEnv(t)
	s, o := env.NewNS("S"), env.NewNS("O")
	o.Map(s, 9)
	const ifaddr = unix.RTNLGRP_IPV4_IFADDR
	join := selftests.Join(ifaddr)
	allNSID := selftests.With(unix.NETLINK_LISTEN_ALL_NSID)
	a := s.Socket("a", join)
	r := s.Socket("r", join, selftests.Portid(collidingPortid))
	c := s.Socket("c", join)
	y := o.Socket("y", allNSID, join)
	x := o.Socket("x", allNSID, join, selftests.Portid(collidingPortid))

	// 1. User multicast: the sender is skipped.
	m := sendUserMulticast(t, a, 0, ifaddr)
	env.Expect(a)
	env.Expect(r, m)
	env.Expect(c, m)
	env.Expect(y, m.NSID(9))
	env.Expect(x, m.NSID(9))

	// 2. User multicast to portid P as well: every socket with portid P is
	// skipped by the broadcast; r gets the unicast.
	m = sendUserMulticast(t, a, collidingPortid, ifaddr)
	env.Expect(a)
	env.Expect(r, m)
	env.Expect(c, m)
	env.Expect(y, m.NSID(9))
	env.Expect(x)

	// 3. NLM_F_ECHO: the requester's portid is excluded.
	e := s.AddAddrAs(r, netlink.Echo)
	env.Expect(r, e.NewAddr(), selftests.Ack(e.Seq, collidingPortid))
	env.Expect(a, e.NewAddr())
	env.Expect(c, e.NewAddr())
	env.Expect(y, e.NewAddr().NSID(9))
	env.Expect(x)

	// 4. Without NLM_F_ECHO nothing is excluded.
	e = s.AddAddrAs(r, 0)
	env.Expect(r, e.NewAddr(), selftests.Ack(e.Seq, collidingPortid))
	env.Expect(a, e.NewAddr())
	env.Expect(c, e.NewAddr())
	env.Expect(y, e.NewAddr().NSID(9))
	env.Expect(x, e.NewAddr().NSID(9))
}

// sendUserMulticast is userMulticast that fails the case if sendto does.
func sendUserMulticast(t selftests.T, s *selftests.Sock, dst, group uint32) selftests.Msg {
	t.Helper()
	m, err := s.Multicast(dst, group)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return m
}
