// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// setsockoptAddDropMembership: NETLINK_ADD_MEMBERSHIP and
// NETLINK_DROP_MEMBERSHIP set and clear one bit each: adding twice
// delivers once, dropping stops delivery, dropping again succeeds;
// dropping one group leaves the socket's others delivering. Group 0
// and every group above RTNLGRP_MAX are EINVAL for both. The case joins
// upward from 33 until EINVAL and requires the last group accepted to be
// exactly the running kernel's RTNLGRP_MAX (rtnlgrpMax).
// NETLINK_LIST_MEMBERSHIPS and getsockname() are
// checked after every step. Without CAP_NET_ADMIN, joining
// RTNLGRP_IPV4_MROUTE_R (30) or RTNLGRP_IPV6_MROUTE_R (31) is EPERM and
// leaves the memberships alone, while any other group can be joined.
//
// An option value shorter than an int reads as 0: ADD_MEMBERSHIP with
// two bytes is group 0 (EINVAL), NETLINK_PKTINFO with two bytes clears
// the flag.
//
// Kernel: netlink_setsockopt(): unsigned int val = 0; if (optlen >=
// sizeof(int) && copy_from_sockptr(&val, ...)); if (!val || val - 1 >= nlk->ngroups)
// return -EINVAL; netlink_update_socket_mc(): old = test_bit(group - 1,
// nlk->groups); subscriptions = nlk->subscriptions - old + new;
// __assign_bit(group - 1, nlk->groups, new); netlink_update_subscriptions()
// takes the socket off the multicast list when the count reaches 0;
// rtnetlink_net_init(): cfg.groups = RTNLGRP_MAX,
// cfg.flags = NL_CFG_F_NONROOT_RECV, cfg.bind = rtnetlink_bind(), which
// asks ns_capable(CAP_NET_ADMIN) for the two MROUTE_R groups only.
func setsockoptAddDropMembership(t selftests.T) {
	s := selftests.NewNS(t, "S")
	j := s.Socket("j")
	expectMemberships(t, j)

	// 1. Add.
	mustJoin(t, j, unix.RTNLGRP_IPV4_IFADDR)
	expectMemberships(t, j, unix.RTNLGRP_IPV4_IFADDR)
	e := s.AddAddr()
	j.Expect(e.NewAddr())

	// 2. Add again: still one copy.
	mustJoin(t, j, unix.RTNLGRP_IPV4_IFADDR)
	expectMemberships(t, j, unix.RTNLGRP_IPV4_IFADDR)
	e = s.AddAddr()
	j.Expect(e.NewAddr())

	// 3. Drop.
	mustLeave(t, j, unix.RTNLGRP_IPV4_IFADDR)
	expectMemberships(t, j)
	s.AddAddr()
	j.Expect()

	// 4. Drop again: a no-op, not an error.
	mustLeave(t, j, unix.RTNLGRP_IPV4_IFADDR)
	expectMemberships(t, j)

	// 4b. Dropping one group leaves the others delivering, whatever the
	// order they were joined in: on a new socket (its subscription count
	// from 0), the group below joined last, then dropped. The socket
	// stays on the multicast list while it has any group.
	k := s.Socket("k")
	mustJoin(t, k, unix.RTNLGRP_IPV4_IFADDR)
	mustJoin(t, k, unix.RTNLGRP_IPV4_IFADDR-1)
	mustLeave(t, k, unix.RTNLGRP_IPV4_IFADDR-1)
	expectMemberships(t, k, unix.RTNLGRP_IPV4_IFADDR)
	e = s.AddAddr()
	k.Expect(e.NewAddr())
	j.Expect()

	// 5. Out of range.
	expectInvalidGroup(t, j, 0)
	maxGroup := probeMaxGroup(t, j)
	want, last := rtnlgrpMax(selftests.Kernel(t))
	t.Logf("RTNLGRP_MAX = %d on this kernel (highest group NETLINK_ADD_MEMBERSHIP accepts)", maxGroup)
	if maxGroup != want {
		t.Errorf("%s: NETLINK_ADD_MEMBERSHIP accepts groups up to %d, want exactly %d (%s, the last group of Linux %s)",
			j, maxGroup, want, last, selftests.Kernel(t))
	}
	expectInvalidGroup(t, j, maxGroup+1)
	for g := uint32(33); g <= maxGroup; g++ {
		mustLeave(t, j, g)
	}
	expectMemberships(t, j)

	// 6. Without CAP_NET_ADMIN: the multicast-routing cache report groups
	// need it, every other group does not.
	for _, g := range []uint32{unix.RTNLGRP_IPV4_MROUTE_R, unix.RTNLGRP_IPV6_MROUTE_R, unix.RTNLGRP_IPV4_IFADDR} {
		var joinErr error
		if err := selftests.WithoutCapability(unix.CAP_NET_ADMIN, func() error {
			joinErr = j.Join(g)
			return nil
		}); err != nil {
			t.Fatalf("%v", err)
		}
		want := error(unix.EPERM)
		if g == unix.RTNLGRP_IPV4_IFADDR {
			want = nil
		}
		if !errors.Is(joinErr, want) {
			t.Errorf("%s: NETLINK_ADD_MEMBERSHIP %d without CAP_NET_ADMIN: got %v, want %v", j, g, joinErr, want)
		}
	}
	expectMemberships(t, j, unix.RTNLGRP_IPV4_IFADDR)

	// 7. An option value shorter than an int is read as 0: joining with
	// a two-byte value is joining group 0 (EINVAL), and a two-byte
	// NETLINK_PKTINFO value clears the flag.
	// raw syscall: the 2-byte option value is the edge under test.
	if err := unix.SetsockoptString(j.FD(), unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, "\x05\x00"); !errors.Is(err, unix.EINVAL) {
		t.Errorf("%s: NETLINK_ADD_MEMBERSHIP with a 2-byte value (group 5 in it): got %v, want EINVAL: a value shorter than an int reads as 0", j, err)
	}
	expectMemberships(t, j, unix.RTNLGRP_IPV4_IFADDR)
	j.SetFlag(unix.NETLINK_PKTINFO, true)
	// raw syscall: the 2-byte option value is the edge under test.
	if err := unix.SetsockoptString(j.FD(), unix.SOL_NETLINK, unix.NETLINK_PKTINFO, "\x01\x00"); err != nil {
		t.Errorf("%s: NETLINK_PKTINFO with a 2-byte value: %v, want success", j, err)
	}
	if v, err := j.Option(unix.NETLINK_PKTINFO); err != nil || v != 0 {
		t.Errorf("%s: NETLINK_PKTINFO after a 2-byte value of 1: getsockopt %d, %v; want 0: a value shorter than an int reads as 0", j, v, err)
	}
}

// rtnlgrpMax is the highest NETLINK_ROUTE group of kernel v
// (rtnetlink_net_init(): cfg.groups = RTNLGRP_MAX) and its name. The list
// in include/uapi/linux/rtnetlink.h ended at RTNLGRP_STATS (36, Linux 4.7)
// up to 6.13; Linux 6.14 added RTNLGRP_IPV4_MCADDR (37) and
// RTNLGRP_IPV6_MCADDR (38) (2c2b61d2138f, "netlink: add IGMP/MLD
// join/leave notifications", net-next 15 December 2024) and
// RTNLGRP_IPV6_ACADDR (39) (33d97a07b3ae, "netlink: add IPv6 anycast
// join/leave notifications", net-next 9 January 2025). Observed: 36 on
// 6.1 and 6.12, 39 on 6.18.
func rtnlgrpMax(v selftests.KernelVersion) (uint32, string) {
	if v.AtLeast(6, 14) {
		return unix.RTNLGRP_IPV6_ACADDR, "RTNLGRP_IPV6_ACADDR"
	}
	return unix.RTNLGRP_STATS, "RTNLGRP_STATS"
}

// probeMaxGroup joins s to 33, 34, ... until the kernel answers EINVAL,
// checking the membership list after each join, and returns the last
// group it accepted. The socket is left in 33..max.
func probeMaxGroup(t selftests.T, s *selftests.Sock) uint32 {
	var joined []uint32
	for g := uint32(33); ; g++ {
		err := s.Join(g)
		if errors.Is(err, unix.EINVAL) {
			if len(joined) == 0 {
				t.Fatalf("%s: joining group 33 (RTNLGRP_BRVLAN) gave EINVAL", s)
			}
			expectMemberships(t, s, joined...)
			return g - 1
		}
		if err != nil {
			t.Fatalf("%v", err)
		}
		if g >= 64 {
			t.Fatalf("%s: the kernel accepts groups up to %d, far beyond any RTNLGRP_MAX", s, g)
		}
		joined = append(joined, g)
		expectMemberships(t, s, joined...)
	}
}

// expectInvalidGroup checks that both adding and dropping group fail with
// EINVAL and leave the memberships of s as they were.
func expectInvalidGroup(t selftests.T, s *selftests.Sock, group uint32) {
	t.Helper()
	before, err := s.Memberships()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := s.Join(group); !errors.Is(err, unix.EINVAL) {
		t.Errorf("%s: NETLINK_ADD_MEMBERSHIP %d: got %v, want EINVAL", s, group, err)
	}
	if err := s.Leave(group); !errors.Is(err, unix.EINVAL) {
		t.Errorf("%s: NETLINK_DROP_MEMBERSHIP %d: got %v, want EINVAL", s, group, err)
	}
	expectMemberships(t, s, before...)
}
