// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// allNSIDUnmappedSourceIgnored: a NETLINK_LISTEN_ALL_NSID subscriber in F
// receives nothing from S while F has no id for S, even though S has one
// for F: only the id of the source in the listener's namespace counts.
// Once F gives S an id, the next event reaches it, tagged with that id.
// A subscriber in S shows that each event was sent.
//
// Kernel: do_one_broadcast(), foreign socket with LISTEN_ALL_NSID:
// if (!peernet_has_id(sock_net(sk), p->net)) return; where
// peernet_has_id(net, peer) is peernet2id(net, peer) >= 0, a lookup of the
// source in the listener namespace's idr. rtnl_net_newid() allocates in
// the requester's namespace only.
func allNSIDUnmappedSourceIgnored(t selftests.T) {
	s, f := selftests.NewNS(t, "S"), selftests.NewNS(t, "F")
	s.Map(f, 7) // the reverse direction only
	fa := f.Socket("fa", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	a := s.Socket("a", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))

	f.RequireNoID(s)
	unmapped := s.AddAddr()
	f.RequireNoID(s)

	fa.Expect()
	a.Expect(unmapped.NewAddr())

	f.Map(s, 5)
	mapped := s.AddAddr()

	fa.Expect(mapped.NewAddr().NSID(5))
	a.Expect(mapped.NewAddr())
}
