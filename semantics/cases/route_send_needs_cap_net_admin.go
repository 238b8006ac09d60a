// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// routeSendNeedsCapNetAdmin: NETLINK_ROUTE lets any process send to the
// kernel, but only one with CAP_NET_ADMIN send to a group or to another
// socket (rtnetlink sets NL_CFG_F_NONROOT_RECV, not
// NL_CFG_F_NONROOT_SEND). In S, `x` sends; `r1` is a member of
// RTNLGRP_IPV4_IFADDR, `r2` is in no group.
//
//  1. From a thread without CAP_NET_ADMIN, x's sendto() to the group and
//     its sendto() to r2's portid are EPERM, and nothing arrives anywhere.
//  2. With it, one sendto() to both reaches r1 (the multicast) and r2 (the
//     unicast) once each, and x nothing.
//
// Kernel: netlink_sendmsg(): err = -EPERM; if ((dst_group || dst_portid)
// && !netlink_allowed(sock, NL_CFG_F_NONROOT_SEND)) goto out;
// netlink_allowed(): the protocol's flag, or ns_capable(net->user_ns,
// CAP_NET_ADMIN) of the sending task.
func routeSendNeedsCapNetAdmin(t selftests.T) {
	s := selftests.NewNS(t, "S")
	const group = unix.RTNLGRP_IPV4_IFADDR
	x := s.Socket("x")
	r1 := s.Socket("r1", selftests.Join(group))
	r2 := s.Socket("r2")

	// 1.
	var toGroup, toPeer error
	if err := selftests.WithoutCapability(unix.CAP_NET_ADMIN, func() error {
		_, toGroup = x.Multicast(0, group)
		_, toPeer = x.Multicast(r2.Portid(), 0)
		return nil
	}); err != nil {
		t.Fatalf("%v", err)
	}
	if !errors.Is(toGroup, unix.EPERM) {
		t.Errorf("%s: sendto(group %d) without CAP_NET_ADMIN: got %v, want EPERM", x, group, toGroup)
	}
	if !errors.Is(toPeer, unix.EPERM) {
		t.Errorf("%s: sendto(portid of %s) without CAP_NET_ADMIN: got %v, want EPERM", x, r2, toPeer)
	}
	x.Expect()
	r1.Expect()
	r2.Expect()

	// 2.
	m := x.MustMulticast(r2.Portid(), group)
	x.Expect()
	r1.Expect(m)
	r2.Expect(m)
}
