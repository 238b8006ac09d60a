// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// statsNotificationAllocFailureENOBUFS: the error a failed notification
// reports reaches the members of rtnetlink's last group like those of any
// other: when RTM_NEWSTATS (RTNLGRP_STATS, 36, RTNLGRP_MAX on 6.1) cannot
// be allocated, its members' next read fails with ENOBUFS, and the
// request, which switched lo's L3 statistics on, succeeds. A member of
// another group is told nothing.
//
// The search is failNthSearch's: the same RTM_SETSTATS, with fail-nth N =
// 1, 2, ... from statistics off, until the member reads ENOBUFS; after
// each try that missed the statistics are switched off again and the
// member's queue is read empty.
//
// Kernel: rtnl_stats_set() -> rtnl_offload_xstats_notify(): skb =
// nlmsg_new(); if (!skb) goto errout; ... errout: rtnl_set_sk_err(net,
// RTNLGRP_STATS, err) -> do_one_set_err(): skips a socket only if
// p->group - 1 >= nlk->ngroups or the group's bit is clear.
func statsNotificationAllocFailureENOBUFS(t selftests.T) {
	openFailNth(t)
	s := selftests.NewNS(t, "S")
	if _, ok := s.SetL3Stats(true); !ok {
		t.Skipf("no RTM_SETSTATS on Linux %s (5.19+): no RTM_NEWSTATS notification to fail", selftests.Kernel(t))
	}
	s.SetL3Stats(false)
	probe := s.Socket("probe", selftests.Join(unix.RTNLGRP_STATS))
	other := s.Socket("other", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	requester := s.Socket("requester")
	a, tried := failNthSearch{
		request: "RTM_SETSTATS", alloc: "rtnl_offload_xstats_notify()'s", probe: probe, want: unix.ENOBUFS,
		send: func(n int) attempt {
			return newArmedRequest(t, requester, rtnl.SetL3Stats(rtnl.LoopbackIndex, true)).send(t, n)
		},
		// Statistics off (a no-op, 0, where the try left them off) and
		// the member's queue empty: the next try starts where this one
		// did.
		tidy: func(n int) {
			if _, err := s.Ctl.Do(rtnl.SetL3Stats(rtnl.LoopbackIndex, false)); err != nil {
				t.Fatalf("after fail-nth %d: %v", n, err)
			}
			if _, err := probe.Transcript(); err != nil {
				t.Fatalf("after fail-nth %d: %v", n, err)
			}
		},
		clean: []*selftests.Sock{other},
	}.run(t)
	if a.sendErr != nil || a.recvErr != nil || a.ackErrno != 0 {
		t.Errorf("netns S: RTM_SETSTATS with fail-nth %d: %s; want an ACK with errno 0: the statistics are switched on though their notification failed; tried: %v", a.n, a, tried)
	}
	probe.Expect()
	other.Expect()
}
