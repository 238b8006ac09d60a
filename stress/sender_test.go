// SPDX-License-Identifier: GPL-2.0

package main

import (
	"testing"

	"golang.org/x/sys/unix"

	"nlmcast/stress/internal/verify"
)

// The transcript a cycle promises, and what tells its sender apart.
func TestCycleAndSource(t *testing.T) {
	s := &sender{idx: 1, pid: 77, nhid: 1}
	plan := s.cycle()
	if len(plan) != 4 {
		t.Fatalf("%d requests per cycle, want 4", len(plan))
	}
	var got []verify.Msg
	for i, p := range plan {
		got = append(got, p.expect(uint32(2)<<seqShift|uint32(i+1))...)
	}
	want := []verify.Msg{
		{Type: unix.RTM_NEWADDR, Seq: 2<<seqShift | 1, Pid: 77, Group: groupAddr, Detail: "10.2.0.1/32 dev 1"},
		{Type: unix.RTM_NEWROUTE, Group: groupRoute, Detail: "local 10.2.0.1/32 table 255"},
		{Type: unix.RTM_NEWROUTE, Seq: 2<<seqShift | 2, Pid: 77, Group: groupRoute, Detail: "blackhole 172.16.2.0/24 table 254 nhid 2"},
		{Type: unix.RTM_NEWSTATS, Group: groupStats, Detail: "ifindex 1"},
		{Type: unix.RTM_DELADDR, Seq: 2<<seqShift | 4, Pid: 77, Group: groupAddr, Detail: "10.2.0.1/32 dev 1"},
		{Type: unix.RTM_DELROUTE, Group: groupRoute, Detail: "local 10.2.0.1/32 table 255"},
	}
	if len(got) != len(want) {
		t.Fatalf("cycle promises %d messages, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("#%d: %s, want %s", i, got[i], want[i])
		}
	}
	for i, m := range want {
		sender, ok := sourceOf(m)
		if m.Type == unix.RTM_NEWSTATS {
			if ok {
				t.Errorf("#%d: RTM_NEWSTATS on lo attributed to sender %d; it carries no sender mark", i, sender)
			}
			continue
		}
		if !ok || sender != 1 {
			t.Errorf("#%d %s: sourceOf = %d, %v; want 1, true", i, m, sender, ok)
		}
	}
	// The next cycle switches the nexthop back and the statistics off.
	next := s.cycle()
	if m := next[1].expect(1)[0]; m.Detail != "blackhole 172.16.2.0/24 table 254 nhid 1" {
		t.Errorf("second replace: %s", m)
	}
}
