// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// localAllNSIDSingleCopy: a LISTEN_ALL_NSID subscriber in the source
// namespace gets each local notification exactly once, in order and
// without an nsid control message, like a plain subscriber beside it:
// the flag adds foreign namespaces, it never duplicates local delivery
// (the cover letter's "no duplicate delivery" rule for the index).
//
// First S has no id for itself (checked); then S gives itself an id
// (RTM_NEWNSID sent in S with S's own fd, as `ip netns set S 17`) and the
// same holds: a local notification carries no nsid control message even
// when the source has an id in the listener's namespace, because it is the
// listener's own namespace. Observed on 6.1 (6.1.192), 6.12 (6.12.117) and
// 6.18.
//
// Kernel: netlink_broadcast_filtered() calls do_one_broadcast() once per
// socket on mc_list; it sets the nsid only for a socket in another
// namespace (88b126b39f97, "net: netlink: dont set nsid on local
// notifications": NETLINK_CB(p->skb2).nsid_is_set = false, then
// peernet2id() inside if (!net_eq(sock_net(sk), p->net))), and
// netlink_cmsg_listen_all_nsid() writes no cmsg while nsid_is_set is
// false.
func localAllNSIDSingleCopy(t selftests.T) {
	s := selftests.NewNS(t, "S")
	groups := selftests.Join(unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV4_ROUTE)
	sa := s.Socket("sa", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), groups)
	sp := s.Socket("sp", groups)

	s.RequireNoID(s)
	events := func() {
		t.Helper()
		var want []selftests.Msg
		for range 3 {
			e := s.AddAddr()
			want = append(want, e.NewAddr(), e.NewRoute())
		}
		sa.Expect(want...)
		sp.Expect(want...)
	}
	events()

	// A self id changes nothing: still one copy each, no nsid.
	s.Map(s, selfID)
	events()
}

// selfID is the id S gives itself.
const selfID = 17
