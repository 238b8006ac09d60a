// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// socketCloseUnsubscribes: closing a subscribed socket, even one with an
// unread notification queued, takes it out of delivery and leaves the
// other subscribers, local and foreign LISTEN_ALL_NSID (O maps S as 13),
// exactly as they were: one copy per event, no ENOBUFS, no error. Sockets
// opened afterwards get only the events that follow their creation.
//
// Kernel: netlink_release() -> netlink_remove(): if
// (nlk_sk(sk)->subscriptions) { __sk_del_bind_node(sk);
// netlink_update_listeners(sk); }; the queued skbs are purged with the
// socket (netlink_sock_destruct).
func socketCloseUnsubscribes(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	o.Map(s, 13)
	join := selftests.Join(unix.RTNLGRP_IPV4_IFADDR)
	allNSID := selftests.With(unix.NETLINK_LISTEN_ALL_NSID)
	s1, s2 := s.Socket("s1", join), s.Socket("s2", join)
	o1, o2 := o.Socket("o1", allNSID, join), o.Socket("o2", allNSID, join)

	e := s.AddAddr()
	s1.Expect(e.NewAddr())
	s2.Expect(e.NewAddr())
	o1.Expect(e.NewAddr().NSID(13))
	o2.Expect(e.NewAddr().NSID(13))

	// One more event, left unread in s1 and o1, which are then closed.
	e = s.AddAddr()
	s2.Expect(e.NewAddr())
	o2.Expect(e.NewAddr().NSID(13))
	closeWithQueued(t, s1)
	closeWithQueued(t, o1)

	e = s.AddAddr()
	s2.Expect(e.NewAddr())
	o2.Expect(e.NewAddr().NSID(13))

	// New subscribers see only what happens after they exist.
	s3, o3 := s.Socket("s3", join), o.Socket("o3", allNSID, join)
	s3.Expect()
	o3.Expect()
	e = s.AddAddr()
	s2.Expect(e.NewAddr())
	s3.Expect(e.NewAddr())
	o2.Expect(e.NewAddr().NSID(13))
	o3.Expect(e.NewAddr().NSID(13))
}

// closeWithQueued checks that s has something queued (poll, no wait) and
// closes it without reading it.
func closeWithQueued(t selftests.T, s *selftests.Sock) {
	t.Helper()
	readable, err := s.Wait(0)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if !readable {
		t.Fatalf("%s: nothing queued before close, want the unread notification", s)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("%v", err)
	}
}
