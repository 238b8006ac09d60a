// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// localSubscriberDelivery: a subscriber in the source namespace gets every
// notification of its groups once, whether it subscribed with a bind
// bitmask or with NETLINK_ADD_MEMBERSHIP, and nothing of the groups it did
// not join.
//
// Kernel: do_one_broadcast() group test (test_bit(group - 1, nlk->groups))
// and same-netns path; rtmsg_ifa() -> rtnl_notify(RTNLGRP_IPV4_IFADDR) with
// the request's seq and portid; netlink_recvmsg() sets msg_name nl_pid 0 and
// nl_groups = netlink_group_mask(dst_group).
func localSubscriberDelivery(t selftests.T) {
	s := selftests.NewNS(t, "S")
	a := s.Socket("a", selftests.BindGroups(nlsock.GroupMask(unix.RTNLGRP_IPV4_IFADDR)))
	b := s.Socket("b", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))

	e1 := s.AddAddr()

	a.Expect(e1.NewAddr())
	b.Expect(e1.NewAddr())
}
