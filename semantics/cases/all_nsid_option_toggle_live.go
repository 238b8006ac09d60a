// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// allNSIDOptionToggleLive: NETLINK_LISTEN_ALL_NSID takes effect on the next
// notification, in both directions, on a socket that stays subscribed; and
// it is independent of membership: a socket with the flag but no group gets
// nothing until it joins, and nothing again once it leaves. F maps S as 3;
// a subscriber in S shows that each event was sent.
//
// getsockopt(NETLINK_LISTEN_ALL_NSID) must read the flag back, except on
// kernels before 6.9, whose netlink_getsockopt() has no case for it (6.1):
// there it is ENOPROTOOPT, which alone is accepted, and logged.
//
// Kernel: netlink_setsockopt() NETLINK_LISTEN_ALL_NSID ->
// assign_bit(NETLINK_F_LISTEN_ALL_NSID, &nlk->flags, val), tested per
// delivery in do_one_broadcast(); NETLINK_ADD/DROP_MEMBERSHIP ->
// netlink_update_socket_mc(). A patched kernel must keep its ALL_NSID
// index in sync with both.
func allNSIDOptionToggleLive(t selftests.T) {
	s, f := selftests.NewNS(t, "S"), selftests.NewNS(t, "F")
	f.Map(s, 3)
	fs := f.Socket("f", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	a := s.Socket("a", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	event := func() selftests.AddrEvent {
		t.Helper()
		e := s.AddAddr()
		a.Expect(e.NewAddr())
		return e
	}

	// 1. Plain foreign subscriber.
	event()
	fs.Expect()

	// 2. Flag set while subscribed.
	setAllNSID(t, fs, true)
	e := event()
	fs.Expect(e.NewAddr().NSID(3))

	// 3. Flag cleared while subscribed.
	setAllNSID(t, fs, false)
	event()
	fs.Expect()

	// 4. Flag without any group, then a join.
	g := f.Socket("g", selftests.With(unix.NETLINK_LISTEN_ALL_NSID))
	expectOption(t, g, unix.NETLINK_LISTEN_ALL_NSID, 1)
	event()
	g.Expect()
	if err := g.Join(unix.RTNLGRP_IPV4_IFADDR); err != nil {
		t.Fatalf("%v", err)
	}
	e = event()
	g.Expect(e.NewAddr().NSID(3))
	fs.Expect()

	// 5. The group dropped, the flag kept.
	if err := g.Leave(unix.RTNLGRP_IPV4_IFADDR); err != nil {
		t.Fatalf("%v", err)
	}
	expectOption(t, g, unix.NETLINK_LISTEN_ALL_NSID, 1)
	event()
	g.Expect()
	fs.Expect()
}

// setAllNSID sets or clears NETLINK_LISTEN_ALL_NSID on s and checks that
// getsockopt reads the new state back.
func setAllNSID(t selftests.T, s *selftests.Sock, on bool) {
	t.Helper()
	s.SetFlag(unix.NETLINK_LISTEN_ALL_NSID, on)
	expectOption(t, s, unix.NETLINK_LISTEN_ALL_NSID, flagValue(on))
}
