// SPDX-License-Identifier: GPL-2.0

package main

import (
	"maps"
	"slices"

	"nlmcast/selftests"
)

// switchModesDeliverIdentically: the whole matrix, run once at 0 and once
// at 1 in fresh namespaces with the same ids, gives every member exactly
// the unpatched kernel's transcript in both runs, and the two runs'
// transcripts are identical member by member: type, seq, pid, msg_name,
// PKTINFO group, nsid, payload summary, and the ENOBUFS error with the
// part of a burst an overrun socket kept. Sequence numbers and autobound
// portids, which differ from run to run, are compared by position.
// Ordering across sockets is not compared; ordering on one socket is.
//
// The matrix (scenario.go): E1 in S, F, U and O; RTM_NEWNEXTHOP (group
// 32), RTM_NEWNSID (28), RTM_NEWSTATS (36, above the bind bitmask);
// PKTINFO; local ALL_NSID; mapped (ids 0, 3, 5, 7, 9) and unmapped
// ALL_NSID; foreign plain; user multicast excluding its sender and its
// sendto() destination; NLM_F_ECHO excluding the requester's portid in
// every namespace; and NETLINK_BROADCAST_ERROR making `tc actions add`
// fail with ENOBUFS for a congested local or mapped ALL_NSID recipient
// only.
//
// Kernel: the patch changes only the candidate iteration of
// netlink_broadcast(); do_one_broadcast() and the completion
// (delivery_failure -> -ENOBUFS) are untouched, so nothing a receiver or
// a requester can see may differ.
func switchModesDeliverIdentically(t selftests.T) {
	sw := requireSwitch(t)
	restoreAtEnd(t, sw)
	var runs [2]map[string][]selftests.Line
	for i, mode := range []string{"0", "1"} {
		setSwitch(t, sw, mode)
		sc := newScenario(t, ".mode"+mode)
		sc.full()
		runs[i] = sc.transcripts()
	}
	names := slices.Sorted(maps.Keys(runs[0]))
	for _, name := range slices.Sorted(maps.Keys(runs[1])) {
		if _, ok := runs[0][name]; !ok {
			names = append(names, name)
		}
	}
	for _, name := range names {
		if d := selftests.DiffLines(runs[0][name], runs[1][name]); d != "" {
			t.Errorf("member %s: mode 0 (left) and mode 1 (right) delivered differently:\n%s", name, d)
		}
	}
}
