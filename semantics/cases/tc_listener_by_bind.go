// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// tcListenerByBind: a socket that joined RTNLGRP_TC with bind()'s
// nl_groups alone, first bind or re-bind, is a listener of the group: the
// filter, chain and action script notifies it message for message though
// no socket joined with NETLINK_ADD_MEMBERSHIP. A re-bind without the
// group takes it out: the bound socket that left gets nothing more.
//
// Since 6.8 (and in Debian's 6.1.192) tc builds a notification only when
// the request has NLM_F_ECHO or the protocol's listeners bitmap has the
// group, so a member missing from that bitmap would get nothing. The
// bitmap is shared by every namespace: where something else listens to
// RTNLGRP_TC (another program, a case running beside this one), the
// notifications are built anyway and the case proves less, never fails
// falsely. So it runs alone, after the concurrent cases, and on a quiet
// kernel (a test VM) its sockets are the group's only members.
//
// Kernel: netlink_bind(): nlk->groups[0] = ... | groups;
// netlink_update_listeners(sk), which ORs every bound socket's groups into
// tbl->listeners under the table's grab; tfilter_notify(),
// tc_chain_notify(), tcf_add_notify(): rtnl_notify_needed() ->
// rtnl_has_listeners() -> netlink_has_listeners(): test_bit(group - 1,
// listeners->masks).
func tcListenerByBind(t selftests.T) {
	s := selftests.NewNS(t, "S")
	prepareTC(t, s)
	r := s.Socket("r")
	bound := s.Socket("bound", selftests.BindGroups(nlsock.GroupMask(unix.RTNLGRP_TC)))
	rebound := s.Socket("rebound", selftests.BindGroups(0))
	runTCScript(t, s, r, 0, func(notes []selftests.Msg, seq uint32) {
		bound.Expect(notes...)
		rebound.Expect()
		r.Expect(selftests.Ack(seq, r.Portid()))
	})

	rebind(t, rebound, nlsock.GroupMask(unix.RTNLGRP_TC))
	rebind(t, bound, 0)
	runTCScript(t, s, r, 0, func(notes []selftests.Msg, seq uint32) {
		rebound.Expect(notes...)
		bound.Expect()
		r.Expect(selftests.Ack(seq, r.Portid()))
	})
}
