// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// tcSubscribedEchoSingleCopy: an NLM_F_ECHO requester rs that is itself
// subscribed to RTNLGRP_TC, beside another subscriber t in S, both
// observed through the whole filter, chain and action script. For each
// request rs gets every notification exactly once, then the ACK: its own
// (RTM_NEWTFILTER, RTM_DELTFILTER, RTM_NEWACTION, RTM_DELACTION with its
// seq and portid) as the echo, which the multicast skips, and the
// kernel's chain notifications (RTM_NEWCHAIN when the first filter
// creates chain 0 and for the explicit chain 7, RTM_DELCHAIN when the last
// filter or the explicit delete removes it, seq 0, pid 0) as ordinary
// multicast copies, since they exclude no portid. t gets the same
// notifications, once each, in the same order.
//
// Kernel: nlmsg_notify(): with report (NLM_F_ECHO) the multicast excludes
// the requester's portid and nlmsg_unicast() sends it the echo; chain
// notifications go out with portid 0 and no report (tc_chain_notify(),
// tc_chain_notify_delete()).
func tcSubscribedEchoSingleCopy(t selftests.T) {
	s := selftests.NewNS(t, "S")
	prepareTC(t, s)
	ts := s.Socket("t", selftests.Join(unix.RTNLGRP_TC))
	rs := s.Socket("rs", selftests.Join(unix.RTNLGRP_TC))
	runTCScript(t, s, rs, netlink.Echo, func(notes []selftests.Msg, seq uint32) {
		rs.Expect(append(notes, selftests.Ack(seq, rs.Portid()))...)
		ts.Expect(notes...)
	})
}
