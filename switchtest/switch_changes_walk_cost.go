// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"strconv"

	"nlmcast/selftests"
	"nlmcast/selftests/netns"
)

// switchChangesWalkCost: the switch changes the walk, not only a stored
// value. Delivery is the same in both modes by design, so only the cost
// tells the walks apart. walkCostDefaults.subscribers ordinary
// subscribers (bound to groups 1, 5 and 7, never reading) live in four
// foreign namespaces; each had LISTEN_ALL_NSID set once, after its bind,
// and cleared again. A sender in a child
// namespace S (not the initial one: the switch must work for every
// namespace) multicasts NLMSG_NOOPs to group 1 and times its own
// locked thread's CPU (CLOCK_THREAD_CPUTIME_ID) per sendto, inside which
// the kernel walks the candidates. Blocks at 0 and at 1 run in pairs,
// whose order alternates; mode 1 must cost less than walkCostThreshold
// times mode 0 (median over the pairs of the ratio of the blocks' median
// times; walkcost_verdict.go). The one subscriber in S must get every
// multicast exactly once, in order, and the foreign ones nothing.
//
// Kernel: at 0, netlink_broadcast() walks nl_table[NETLINK_ROUTE].mc_list,
// every subscribed ROUTE socket of every namespace, and
// do_one_broadcast() rejects each foreign one (!net_eq() and no
// NETLINK_F_LISTEN_ALL_NSID); at 1 it walks netlink_route_mc_head() of
// S, which holds only the receiver, and the global ALL_NSID list, which
// holds none of these sockets: clearing the option took each off it. A kernel that stores the value and keeps
// walking mc_list gives a ratio near 1 and fails, showing it.
func switchChangesWalkCost(t selftests.T) {
	sw := requireSwitch(t)
	restoreAtEnd(t, sw)
	f := newWalkFixture(t, walkCostDefaults)
	if same, err := netns.Same(f.sender, sw.Initial()); err != nil || same {
		t.Fatalf("the sender's netns S must not be the initial netns: same=%v, %v", same, err)
	}
	pairs, err := f.measure(func(mode int) error { return sw.Set(strconv.Itoa(mode)) },
		func(mode int) error { return switchIs(sw, mode) })
	switch {
	case errors.Is(err, errSwitchMoved):
		t.Skipf("another program changed the switch during the measurement (no flock on this kernel?): %v", err)
	case err != nil:
		t.Fatalf("%v", err)
	}
	if err := f.quietForeign(); err != nil {
		t.Fatalf("%v", err)
	}
	v := judgeWalkCost(pairs, walkCostThreshold)
	if !v.cheaper {
		t.Fatalf("%s", walkCostFailure(v, f.cfg))
	}
	t.Logf("%s", v.Summary())
}

// walkCostFailure is the case's failure message.
func walkCostFailure(v walkVerdict, cfg walkCostConfig) string {
	return fmt.Sprintf("mode 1 is not clearly cheaper than mode 0 (want a ratio below %.2f) for a sender in a child netns with %d foreign subscribers: %v",
		walkCostThreshold, cfg.subscribers, v)
}
