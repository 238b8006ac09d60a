package main

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// userMulticast sends from s an NLMSG_NOOP with a fresh sequence number to
// group (1..32) and to portid dst, and returns it as a subscriber of group
// sees it: msg_name carries s's portid, the header is as sent. The message
// has no NLM_F_REQUEST, so a kernel socket (dst 0 on NETLINK_ROUTE) ignores
// it. The error is sendto()'s.
func userMulticast(s *selftests.Sock, dst, group uint32) (selftests.Msg, error) {
	pid := s.Portid()
	m := selftests.Msg{Type: unix.NLMSG_NOOP, Seq: rtnl.NextSeq(), Pid: pid, Group: group, FromPid: pid}
	err := s.SendTo(netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: m.Seq, PID: pid}}, dst, groupBit(group))
	return m, err
}
