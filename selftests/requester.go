package selftests

import (
	"github.com/mdlayher/netlink"

	"nlmcast/selftests/rtnl"
)

// AddAddrAs triggers E1 with a request sent by the subscriber s itself,
// with NLM_F_REQUEST|NLM_F_ACK and extra flags (e.g. netlink.Echo), and
// reads nothing: the echo and the ACK stay queued on s and belong to its
// transcript. The kernel handles the request inside sendmsg(), so every
// message it causes is queued, on s and everywhere else, when AddAddrAs
// returns.
func (n *NS) AddAddrAs(s *Sock, flags netlink.HeaderFlags) AddrEvent {
	n.env.t.Helper()
	p := n.nextPrefix()
	r := rtnl.NewAddr(rtnl.LoopbackIndex, p)
	r.Msg.Header.Flags |= netlink.Request | netlink.Acknowledge | flags
	r.Msg.Header.Sequence = rtnl.NextSeq()
	if err := s.SendTo(r.Msg, 0, 0); err != nil {
		n.env.t.Fatalf("%s: %v", r.Name, err)
	}
	return AddrEvent{Seq: r.Msg.Header.Sequence, Pid: s.Portid(), Prefix: p}
}
