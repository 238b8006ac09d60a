// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// tcNotificationChargedTrimmed: a notification built in a buffer of
// NLMSG_GOODSIZE (a page, at most 8 KiB) is trimmed to what it holds
// before it is delivered: each receiver's queue is charged (sk_rmem_alloc,
// as SO_MEMINFO reports it) less than that buffer for a qdisc
// notification of a few hundred bytes, the same for two subscribers in S and a LISTEN_ALL_NSID observer that
// maps S (their copies share the one trimmed buffer), and nothing once
// each has read it.
//
// Kernel: qdisc_notify(): alloc_skb(NLMSG_GOODSIZE, GFP_KERNEL) ->
// rtnetlink_send() -> nlmsg_notify() -> netlink_broadcast(): skb =
// netlink_trim(skb, allocation), which, when the unused tail is at least
// half the truesize, reallocates the head without it
// (pskb_expand_head(skb, 0, -delta, ...), which lowers truesize for an
// skb without an owner); do_one_broadcast() gives each receiver the skb
// or a clone (same truesize); __netlink_sendskb() -> skb_set_owner_r():
// sk_rmem_alloc += truesize; reading frees it (sock_rfree()).
func tcNotificationChargedTrimmed(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	id := o.Map(s, 3).ID
	a := s.Socket("a", selftests.Join(unix.RTNLGRP_TC))
	b := s.Socket("b", selftests.Join(unix.RTNLGRP_TC))
	obs := o.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(unix.RTNLGRP_TC))
	receivers := []*selftests.Sock{a, b, obs}

	const lo = rtnl.LoopbackIndex
	qdisc := s.CreateTC(rtnl.NewIngress(lo), "the ingress qdisc (sch_ingress)")
	buffer := uint32(min(unix.Getpagesize(), 8192))
	charged := map[*selftests.Sock]uint32{}
	for _, r := range receivers {
		charged[r] = receiveMemory(t, r)
	}
	for _, r := range receivers {
		if charged[r] == 0 || charged[r] >= buffer || charged[r] != charged[a] {
			t.Errorf("%s (netns %s): charged %d bytes for its queued RTM_NEWQDISC; want the same as %s (%d), more than 0 and less than the %d-byte buffer the notification was built in (netlink_trim())",
				r, r.NS().Name, charged[r], a, charged[a], buffer)
		}
	}
	t.Logf("each receiver charged %d bytes for the RTM_NEWQDISC (buffer %d)", charged[a], buffer)
	want := selftests.Msg{Type: unix.RTM_NEWQDISC, Flags: unix.NLM_F_REPLACE, Seq: qdisc.Seq, Pid: s.Ctl.Portid(),
		Group: unix.RTNLGRP_TC, Detail: rtnl.TCDetail(lo, "ingress")}
	a.Expect(want)
	b.Expect(want)
	obs.Expect(selftests.FromNSID(id, want)...)
	for _, r := range receivers {
		if rmem := receiveMemory(t, r); rmem != 0 {
			t.Errorf("%s (netns %s): still charged %d bytes after reading its one datagram; want 0", r, r.NS().Name, rmem)
		}
	}
}
