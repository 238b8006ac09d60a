// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// bindBitmaskMembership: bind() nl_groups subscribes to groups 1..32 by
// bitmask, up to RTNLGRP_NEXTHOP (32) through bit 31; msg_name nl_groups
// shows the delivering group's bit. A re-bind must name the socket's own
// portid (anything else, 0 included, is EINVAL and changes nothing), and it
// replaces groups 1..32 while keeping groups above 32 joined with
// NETLINK_ADD_MEMBERSHIP.
//
// The group kept across the re-bind is 36 (RTNLGRP_STATS), which every
// supported kernel has (37, RTNLGRP_IPV4_MCADDR, needs 6.14), and which
// sits in the same unsigned long groups[0] on 64-bit, the word
// netlink_bind() rewrites. It is shown to deliver, not only to be listed,
// before and after the re-bind: switching lo's L3 statistics (RTM_SETSTATS)
// notifies one RTM_NEWSTATS on it each time (Linux 5.19+; on an older
// kernel that part is logged and left out).
//
// Without CAP_NET_ADMIN, a bind() whose bitmask has
// RTNLGRP_IPV4_MROUTE_R (30) or RTNLGRP_IPV6_MROUTE_R (31) is EPERM and
// changes nothing, whatever else the mask has, on a bound socket as on a
// fresh one (which stays unbound: portid 0); any other mask, with
// RTNLGRP_NEXTHOP (32, the bit after them) included, binds.
//
// The same bitmask subscribes NETLINK_GENERIC's groups (nlctrl's notify
// group, 16). A re-bind that names no group, of a socket in none, returns
// exactly 0 and changes nothing.
//
// Kernel: netlink_bind(): if (nlk->ngroups < BITS_PER_LONG) groups &= (1UL
// << nlk->ngroups) - 1, which keeps every bit of the u32 nl_groups, as
// every table has at least 32 groups (genetlink's 64, where the test keeps
// the shift in range); it returns err, still 0 from its declaration, when
// there is nothing to subscribe; for each bit of nl_groups, err =
// nlk->netlink_bind(net, group + 1), and on an error netlink_undo_bind()
// and return before anything is bound or joined; rtnetlink_bind() asks
// ns_capable(net->user_ns, CAP_NET_ADMIN) for the two MROUTE_R groups
// only. if (nladdr->nl_pid != nlk->portid) return -EINVAL; nlk->groups[0] = (nlk->groups[0] & ~0xffffffffUL) | groups;
// netlink_recvmsg(): nl_groups = netlink_group_mask(dst_group);
// nexthop_notify() -> rtnl_notify(RTNLGRP_NEXTHOP).
func bindBitmaskMembership(t selftests.T) {
	s := selftests.NewNS(t, "S")
	b1 := s.Socket("b1", selftests.BindGroups(nlsock.GroupMask(unix.RTNLGRP_IPV4_IFADDR)))
	b2 := s.Socket("b2", selftests.BindGroups(nlsock.GroupMask(unix.RTNLGRP_IPV4_ROUTE)))
	b3 := s.Socket("b3", selftests.BindGroups(nlsock.GroupMask(unix.RTNLGRP_NEXTHOP)))
	expectMemberships(t, b1, unix.RTNLGRP_IPV4_IFADDR)
	expectMemberships(t, b2, unix.RTNLGRP_IPV4_ROUTE)
	expectMemberships(t, b3, unix.RTNLGRP_NEXTHOP)

	e := s.AddAddr()
	b1.Expect(e.NewAddr())
	b2.Expect(e.NewRoute())
	b3.Expect()

	// Group 32 through bit 31: a blackhole nexthop needs only lo up.
	nh := s.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: 1, Blackhole: true}))
	b1.Expect()
	b2.Expect()
	b3.Expect(selftests.Msg{Type: unix.RTM_NEWNEXTHOP, Flags: nh.Flags, Seq: nh.Seq, Pid: s.Ctl.Portid(),
		Group: unix.RTNLGRP_NEXTHOP, Detail: "id 1"})

	// A re-bind with the own portid replaces groups 1..32.
	rebind(t, b1, nlsock.GroupMask(unix.RTNLGRP_IPV4_ROUTE))
	expectMemberships(t, b1, unix.RTNLGRP_IPV4_ROUTE)
	e = s.AddAddr()
	b1.Expect(e.NewRoute())
	b2.Expect(e.NewRoute())

	// A re-bind with another portid (0: "pick one") is refused.
	if err := b1.Bind(0, nlsock.GroupMask(unix.RTNLGRP_IPV4_IFADDR)); !errors.Is(err, unix.EINVAL) {
		t.Errorf("%s: re-bind with portid 0: got %v, want EINVAL", b1, err)
	}
	expectMemberships(t, b1, unix.RTNLGRP_IPV4_ROUTE)

	// Groups above 32 survive a re-bind that clears 1..32.
	mustJoin(t, b1, unix.RTNLGRP_STATS)
	expectMemberships(t, b1, unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_STATS)
	stats, haveStats := s.SetL3Stats(true)
	if haveStats {
		b1.Expect(stats)
	}
	rebind(t, b1, 0)
	expectMemberships(t, b1, unix.RTNLGRP_STATS)
	e = s.AddAddr()
	b1.Expect()
	b2.Expect(e.NewRoute())
	if haveStats {
		stats, _ = s.SetL3Stats(false)
		b1.Expect(stats)
		b2.Expect()
		b3.Expect()
	}

	// A re-bind naming no group, of a socket in none, changes nothing and
	// returns exactly 0 (nlsock.Bind holds bind(2) to that).
	b5 := s.Socket("b5")
	rebind(t, b5, 0)
	expectMemberships(t, b5)

	// The bitmask rule is the protocol's, not rtnetlink's: on
	// NETLINK_GENERIC, whose table grows to 64 groups once a family with
	// multicast groups registers (genl_validate_assign_mc_groups() ->
	// __netlink_change_ngroups()), bind() joins nlctrl's "notify" group,
	// GENL_ID_CTRL, through its bit.
	g := s.Socket("g", selftests.Proto(unix.NETLINK_GENERIC), selftests.BindGroups(nlsock.GroupMask(unix.GENL_ID_CTRL)))
	expectMemberships(t, g, unix.GENL_ID_CTRL)

	bindWithoutNetAdmin(t, s, s.Socket("b4"))
}

// bindWithoutNetAdmin checks which bind() masks need CAP_NET_ADMIN, on
// the bound socket b (no groups) and on a fresh socket, each bound
// from a thread without it.
func bindWithoutNetAdmin(t selftests.T, s *selftests.NS, b *selftests.Sock) {
	t.Helper()
	fresh := unboundSocket(t, s, "fresh")
	for _, c := range []struct {
		groups []uint32
		want   error
	}{
		{[]uint32{unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV4_MROUTE_R}, unix.EPERM},
		{[]uint32{unix.RTNLGRP_IPV6_MROUTE_R}, unix.EPERM},
		{[]uint32{unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_NEXTHOP}, nil},
	} {
		mask := nlsock.GroupMask(c.groups...)
		var rebindErr, freshErr error
		if err := selftests.WithoutCapability(unix.CAP_NET_ADMIN, func() error {
			rebindErr = b.Bind(b.Portid(), mask)
			freshErr = fresh.Bind(0, mask)
			return nil
		}); err != nil {
			t.Fatalf("%v", err)
		}
		if !errors.Is(rebindErr, c.want) {
			t.Errorf("%s: re-bind to groups %v (mask %#x) without CAP_NET_ADMIN: got %v, want %v", b, c.groups, mask, rebindErr, c.want)
		}
		if !errors.Is(freshErr, c.want) {
			t.Errorf("%s: bind to groups %v (mask %#x) without CAP_NET_ADMIN: got %v, want %v", fresh, c.groups, mask, freshErr, c.want)
		}
		if c.want != nil {
			expectMemberships(t, b)
			if pid, groups, err := fresh.Address(); err != nil || pid != 0 || groups != 0 {
				t.Errorf("%s: after the refused bind, getsockname: portid %d, groups %#x, %v; want 0, 0: still unbound", fresh, pid, groups, err)
			}
		}
	}
	expectMemberships(t, b, unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_NEXTHOP)
}

// rebind binds the already bound s again with its own portid and groups
// 1..32 set to mask.
func rebind(t selftests.T, s *selftests.Sock, mask uint32) {
	t.Helper()
	if err := s.Bind(s.Portid(), mask); err != nil {
		t.Fatalf("re-bind with the own portid: %v", err)
	}
}
