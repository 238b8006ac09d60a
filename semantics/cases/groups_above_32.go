package cases

import (
	"errors"
	"fmt"
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
	env := selftests.NewEnv(t)
	s, o, f := env.NewNS("S"), env.NewNS("O"), env.NewNS("F")
	o.Map(s, 4)
	m := s.Socket("m", selftests.With(unix.NETLINK_PKTINFO), selftests.Join(unix.RTNLGRP_STATS))
	ob := o.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(unix.RTNLGRP_STATS))
	fs := f.Socket("f", selftests.Join(unix.RTNLGRP_STATS))
	expect := func(want ...selftests.Msg) {
		t.Helper()
		env.Expect(m, want...)
		env.Expect(ob, selftests.FromNSID(4, want...)...)
		env.Expect(fs)
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
// RTM_NEWSTATS per switch. It reports false, with a log line, when the
// kernel has no RTM_SETSTATS.
func l3StatsToggle(t selftests.T, s *selftests.NS, expect func(...selftests.Msg)) bool {
	t.Helper()
	newStats := selftests.Notification(unix.RTM_NEWSTATS, unix.RTNLGRP_STATS, fmt.Sprintf("ifindex %d", rtnl.LoopbackIndex))
	for _, on := range []bool{true, false} {
		_, err := s.Ctl.Do(rtnl.SetL3Stats(rtnl.LoopbackIndex, on))
		if on && errors.Is(err, unix.EOPNOTSUPP) {
			t.Logf("this kernel has no RTM_SETSTATS (Linux 5.19+): %v; the group %d part is left out", err, unix.RTNLGRP_STATS)
			return false
		}
		if err != nil {
			t.Fatalf("netns %s: %v", s.Name, err)
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
	t.Helper()
	fd, err := joinIPv4Multicast(s, netip.MustParseAddr("239.1.2.3"), rtnl.LoopbackIndex)
	if err != nil {
		t.Fatalf("netns %s: %v", s.Name, err)
	}
	closed := false
	closeFD := func() error {
		if closed {
			return nil
		}
		closed = true
		return unix.Close(fd)
	}
	t.Cleanup(func() { closeFD() })
	expect(selftests.Notification(unix.RTM_NEWMULTICAST, unix.RTNLGRP_IPV4_MCADDR, "239.1.2.3/32 dev 1"))

	// close() leaves the group before it returns (inet_release ->
	// ip_mc_drop_socket).
	if err := closeFD(); err != nil {
		t.Fatalf("netns %s: close the UDP socket: %v", s.Name, err)
	}
	expect(selftests.Notification(unix.RTM_DELMULTICAST, unix.RTNLGRP_IPV4_MCADDR, "239.1.2.3/32 dev 1"))
}

// joinIPv4Multicast opens a UDP socket in ns and joins group on ifindex
// (IP_ADD_MEMBERSHIP). The caller closes the returned descriptor.
func joinIPv4Multicast(ns *selftests.NS, group netip.Addr, ifindex int32) (int, error) {
	fd := -1
	err := ns.NS.Do(func() error {
		var err error
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("UDP socket: %w", err)
		}
		mreq := &unix.IPMreqn{Multiaddr: group.As4(), Ifindex: ifindex}
		if err := unix.SetsockoptIPMreqn(fd, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq); err != nil {
			unix.Close(fd)
			return fmt.Errorf("IP_ADD_MEMBERSHIP %s ifindex %d: %w", group, ifindex, err)
		}
		return nil
	})
	return fd, err
}
