// SPDX-License-Identifier: GPL-2.0

package main

import (
	"net/netip"
	"strings"
	"testing"
)

// What ip monitor all-nsid printed in obs during a step, judged against
// the step's changes: lines as iproute2 6.1 prints them.
func TestJudgeObserved(t *testing.T) {
	lines := []string{
		"[nsid 1][ADDR]4: stub    inet 198.51.100.1/28 scope global stub",
		"       valid_lft forever preferred_lft forever",
		"[nsid 1][ROUTE]203.0.113.0/29 dev stub proto static scope link ",
		"[nsid 2][ROUTE]203.0.113.0/29 nhid 19 via 192.0.2.1 dev to-r1 proto bgp metric 20 ",
		"[nsid 2][ROUTE]Deleted 2001:db8:200::/64 nhid 20 via fe80::1 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 9][NEXTHOP]id 1001 blackhole ",
		"[nsid 3][LINK]4: stub@if9: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default ",
	}
	want := []event{
		{NSID: "1", Label: "ADDR", Key: addrKey(netip.MustParsePrefix("198.51.100.1/28"), 4)},
		{NSID: "3", Label: "LINK", Key: linkKeyPrefix("stub", true)},
		{NSID: "1", Label: "ROUTE", Key: "unicast 203.0.113.0/29 table main"},
		{NSID: "2", Label: "ROUTE", Key: "unicast 203.0.113.0/29 table main"},
		{NSID: "2", Label: "ROUTE", Deleted: true, Key: "unicast 2001:db8:200::/64 table main"},
	}
	if p := judgeObserved(lines, want); len(p) != 0 {
		t.Fatalf("a complete transcript: %v", p)
	}
	// The BGP route in r3 never printed, one in the wrong namespace, one
	// not printed twice although wanted twice.
	more := append(want, event{NSID: "3", Label: "ROUTE", Key: "unicast 203.0.113.0/29 table main"}, want[0])
	p := strings.Join(judgeObserved(lines, more), "\n")
	for _, w := range []string{"missing: [nsid 3][ROUTE]unicast 203.0.113.0/29 table main", "missing: [nsid 1][ADDR]198.51.100.1/28 dev 4"} {
		if !strings.Contains(p, w) {
			t.Errorf("problems lack %q:\n%s", w, p)
		}
	}
	// A link set up is not seen in a link set down, nor in another router.
	for _, w := range []event{{NSID: "3", Label: "LINK", Key: linkKeyPrefix("stub", false)}, {NSID: "2", Label: "LINK", Key: linkKeyPrefix("stub", true)}} {
		if p := judgeObserved(lines, []event{w}); len(p) != 1 {
			t.Errorf("want %s missing, got %q", w, p)
		}
	}
	// An event from the observer's own namespace, one from a namespace
	// it has no id for, and a line ip should never print.
	odd := append(lines, "[nsid current][LINK]3: x: <BROADCAST> mtu 1500 qdisc noop state DOWN", "[nsid 12][ROUTE]192.0.2.0/30 dev x", "garbage")
	p = strings.Join(judgeObserved(odd, want), "\n")
	for _, w := range []string{"[nsid current][LINK]x down state DOWN: from a namespace", "[nsid 12][ROUTE]unicast 192.0.2.0/30 table main: from a namespace", `unreadable line "garbage"`} {
		if !strings.Contains(p, w) {
			t.Errorf("problems lack %q:\n%s", w, p)
		}
	}
}
