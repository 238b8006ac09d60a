// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// addressDeleteNotified: deleting an IPv4 address notifies, in its own
// namespace, RTM_DELADDR on RTNLGRP_IPV4_IFADDR with the delete request's
// seq and portid, then RTM_DELROUTE for its local route on
// RTNLGRP_IPV4_ROUTE, sent by the kernel itself (seq 0, pid 0). A
// NETLINK_LISTEN_ALL_NSID subscriber in another namespace that has an id
// for the source gets both, tagged with that id; a plain subscriber there
// gets nothing. The add before it is checked alike, so every socket's
// whole transcript is proved.
//
// Kernel: inet_rtm_deladdr() -> __inet_del_ifa() -> rtmsg_ifa(RTM_DELADDR,
// ifa, nlh, portid); then, on the inetaddr_chain, fib_inetaddr_event(
// NETDEV_DOWN) -> fib_del_ifaddr() -> fib_magic(RTM_DELROUTE, RTN_LOCAL, ...),
// whose fc_nlinfo has no nlh and portid 0. Across namespaces,
// do_one_broadcast() delivers to a socket of another netns only with
// NETLINK_LISTEN_ALL_NSID and peernet_has_id(), and tags the copy with
// peernet2id() (NETLINK_LISTEN_ALL_NSID control message).
func addressDeleteNotified(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	o.Map(s, 21)
	join := selftests.Join(unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV4_ROUTE)
	a := s.Socket("a", join)
	all := o.Socket("all", join, selftests.With(unix.NETLINK_LISTEN_ALL_NSID))
	plain := o.Socket("plain", join)

	add := s.AddAddr()
	a.Expect(add.NewAddr(), add.NewRoute())
	all.Expect(selftests.FromNSID(21, add.NewAddr(), add.NewRoute())...)
	plain.Expect()

	del := s.DelAddr(add)
	a.Expect(del.DelAddr(), del.DelRoute())
	all.Expect(selftests.FromNSID(21, del.DelAddr(), del.DelRoute())...)
	plain.Expect()
}
