package selftests

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/rtnl"
)

// Multicast sends from s an NLMSG_NOOP with a fresh sequence number to
// group (1..32) and to portid dst (0: the kernel socket, if the protocol has
// one), and returns it as a subscriber of group sees it: msg_name carries
// s's portid, the header is as sent. The message has no NLM_F_REQUEST, so a
// kernel socket ignores it. netlink_sendmsg() broadcasts before the unicast,
// so every copy is queued when Multicast returns, even when sendto() fails
// for the unicast part (ECONNREFUSED on NETLINK_USERSOCK with dst 0).
func (s *Sock) Multicast(dst, group uint32) (Msg, error) {
	pid := s.Portid()
	m := Msg{Type: unix.NLMSG_NOOP, Seq: rtnl.NextSeq(), Pid: pid, Group: group, FromPid: pid}
	err := s.SendTo(netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: m.Seq, PID: pid}}, dst, groupMask(group))
	return m, err
}

// Request sends r from the subscriber s itself, with NLM_F_REQUEST|NLM_F_ACK
// and extra flags (e.g. netlink.Echo), and reads nothing: the echo and the
// ACK stay queued on s and belong to its transcript. The kernel handles a
// request inside sendmsg(), so every message it causes is queued, on s and
// everywhere else, when Request returns. It returns the request's sequence
// number.
func (s *Sock) Request(r rtnl.Request, flags netlink.HeaderFlags) uint32 {
	t := s.ns.env.t
	t.Helper()
	m := r.Msg
	m.Header.Flags |= netlink.Request | netlink.Acknowledge | flags
	m.Header.Sequence = rtnl.NextSeq()
	if err := s.SendTo(m, 0, 0); err != nil {
		t.Fatalf("%s: %v", r.Name, err)
	}
	return m.Header.Sequence
}

// AddAddrAs triggers E1 with a request sent by the subscriber s itself (see
// Request).
func (n *NS) AddAddrAs(s *Sock, flags netlink.HeaderFlags) AddrEvent {
	n.env.t.Helper()
	p := n.nextPrefix()
	seq := s.Request(rtnl.NewAddr(rtnl.LoopbackIndex, p), flags)
	return AddrEvent{Seq: seq, Pid: s.Portid(), Prefix: p}
}
