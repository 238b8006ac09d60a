// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// pktinfoGroupReporting: a socket with NETLINK_PKTINFO gets the delivering
// group in a control message on every message (5 for RTM_NEWADDR, 7 for
// its RTM_NEWROUTE); a socket without it gets none; a LISTEN_ALL_NSID
// socket in O (mapping S as 12) with PKTINFO gets both the group and the
// nsid. Clearing the option stops the cmsg at once, and
// getsockopt(NETLINK_PKTINFO) reads the state back each time.
//
// Kernel: netlink_recvmsg(): if (nlk_test_bit(RECV_PKTINFO, sk))
// netlink_cmsg_recv_pktinfo(): info.group = NETLINK_CB(skb).dst_group,
// set by nlmsg_multicast(); netlink_getsockopt() NETLINK_PKTINFO.
func pktinfoGroupReporting(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	o.Map(s, 12)
	groups := selftests.Join(unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV4_ROUTE)
	p := s.Socket("p", selftests.With(unix.NETLINK_PKTINFO), groups)
	q := s.Socket("q", groups)
	ob := o.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID, unix.NETLINK_PKTINFO), groups)
	expectOption(t, p, unix.NETLINK_PKTINFO, 1)
	expectOption(t, q, unix.NETLINK_PKTINFO, 0)
	expectOption(t, ob, unix.NETLINK_PKTINFO, 1)

	e := s.AddAddr()
	p.Expect(e.NewAddr(), e.NewRoute())
	q.Expect(e.NewAddr(), e.NewRoute())
	ob.Expect(e.NewAddr().NSID(12), e.NewRoute().NSID(12))

	if err := p.SetOption(unix.NETLINK_PKTINFO, false); err != nil {
		t.Fatalf("%v", err)
	}
	expectOption(t, p, unix.NETLINK_PKTINFO, 0)
	e = s.AddAddr()
	p.Expect(e.NewAddr(), e.NewRoute())
	q.Expect(e.NewAddr(), e.NewRoute())
	ob.Expect(e.NewAddr().NSID(12), e.NewRoute().NSID(12))
}
