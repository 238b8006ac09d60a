// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// tcForeignListenerGetsNothing: RTNLGRP_TC listeners only outside S. F
// has a plain subscriber f and an ALL_NSID subscriber fa, and no id for S.
// Their membership makes netlink_has_listeners(RTNLGRP_TC) true for every
// namespace, S included, so S's tc requests build their notifications;
// delivery must still drop them, since neither socket may receive from S
// (foreign and plain; foreign, ALL_NSID, but unmapped). The script runs
// twice in S: from the control socket without NLM_F_ECHO (ACK alone,
// every request takes effect) and from the unsubscribed r with NLM_F_ECHO
// (its own notifications come back, as without any listener). f and fa
// hold nothing afterwards; then an ingress qdisc added in F reaches both
// (one RTM_NEWQDISC, no nsid): they were listening all along.
//
// Kernel: rtnl_notify_needed() -> rtnl_has_listeners() ->
// netlink_has_listeners(), the protocol-wide listeners bitmap;
// do_one_broadcast(): a socket in another namespace without
// LISTEN_ALL_NSID, or whose namespace has no id for the source
// (peernet_has_id()), is skipped.
func tcForeignListenerGetsNothing(t selftests.T) {
	s, f := selftests.NewNS(t, "S"), selftests.NewNS(t, "F")
	prepareTC(t, s)
	fp := f.Socket("f", selftests.Join(unix.RTNLGRP_TC))
	fa := f.Socket("fa", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(unix.RTNLGRP_TC))
	f.RequireNoID(s)

	runTCScriptCtl(t, s)
	r := s.Socket("r")
	runTCScript(t, s, r, netlink.Echo, func(notes []selftests.Msg, seq uint32) {
		r.Expect(append(echoed(notes, seq), selftests.Ack(seq, r.Portid()))...)
	})
	f.RequireNoID(s)
	fp.Expect()
	fa.Expect()

	q := f.CreateTC(rtnl.NewIngress(tcDev), "the ingress qdisc (sch_ingress)")
	// NLM_F_REPLACE: the ingress qdisc replaces the built-in noop one.
	qdisc := selftests.Msg{Type: unix.RTM_NEWQDISC, Flags: unix.NLM_F_REPLACE, Seq: q.Seq, Pid: f.Ctl.Portid(),
		Group: unix.RTNLGRP_TC, Detail: rtnl.TCDetail(tcDev, "ingress")}
	fp.Expect(qdisc)
	fa.Expect(qdisc)
}
