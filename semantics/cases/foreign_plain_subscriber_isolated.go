// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// foreignPlainSubscriberIsolated: a subscriber in another namespace without
// NETLINK_LISTEN_ALL_NSID receives nothing, even when the two namespaces
// have ids for each other in both directions.
//
// Kernel: do_one_broadcast(): if (!net_eq(sock_net(sk), p->net)) { if
// (!nlk_test_bit(LISTEN_ALL_NSID, sk)) return; ... }
func foreignPlainSubscriberIsolated(t selftests.T) {
	s, f := selftests.NewNS(t, "S"), selftests.NewNS(t, "F")
	f.Map(s, 3)
	s.Map(f, 4)
	fs := f.Socket("f", selftests.Join(unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV4_ROUTE))
	a := s.Socket("a", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))

	e1 := s.AddAddr()

	fs.Expect()
	a.Expect(e1.NewAddr())
}
