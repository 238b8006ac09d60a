package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
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
	env := selftests.NewEnv(t)
	s := env.NewNS("S")
	a := s.Socket("a", selftests.BindGroups(1<<(unix.RTNLGRP_IPV4_IFADDR-1)))
	b := s.Socket("b", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))

	e1 := s.AddAddr()

	env.Expect(a, e1.NewAddr())
	env.Expect(b, e1.NewAddr())
}
