// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// allNSIDRequiresCapNetBroadcast: CAP_NET_BROADCAST guards both ends of
// NETLINK_LISTEN_ALL_NSID. O maps S as 6, U maps S as 5; every listener
// has joined RTNLGRP_IPV4_IFADDR.
//
// (a) Setting the flag needs CAP_NET_BROADCAST over the user namespace of
// the socket's namespace, even to clear it. On a thread without it in its
// effective set, setsockopt on `f` (in O) gives EPERM with 1 and with 0,
// and the flag keeps its state: getsockopt reads it back, and so does
// delivery (nothing from S while it is off, S's event with nsid 6 while
// it is on). From an ordinary thread of this process the same call works.
//
// (b) Delivery from another namespace needs CAP_NET_BROADCAST over the
// source's user namespace in the credentials of the socket's opener, not
// of whoever set the flag. Two sockets with the flag, the group and a
// mapping get nothing from S: `u`, opened by root of a child user
// namespace in U (its namespace), and `n`, opened in O by a thread of
// this process without CAP_NET_BROADCAST in its effective set. Beside
// them, `p` (opened by us in U) and `f` get S's event with their ids, and
// an event in their own namespace reaches u and n: they are working
// subscribers that only the capability check turns away. The part with
// `u` and `p` is skipped, with the reason, where user namespaces cannot be
// created.
//
// Kernel: netlink_setsockopt(): case NETLINK_LISTEN_ALL_NSID: if
// (!ns_capable(sock_net(sk)->user_ns, CAP_NET_BROADCAST)) return -EPERM;
// do_one_broadcast(): if (!file_ns_capable(sk->sk_socket->file,
// p->net->user_ns, CAP_NET_BROADCAST)) return; file_ns_capable() checks
// file->f_cred, the credentials socket() was called with.
func allNSIDRequiresCapNetBroadcast(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	o.Map(s, 6)
	const ifaddr = unix.RTNLGRP_IPV4_IFADDR

	// (a)
	f := o.Socket("f", selftests.Join(ifaddr))
	setAllNSIDWithoutCap(t, f, true)
	expectOption(t, f, unix.NETLINK_LISTEN_ALL_NSID, 0)
	s.AddAddr()
	f.Expect()

	setAllNSID(t, f, true)
	e := s.AddAddr()
	f.Expect(e.NewAddr().NSID(6))

	setAllNSIDWithoutCap(t, f, false)
	expectOption(t, f, unix.NETLINK_LISTEN_ALL_NSID, 1)
	e = s.AddAddr()
	f.Expect(e.NewAddr().NSID(6))

	// (b)
	n := o.SocketWithout(unix.CAP_NET_BROADCAST, "n", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(ifaddr))
	expectOption(t, n, unix.NETLINK_LISTEN_ALL_NSID, 1)
	userNS, u, noUserNS := selftests.NewUserNS(t, "U", "u", unix.NETLINK_ROUTE)
	var p *selftests.Sock
	if noUserNS == nil {
		listenAllNSID(t, u, ifaddr)
		p = userNS.Socket("p", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(ifaddr))
		userNS.Map(s, 5)
	}

	e = s.AddAddr()
	n.Expect()
	f.Expect(e.NewAddr().NSID(6))
	if noUserNS == nil {
		u.Expect()
		p.Expect(e.NewAddr().NSID(5))
	}

	e = o.AddAddr()
	n.Expect(e.NewAddr())
	f.Expect(e.NewAddr())

	if noUserNS != nil {
		t.Skipf("the socket opened by root of a child user namespace: %v (the rest of the case ran)", noUserNS)
	}
	e = userNS.AddAddr()
	u.Expect(e.NewAddr())
	p.Expect(e.NewAddr())
	n.Expect()
	f.Expect()
}

// setAllNSIDWithoutCap calls setsockopt(NETLINK_LISTEN_ALL_NSID) on s from
// a thread without CAP_NET_BROADCAST and checks that it gives EPERM.
func setAllNSIDWithoutCap(t selftests.T, s *selftests.Sock, on bool) {
	t.Helper()
	var setErr error
	err := selftests.WithoutCapability(unix.CAP_NET_BROADCAST, func() error {
		setErr = s.SetOption(unix.NETLINK_LISTEN_ALL_NSID, on)
		return nil
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
	if !errors.Is(setErr, unix.EPERM) {
		t.Errorf("%s: setsockopt(NETLINK_LISTEN_ALL_NSID, %d) without CAP_NET_BROADCAST: %v, want EPERM", s, flagValue(on), setErr)
	}
}

// listenAllNSID binds s, sets NETLINK_LISTEN_ALL_NSID (from this process,
// which has CAP_NET_BROADCAST everywhere) and joins group.
func listenAllNSID(t selftests.T, s *selftests.Sock, group uint32) {
	t.Helper()
	if err := s.Bind(0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	setAllNSID(t, s, true)
	if err := s.Join(group); err != nil {
		t.Fatalf("%v", err)
	}
}
