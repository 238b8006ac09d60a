// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// otherProtocolUsersockUnaffected: NETLINK_USERSOCK multicast follows the
// same per-socket rules as NETLINK_ROUTE; the series re-indexes only the
// NETLINK_ROUTE walk, so this holds in every mode. All sockets are
// NETLINK_USERSOCK and join group 1. In S: the sender `us`, `ul`, and
// `sink` (no group). In F, which maps S as 7: `uf` (plain) and `ufa`
// (LISTEN_ALL_NSID). In O, which has no id for S: `uoa` (LISTEN_ALL_NSID).
//
//  1. us sends to group 1 and to sink's portid: ul gets the multicast,
//     sink the unicast, ufa the multicast with nsid 7; us (the sender), uf
//     (plain, foreign) and uoa (unmapped source) get nothing.
//  2. us sends to group 1 and to portid 0: NETLINK_USERSOCK has no kernel
//     socket, so after broadcasting netlink_sendmsg() finds no socket with
//     portid 0 and sendto() fails with ECONNREFUSED; the multicast has gone
//     out all the same (ul, ufa) and nobody else has anything. Programs
//     must not rely on this quirk (they send to a real portid); the case
//     asserts it because the kernel has always behaved so and a change
//     to the walk must not alter it.
//  3. NETLINK_USERSOCK lets anyone send to a group but not listen to one
//     (NL_CFG_F_NONROOT_SEND without NL_CFG_F_NONROOT_RECV): from a
//     thread without CAP_NET_ADMIN, bind() with group 1 and
//     NETLINK_ADD_MEMBERSHIP of group 1 are EPERM, and the socket `u`
//     stays in no group; with it, the same join succeeds.
//
// Kernel: netlink_add_usersock_entry() (groups = 32, NL_CFG_F_NONROOT_SEND);
// netlink_getsockopt(NETLINK_LIST_MEMBERSHIPS): for (pos = 0; pos * 8 <
// nlk->ngroups; pos += sizeof(u32)), optlen = ALIGN(BITS_TO_BYTES(ngroups), 4);
// netlink_sendmsg(): netlink_broadcast() before netlink_unicast(), whose
// netlink_getsockbyportid() gives -ECONNREFUSED for an unknown portid;
// do_one_broadcast() as for every protocol; netlink_bind(): if (groups)
// { if (!netlink_allowed(sock, NL_CFG_F_NONROOT_RECV)) return -EPERM; },
// and the same test in netlink_setsockopt()'s NETLINK_ADD_MEMBERSHIP.
func otherProtocolUsersockUnaffected(t selftests.T) {
	s, f, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "F"), selftests.NewNS(t, "O")
	f.Map(s, 7)
	o.RequireNoID(s)
	const group = 1
	usersock := selftests.Proto(unix.NETLINK_USERSOCK)
	join := selftests.Join(group)
	allNSID := selftests.With(unix.NETLINK_LISTEN_ALL_NSID)
	us := s.Socket("us", usersock, join)
	ul := s.Socket("ul", usersock, join)
	sink := s.Socket("sink", usersock)
	uf := f.Socket("uf", usersock, join)
	ufa := f.Socket("ufa", usersock, allNSID, join)
	uoa := o.Socket("uoa", usersock, allNSID, join)
	// NETLINK_USERSOCK has 32 groups: its memberships are one word, and
	// the kernel writes no second one (a wider loop would: 32 is where
	// pos * 8 < ngroups stops).
	expectMemberships(t, ul, group)

	// 1.
	m := us.MustMulticast(sink.Portid(), group)
	us.Expect()
	ul.Expect(m)
	sink.Expect(m)
	uf.Expect()
	ufa.Expect(m.NSID(7))
	uoa.Expect()

	// 2.
	m, err := us.Multicast(0, group)
	if !errors.Is(err, unix.ECONNREFUSED) {
		t.Errorf("%s: sendto(nl_pid 0, group %d): got %v, want ECONNREFUSED (no NETLINK_USERSOCK kernel socket)", us, group, errors.Unwrap(err))
	}
	us.Expect()
	ul.Expect(m)
	sink.Expect()
	uf.Expect()
	ufa.Expect(m.NSID(7))
	uoa.Expect()

	// 3.
	u := s.Socket("u", usersock)
	var bindErr, joinErr error
	if err := selftests.WithoutCapability(unix.CAP_NET_ADMIN, func() error {
		bindErr = u.Bind(u.Portid(), nlsock.GroupMask(group))
		joinErr = u.Join(group)
		return nil
	}); err != nil {
		t.Fatalf("%v", err)
	}
	if !errors.Is(bindErr, unix.EPERM) {
		t.Errorf("%s: bind() to NETLINK_USERSOCK group %d without CAP_NET_ADMIN: got %v, want EPERM", u, group, bindErr)
	}
	if !errors.Is(joinErr, unix.EPERM) {
		t.Errorf("%s: NETLINK_ADD_MEMBERSHIP of NETLINK_USERSOCK group %d without CAP_NET_ADMIN: got %v, want EPERM", u, group, joinErr)
	}
	expectMemberships(t, u)
	mustJoin(t, u, group)
	expectMemberships(t, u, group)
}
