// SPDX-License-Identifier: GPL-2.0

package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The fault tier's kernel is the only one with fault injection: the
// stress program's fail-nth cases (notification_alloc_failure_enobufs at
// 0 and 1, which kill do_one_set_err+21:del-call:1, and the others of
// the FaultInjection table) run there, before the
// fault modes; the stress program's arguments go to it alone, and the
// boot marks skbuff_head_cache for failslab (the fault modes SKIP without
// it on 6.1). The stress tier runs the stress program only.
func TestFaultTierRunsTheFailNthCasesFirst(t *testing.T) {
	tl := toolsIn("/b")
	o := runOptions{tiers: []string{"stress", "fault"}, faultBuild: "/fault", stressArgs: "-duration 10s",
		progTimeout: time.Minute, silence: time.Minute}
	plans := tierPlans(o, tl)
	if len(plans) != 2 {
		t.Fatalf("%d plans, want 2", len(plans))
	}
	stress, fault := plans[0].plan, plans[1].plan
	if want := []string{tl.stress}; !slices.Equal(stress.progs, want) {
		t.Errorf("stress tier: programs %q, want %q", stress.progs, want)
	}
	if want := []string{tl.stress}; !slices.Equal(fault.progs, want) {
		t.Errorf("fault tier: programs %q, want %q", fault.progs, want)
	}
	for name, p := range map[string]bootPlan{"stress": stress, "fault": fault} {
		if slices.Contains(p.args, "-args") {
			t.Errorf("%s tier: vmtest %q gives every program the stress arguments", name, p.args)
		}
		i := slices.Index(p.args, "-prog-args")
		if i < 0 || i+1 >= len(p.args) || !strings.HasPrefix(p.args[i+1], "netlink_mcast_stress=-duration 10s -t ") {
			t.Errorf("%s tier: vmtest %q: want -prog-args netlink_mcast_stress=-duration 10s -t ...", name, p.args)
		}
	}
	if i := slices.Index(fault.args, "-prog-args"); i >= 0 && fault.args[i+1] != "netlink_mcast_stress=-duration 10s -t failnth0.notification_alloc_failure_enobufs -t failnth0.tc_clone_failure_broadcast_error -t failnth0.broadcast_copies_may_sleep -t failnth0.nsid_request_alloc_failure_enomem -t failnth0.stats_notification_alloc_failure_enobufs -t failnth0.membership_alloc_failure_enomem -t failnth0.nsid_notification_alloc_failure_enomem -t failnth1.notification_alloc_failure_enobufs -t failnth1.tc_clone_failure_broadcast_error -t failnth1.broadcast_copies_may_sleep -t failnth1.nsid_request_alloc_failure_enomem -t failnth1.stats_notification_alloc_failure_enobufs -t failnth1.membership_alloc_failure_enomem -t failnth1.nsid_notification_alloc_failure_enomem -t faults0 -t faults1 -t faultswitch" {
		t.Errorf("fault tier: %q", fault.args[i+1])
	}
	// Without the mark the fault modes SKIP on 6.1 (stress/faults.go).
	if i := slices.Index(fault.args, "-append"); i < 0 || fault.args[i+1] != "oops=panic no_timer_check slub_debug=A,skbuff_head_cache" {
		t.Errorf("fault tier: vmtest %q: want -append with slub_debug=A,skbuff_head_cache", fault.args)
	}
	if i := slices.Index(stress.args, "-append"); i < 0 || stress.args[i+1] != "oops=panic no_timer_check" {
		t.Errorf("stress tier: vmtest %q: want -append oops=panic no_timer_check", stress.args)
	}
}

// The pattern tier boots the base tier's programs, with the base tier's
// limits, on its own build (INIT_STACK_ALL_PATTERN), rebuilt per mutant;
// without -pattern-build it is not run.
func TestPatternTierIsTheBaseBootOnItsOwnBuild(t *testing.T) {
	tl := toolsIn("/b")
	o := runOptions{tiers: []string{"base", "pattern"}, patternBuild: "/pattern", progTimeout: time.Minute, silence: time.Minute}
	o.tree.build = "/base"
	plans := tierPlans(o, tl)
	base, pattern := plans[0], plans[1]
	if pattern.tree.build != "/pattern" || !pattern.rebuild || pattern.skip != "" {
		t.Errorf("pattern tier: build %q, rebuild %v, skip %q; want /pattern, rebuilt", pattern.tree.build, pattern.rebuild, pattern.skip)
	}
	if !slices.Equal(pattern.plan.progs, base.plan.progs) || !slices.Equal(pattern.plan.args, base.plan.args) || pattern.plan.limit != base.plan.limit {
		t.Errorf("pattern tier boots %q %q (limit %v); want the base tier's %q %q (limit %v)",
			pattern.plan.progs, pattern.plan.args, pattern.plan.limit, base.plan.progs, base.plan.args, base.plan.limit)
	}
	o.patternBuild = ""
	if p := tierPlans(o, tl)[1]; p.skip != "no -pattern-build" {
		t.Errorf("without -pattern-build: skip %q", p.skip)
	}
}
