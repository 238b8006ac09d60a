// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"github.com/mdlayher/netlink"

	"nlmcast/selftests"
)

// tcEchoWithoutListener: with no RTNLGRP_TC subscriber in S, the filter,
// chain and action script of the conditional-notification cases takes
// effect request by request (filter and chain dumps, RTM_GETACTION), and
// the unsubscribed requester r gets:
//
//   - with NLM_F_ECHO: exactly its request's own notification (filter add
//     and replace: RTM_NEWTFILTER; key and filter delete: RTM_DELTFILTER;
//     action add and delete: RTM_NEWACTION, RTM_DELACTION "mirred index
//     7"), with the request's seq and r's portid, then the ACK. Chain
//     add and delete are not echoed: the kernel sends RTM_NEWCHAIN and
//     RTM_DELCHAIN as its own notifications, with no portid, seq 0 and
//     no NLM_F_ECHO (tc_ctl_chain() -> tc_chain_notify(chain, NULL, 0,
//     NLM_F_CREATE | NLM_F_EXCL, ...); __tcf_chain_put() ->
//     tc_chain_notify_delete(..., NULL, 0, 0, ...)), so r gets the ACK
//     alone, as do all requests of the second run,
//   - without NLM_F_ECHO: only the ACKs.
//
// Whether another program listens to RTNLGRP_TC somewhere does not change
// any of this; where no one does (a quiet machine), the kernel since 6.8
// builds no notification for the unechoed requests at all, and for a key
// delete calls the classifier's delete directly (tfilter_del_notify()).
//
// Kernel: tfilter_notify(), tfilter_del_notify(), tc_chain_notify(),
// tcf_add_notify(), tcf_del_notify(): if (!rtnl_notify_needed(net,
// n->nlmsg_flags, RTNLGRP_TC)) skip building, else rtnetlink_send(...,
// n->nlmsg_flags & NLM_F_ECHO) -> nlmsg_notify() -> nlmsg_unicast() to the
// requester.
func tcEchoWithoutListener(t selftests.T) {
	s := selftests.NewNS(t, "S")
	prepareTC(t, s)
	r := s.Socket("r")
	runTCScript(t, s, r, netlink.Echo, func(notes []selftests.Msg, seq uint32) {
		r.Expect(append(echoed(notes, seq), selftests.Ack(seq, r.Portid()))...)
	})
	runTCScript(t, s, r, 0, func(_ []selftests.Msg, seq uint32) {
		r.Expect(selftests.Ack(seq, r.Portid()))
	})
}
