// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"net/netip"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// groupsAbove32: groups above 32, reachable only with
// NETLINK_ADD_MEMBERSHIP, follow the same delivery rules as the others: a
// local member gets each notification once, with the group in its
// NETLINK_PKTINFO cmsg and nl_groups 0 in msg_name (no bit exists for it);
// a LISTEN_ALL_NSID member in O, which maps S as 4, gets it with nsid 4; a
// plain member in F gets nothing.
//
// Two event sources: RTM_SETSTATS switching lo's L3 offload statistics on
// and off notifies one RTM_NEWSTATS each on RTNLGRP_STATS (36, Linux
// 5.19+); a UDP socket joining 239.1.2.3 on lo notifies one
// RTM_NEWMULTICAST on RTNLGRP_IPV4_MCADDR (37, Linux 6.14+), and closing
// it one RTM_DELMULTICAST. Both are kernel-originated: seq 0, pid 0. A
// source the kernel lacks (RTM_SETSTATS EOPNOTSUPP, joining 37 EINVAL) is
// logged and left out; the case skips only when both are missing.
//
// Kernel: netlink_group_mask(): if (group > 32) return 0;
// netlink_cmsg_recv_pktinfo(); do_one_broadcast() group test;
// rtnl_offload_xstats_notify() -> rtnl_notify(net, 0, RTNLGRP_STATS);
// inet_ifmcaddr_notify() -> rtnl_notify(net, 0, RTNLGRP_IPV4_MCADDR).
func groupsAbove32(t selftests.T) {
	s, o, f := selftests.NewNS(t, "S"), selftests.NewNS(t, "O"), selftests.NewNS(t, "F")
	o.Map(s, 4)
	m := s.Socket("m", selftests.With(unix.NETLINK_PKTINFO), selftests.Join(unix.RTNLGRP_STATS))
	ob := o.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(unix.RTNLGRP_STATS))
	fs := f.Socket("f", selftests.Join(unix.RTNLGRP_STATS))
	expect := func(want ...selftests.Msg) {
		t.Helper()
		m.Expect(want...)
		ob.Expect(selftests.FromNSID(4, want...)...)
		fs.Expect()
	}

	stats := l3StatsToggle(t, s, expect)
	mcaddr := joinMCAddr(t, m, ob, fs)
	if mcaddr {
		ipv4MulticastJoinLeave(t, s, expect)
	} else {
		t.Logf("this kernel has no group %d (RTNLGRP_IPV4_MCADDR, Linux 6.14+): joining it is EINVAL; its part is left out", unix.RTNLGRP_IPV4_MCADDR)
	}
	if !stats && !mcaddr {
		t.Skipf("no event source above group 32: RTM_SETSTATS is not supported and group %d does not exist", unix.RTNLGRP_IPV4_MCADDR)
	}
}

// l3StatsToggle switches lo's L3 statistics on and off in s and expects one
// RTM_NEWSTATS per switch. It reports false when the kernel has no
// RTM_SETSTATS.
func l3StatsToggle(t selftests.T, s *selftests.NS, expect func(...selftests.Msg)) bool {
	for _, on := range []bool{true, false} {
		newStats, ok := s.SetL3Stats(on)
		if !ok {
			return false
		}
		expect(newStats)
	}
	return true
}

// joinMCAddr adds every socket to RTNLGRP_IPV4_MCADDR, or reports false if
// the kernel does not have that group.
func joinMCAddr(t selftests.T, socks ...*selftests.Sock) bool {
	t.Helper()
	for i, s := range socks {
		err := s.Join(unix.RTNLGRP_IPV4_MCADDR)
		if i == 0 && errors.Is(err, unix.EINVAL) {
			return false
		}
		if err != nil {
			t.Fatalf("%v", err)
		}
	}
	return true
}

// ipv4MulticastJoinLeave joins 239.1.2.3 on lo with a UDP socket in s and
// closes it, expecting one RTM_NEWMULTICAST and one RTM_DELMULTICAST.
func ipv4MulticastJoinLeave(t selftests.T, s *selftests.NS, expect func(...selftests.Msg)) {
	leave := s.JoinIPv4Multicast(netip.MustParseAddr("239.1.2.3"), rtnl.LoopbackIndex)
	expect(selftests.Notification(unix.RTM_NEWMULTICAST, unix.RTNLGRP_IPV4_MCADDR, "239.1.2.3/32 dev 1"))
	if err := leave(); err != nil {
		t.Fatalf("%v", err)
	}
	expect(selftests.Notification(unix.RTM_DELMULTICAST, unix.RTNLGRP_IPV4_MCADDR, "239.1.2.3/32 dev 1"))
}
