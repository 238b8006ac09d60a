// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// tcEchoRequester: a tc request with NLM_F_ECHO gets its notification back
// exactly once, as a unicast that still shows RTNLGRP_TC in msg_name,
// before the ACK, whether the requester is subscribed to the group or not,
// and even when no socket in the namespace listens; without NLM_F_ECHO an
// unsubscribed requester gets only the ACK and a subscribed one the
// ordinary multicast copy. Other subscribers get one copy either way.
//
// Kernel: qdisc_notify() builds the message when rtnl_notify_needed()
// (NLM_F_ECHO, or any RTNLGRP_TC listener in any namespace) and sends it
// with rtnetlink_send() -> nlmsg_notify(): with report set, the multicast
// excludes the requester's portid and nlmsg_unicast() sends it the same
// skb, whose dst_group nlmsg_multicast() has set. On kernels before the tc
// conditional-notification series the message is always built; the
// transcripts are the same.
//
// Header flags: RTM_NEWQDISC has NLM_F_REPLACE (the ingress qdisc replaces
// the built-in noop qdisc: qdisc_notify() passes old ? NLM_F_REPLACE : 0,
// not the request's flags, so no NLM_F_ECHO either), RTM_DELQDISC none;
// the same on 6.1, 6.12 and 6.18.
func tcEchoRequester(t selftests.T) {
	s := selftests.NewNS(t, "S")
	const lo = rtnl.LoopbackIndex
	// The kernel must know the ingress qdisc; the probe leaves lo without
	// one, before any socket of the case exists.
	s.CreateTC(rtnl.NewIngress(lo), "the ingress qdisc (sch_ingress)")
	s.Do(rtnl.DelIngress(lo))

	r := s.Socket("r")
	rs := s.Socket("rs", selftests.Join(unix.RTNLGRP_TC))
	ts := s.Socket("t", selftests.Join(unix.RTNLGRP_TC))
	qdisc := func(typ uint16, seq uint32, from *selftests.Sock) selftests.Msg {
		var flags uint16
		if typ == unix.RTM_NEWQDISC {
			flags = unix.NLM_F_REPLACE
		}
		return selftests.Msg{Type: typ, Flags: flags, Seq: seq, Pid: from.Portid(), Group: unix.RTNLGRP_TC,
			Detail: rtnl.TCDetail(lo, "ingress")}
	}
	// (a) Unsubscribed requester with ECHO: the echo, then the ACK.
	seq := r.Request(rtnl.NewIngress(lo), netlink.Echo)
	r.Expect(qdisc(unix.RTM_NEWQDISC, seq, r), selftests.Ack(seq, r.Portid()))
	rs.Expect(qdisc(unix.RTM_NEWQDISC, seq, r))
	ts.Expect(qdisc(unix.RTM_NEWQDISC, seq, r))

	// (b) Subscribed requester without ECHO: its multicast copy, then the ACK.
	seq = rs.Request(rtnl.DelIngress(lo), 0)
	rs.Expect(qdisc(unix.RTM_DELQDISC, seq, rs), selftests.Ack(seq, rs.Portid()))
	ts.Expect(qdisc(unix.RTM_DELQDISC, seq, rs))
	r.Expect()

	// (c) Subscribed requester with ECHO: one copy (the echo), not two.
	seq = rs.Request(rtnl.NewIngress(lo), netlink.Echo)
	rs.Expect(qdisc(unix.RTM_NEWQDISC, seq, rs), selftests.Ack(seq, rs.Portid()))
	ts.Expect(qdisc(unix.RTM_NEWQDISC, seq, rs))
	r.Expect()

	// (d) ECHO with no RTNLGRP_TC subscriber left in S: still echoed.
	closeSock(t, rs)
	closeSock(t, ts)
	seq = r.Request(rtnl.DelIngress(lo), netlink.Echo)
	r.Expect(qdisc(unix.RTM_DELQDISC, seq, r), selftests.Ack(seq, r.Portid()))

	// (e) Unsubscribed requester without ECHO: only the ACK.
	seq = r.Request(rtnl.NewIngress(lo), 0)
	r.Expect(selftests.Ack(seq, r.Portid()))
}
