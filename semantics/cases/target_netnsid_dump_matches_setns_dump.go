// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// targetNetnsidDumpMatchesSetnsDump: the nsid that a LISTEN_ALL_NSID
// notification carries is the handle for a dump of its source. O maps S as
// 9; S has addresses on three interfaces (lo: 127.0.0.1/8 and an E1
// address, veth v0 and v1: one /24 each, both down), O one of its own.
//
//   - E1 in S reaches oa (ALL_NSID in O) as RTM_NEWADDR and RTM_NEWROUTE
//     with nsid 9, the subscriber s in S without, and the plain op in O not
//     at all.
//   - An RTM_GETADDR dump from O with IFA_TARGET_NETNSID=9 on a socket
//     with NETLINK_GET_STRICT_CHK returns exactly S's four addresses, and
//     each equals, field by field (ifaddrmsg, then every attribute's type
//     and bytes in order: address, local, label, broadcast, flags,
//     cacheinfo...), the entry a socket opened in S (setns()) dumps, plus
//     one IFA_TARGET_NETNSID=9 that the local dump does not have.
//   - O0 maps S as 0, an id like any other: its dump with
//     IFA_TARGET_NETNSID=0 returns the same four, each with
//     IFA_TARGET_NETNSID=0.
//   - The dumps multicast nothing: after them s, op and oa hold nothing
//     (the sentinel in each one's own namespace comes first). The dump
//     looks the id up (get_net_ns_by_id()), it allocates none, so no
//     RTM_NEWNSID either.
//
// Kernel: inet_dump_ifaddr() -> inet_valid_dump_ifaddr_req() (only if
// cb->strict_check): IFA_TARGET_NETNSID -> rtnl_get_net_ns_capable(sk, id)
// -> get_net_ns_by_id(sock_net(sk), id), then sk_ns_capable(sk,
// net->user_ns, CAP_NET_ADMIN); inet_fill_ifaddr() puts
// IFA_TARGET_NETNSID first when fillargs.netnsid >= 0. The replies go to
// the requester alone (netlink_dump() -> netlink_unicast()).
func targetNetnsidDumpMatchesSetnsDump(t selftests.T) {
	s, o, o0 := selftests.NewNS(t, "S"), selftests.NewNS(t, "O"), selftests.NewNS(t, "O0")
	const id = 9
	o.Map(s, id)
	o0.Map(s, 0)
	s.Do(rtnl.NewVeth("v0", "v1", -1))
	v0, v1 := linkIndex(t, s, "v0"), linkIndex(t, s, "v1")
	s.Do(rtnl.NewAddr(v0, netip.MustParsePrefix("203.0.113.1/24")))
	s.Do(rtnl.NewAddr(v1, netip.MustParsePrefix("192.0.2.1/24")))
	o.Do(rtnl.NewAddr(rtnl.LoopbackIndex, netip.MustParsePrefix("203.0.113.200/32")))

	sub := s.Socket("s", addrGroups)
	op := o.Socket("op", addrGroups)
	oa := o.Socket("oa", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), addrGroups)

	e := s.AddAddr()
	oa.Expect(e.NewAddr().NSID(id), e.NewRoute().NSID(id))
	sub.Expect(e.NewAddr(), e.NewRoute())
	op.Expect()

	targeted := mustDumpAddrs(t, dumpConn(t, o, true), nsidPtr(id))
	inS := mustDumpAddrs(t, dumpConn(t, s, true), nil)
	expectAddrSet(t, "dump in S", inS, loAddr, e.Prefix.String()+" dev 1",
		rtnl.AddrDetail(netip.MustParsePrefix("203.0.113.1/24"), v0), rtnl.AddrDetail(netip.MustParsePrefix("192.0.2.1/24"), v1))
	expectSameAddrs(t, fmt.Sprintf("dump from O with IFA_TARGET_NETNSID %d against the dump in S", id), targeted, inS, nsidPtr(id))
	targeted0 := mustDumpAddrs(t, dumpConn(t, o0, true), nsidPtr(0))
	expectSameAddrs(t, "dump from O0 with IFA_TARGET_NETNSID 0 against the dump in S", targeted0, inS, nsidPtr(0))

	sub.Expect()
	op.Expect()
	oa.Expect()
}
