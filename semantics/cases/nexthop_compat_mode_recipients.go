// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"net/netip"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// nexthopCompatModeRecipients: replacing a nexthop notifies RTNLGRP_NEXTHOP
// and, while net.ipv4.nexthop_compat_mode is 1 in the source namespace,
// every route that uses it directly or through a group on
// RTNLGRP_IPV4_ROUTE, with NLM_F_REPLACE; with 0 only the nexthop. A route
// replace notifies its one route in both modes. Every one of these reaches
// the local subscriber and the ALL_NSID observer (with its id), never the
// plain subscriber in F.
//
// Setup: veth va/vb in S, both up (a gateway nexthop needs carrier), with
// 203.0.113.1/24 on va; nexthops 10 and 11 via va, group 20 = 10/11; R1 and
// R2 via nhid 10, R3 via nhid 20. Subscribers are opened after the setup;
// with IPv6 off nothing asynchronous is notified on groups 7 and 32
// (linkwatch only notifies RTNLGRP_LINK).
//
// Kernel: insert_nexthop() -> nexthop_notify(RTM_NEWNEXTHOP) and, if
// replace_notify && sysctl_nexthop_compat_mode, nexthop_replace_notify() ->
// __nexthop_replace_notify() for the nexthop, then for each group holding
// it -> fib_info_notify_update() -> rtmsg_fib(RTM_NEWROUTE, ...,
// NLM_F_REPLACE) with the request's portid and seq; fib_table_insert()
// replace -> one rtmsg_fib(RTM_NEWROUTE, ..., NLM_F_REPLACE). The routes of
// one fib_info_notify_update() come in descending prefix order (R2 before
// R1): __fib_info_notify_update() walks each trie node from its highest
// child index down.
//
// Header flags, compared on every socket (the same on 6.1, 6.12 and 6.18):
// RTM_NEWNEXTHOP carries the request's own flags (nexthop_notify() ->
// nh_fill_node(..., info->nlh->nlmsg_flags): NLM_F_REQUEST|NLM_F_ACK|
// NLM_F_REPLACE|NLM_F_CREATE for a replace), each RTM_NEWROUTE exactly
// NLM_F_REPLACE.
func nexthopCompatModeRecipients(t selftests.T) {
	s, o, f := selftests.NewNS(t, "S"), selftests.NewNS(t, "O"), selftests.NewNS(t, "F")
	id := o.Map(s, 8).ID
	va := nexthopSetup(t, s)

	groups := selftests.Join(unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_NEXTHOP)
	ss := s.Socket("s", groups)
	obs := o.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), groups)
	fs := f.Socket("f", groups)

	pid := s.Ctl.Portid()
	nexthop := func(rep rtnl.Reply, nhid uint32) selftests.Msg {
		return selftests.Msg{Type: unix.RTM_NEWNEXTHOP, Flags: rep.Flags, Seq: rep.Seq, Pid: pid, Group: unix.RTNLGRP_NEXTHOP,
			Detail: rtnl.NexthopDetail(nhid)}
	}
	route := func(seq uint32, r rtnl.Route) selftests.Msg {
		return selftests.Msg{Type: unix.RTM_NEWROUTE, Flags: unix.NLM_F_REPLACE, Seq: seq, Pid: pid, Group: unix.RTNLGRP_IPV4_ROUTE,
			Detail: rtnl.RouteDetail(unix.RTN_UNICAST, r.Dst, unix.RT_TABLE_MAIN, r.NHID)}
	}
	expect := func(want ...selftests.Msg) {
		t.Helper()
		ss.Expect(want...)
		obs.Expect(selftests.FromNSID(id, want...)...)
		fs.Expect()
	}
	r1, r2, r3 := nexthopRoutes[0], nexthopRoutes[1], nexthopRoutes[2]

	// Mode 1, the default: the nexthop and the routes that use it.
	if v, err := s.ReadSysctl(compatMode); err != nil || v != "1" {
		t.Errorf("netns %s: net.ipv4.nexthop_compat_mode is %q (%v), want the default 1", s.Name, v, err)
	}
	rep := s.Do(rtnl.ReplaceNexthop(rtnl.Nexthop{ID: 10, Gateway: vaAddr(4), OIF: va}))
	expect(nexthop(rep, 10), route(rep.Seq, r2), route(rep.Seq, r1), route(rep.Seq, r3))
	rep = s.Do(rtnl.ReplaceNexthop(nexthopGroup))
	expect(nexthop(rep, 20), route(rep.Seq, r3))
	r1.NHID = 11
	rep = s.Do(rtnl.ReplaceRoute(r1))
	expect(route(rep.Seq, r1))

	// Mode 0: the nexthop only; a route replace is unchanged.
	setCompatMode(t, s, "0")
	rep = s.Do(rtnl.ReplaceNexthop(rtnl.Nexthop{ID: 10, Gateway: vaAddr(5), OIF: va}))
	expect(nexthop(rep, 10))
	rep = s.Do(rtnl.ReplaceNexthop(nexthopGroup))
	expect(nexthop(rep, 20))
	r1.NHID = 10
	rep = s.Do(rtnl.ReplaceRoute(r1))
	expect(route(rep.Seq, r1))
}

// The routes R1, R2 (via nhid 10) and R3 (via group 20), and the group.
var (
	nexthopRoutes = []rtnl.Route{
		{Dst: netip.MustParsePrefix("198.51.100.0/28"), NHID: 10},
		{Dst: netip.MustParsePrefix("198.51.100.16/28"), NHID: 10},
		{Dst: netip.MustParsePrefix("198.51.100.32/28"), NHID: 20},
	}
	nexthopGroup = rtnl.Nexthop{ID: 20, Group: []rtnl.GroupMember{{ID: 10}, {ID: 11}}}
)

// vaAddr returns 203.0.113.i, an address on va's subnet.
func vaAddr(i byte) netip.Addr { return netip.AddrFrom4([4]byte{203, 0, 113, i}) }

// nexthopSetup builds the veth, the nexthops and the routes in s and
// returns va's ifindex.
func nexthopSetup(t selftests.T, s *selftests.NS) uint32 {
	s.Do(rtnl.NewVeth("va", "vb", -1))
	va := linkIndex(t, s, "va")
	s.Do(rtnl.SetUp(linkIndex(t, s, "vb"), true))
	s.Do(rtnl.SetUp(va, true))
	s.Do(rtnl.NewAddr(va, netip.PrefixFrom(vaAddr(1), 24)))
	s.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: 10, Gateway: vaAddr(2), OIF: va}))
	s.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: 11, Gateway: vaAddr(3), OIF: va}))
	s.Do(rtnl.NewNexthop(nexthopGroup))
	for _, r := range nexthopRoutes {
		s.Do(rtnl.NewRoute(r))
	}
	return va
}

const compatMode = "net/ipv4/nexthop_compat_mode"

// setCompatMode writes net.ipv4.nexthop_compat_mode in s only; the
// namespace is private and dies with the case, so nothing is restored.
func setCompatMode(t selftests.T, s *selftests.NS, v string) {
	t.Helper()
	if err := s.WriteSysctl(compatMode, v); err != nil {
		t.Fatalf("netns %s: net.ipv4.nexthop_compat_mode=%s: %v", s.Name, v, err)
	}
}
