// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// tcGroupDelivery: tc notifications follow the same delivery rules as every
// other group. A full ingress qdisc and u32 filter life cycle on lo in S
// reaches the local RTNLGRP_TC subscriber and the ALL_NSID observer that
// maps S (with its id) message for message, and nothing reaches the plain
// subscriber in F. The first filter on a chain creates it (RTM_NEWCHAIN, a
// notification without seq or pid), deleting the last filter deletes it
// (RTM_DELCHAIN), and deleting the qdisc while a filter is attached gives
// RTM_DELQDISC and RTM_DELCHAIN, not RTM_DELTFILTER. So the filter is added
// again before the qdisc goes: with no filter left, the kernel would send
// RTM_DELQDISC alone (chain 0 went with the filter), and the chain's
// deletion by the qdisc would go unchecked.
//
// Kernel: qdisc_notify(), tfilter_notify(), tfilter_del_notify() and
// tc_chain_notify() -> rtnetlink_send(..., RTNLGRP_TC, echo) ->
// nlmsg_notify() -> do_one_broadcast(); a new chain is notified from
// tcf_chain_tp_insert_unique() with portid 0 and seq 0, a deleted one from
// __tcf_chain_put() when its last reference goes.
//
// Header flags (the same on 6.1, 6.12 and 6.18): RTM_NEWQDISC has
// NLM_F_REPLACE, because the ingress qdisc replaces the built-in noop
// qdisc (qdisc_notify(): old ? NLM_F_REPLACE : 0); a filter notification
// has the flags of the request itself (tfilter_notify(n->nlmsg_flags),
// NLM_F_REQUEST and NLM_F_ACK included); a chain the first filter creates
// has NLM_F_CREATE|NLM_F_EXCL (tc_chain_notify() from
// tcf_chain_tp_insert_unique()); RTM_DELQDISC and RTM_DELCHAIN have none.
func tcGroupDelivery(t selftests.T) {
	s, o, f := selftests.NewNS(t, "S"), selftests.NewNS(t, "O"), selftests.NewNS(t, "F")
	id := o.Map(s, 6).ID
	ts := s.Socket("t", selftests.Join(unix.RTNLGRP_TC))
	obs := o.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(unix.RTNLGRP_TC))
	fs := f.Socket("f", selftests.Join(unix.RTNLGRP_TC))

	const lo, prio = rtnl.LoopbackIndex, 1
	pid := s.Ctl.Portid()
	tc := func(typ uint16, flags uint16, seq uint32, kind string) selftests.Msg {
		return selftests.Msg{Type: typ, Flags: flags, Seq: seq, Pid: pid, Group: unix.RTNLGRP_TC,
			Detail: rtnl.TCDetail(lo, kind)}
	}

	var want []selftests.Msg
	qdisc := s.CreateTC(rtnl.NewIngress(lo), "the ingress qdisc (sch_ingress)")
	want = append(want, tc(unix.RTM_NEWQDISC, unix.NLM_F_REPLACE, qdisc.Seq, "ingress"))
	filter := s.CreateTC(rtnl.NewU32Mirred(lo, prio, lo), "the u32 classifier or the mirred action")
	want = append(want, chainNotification(unix.RTM_NEWCHAIN, 0), tc(unix.RTM_NEWTFILTER, filter.Flags, filter.Seq, "u32 chain 0"))
	del := s.Do(rtnl.DelU32(lo, prio))
	want = append(want, tc(unix.RTM_DELTFILTER, del.Flags, del.Seq, "u32 chain 0"), chainNotification(unix.RTM_DELCHAIN, 0))
	filter = s.Do(rtnl.NewU32Mirred(lo, prio, lo))
	want = append(want, chainNotification(unix.RTM_NEWCHAIN, 0), tc(unix.RTM_NEWTFILTER, filter.Flags, filter.Seq, "u32 chain 0"))
	qdel := s.Do(rtnl.DelIngress(lo))
	want = append(want, tc(unix.RTM_DELQDISC, 0, qdel.Seq, "ingress"), chainNotification(unix.RTM_DELCHAIN, 0))

	ts.Expect(want...)
	obs.Expect(selftests.FromNSID(id, want...)...)
	fs.Expect()
}
