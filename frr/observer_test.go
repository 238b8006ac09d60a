// SPDX-License-Identifier: GPL-2.0

package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// What ip monitor all-nsid printed in obs during a step (lines as
// iproute2 6.1 prints them), and what the step's changes make.
var (
	observedLines = []string{
		"[nsid 1][ADDR]4: stub    inet 198.51.100.1/28 scope global stub",
		"       valid_lft forever preferred_lft forever",
		"[nsid 1][ROUTE]local 198.51.100.1 dev stub table local proto kernel scope host src 198.51.100.1",
		"[nsid 1][ROUTE]2001:db8:100::/64 dev stub proto kernel metric 256 pref medium",
		"[nsid 1][ADDR]4: stub    inet6 2001:db8:100::1/64 scope global tentative",
		"       valid_lft forever preferred_lft forever",
		"[nsid 1][ROUTE]203.0.113.0/29 dev stub proto static scope link ",
		"[nsid 1][NEXTHOP]id 12 dev stub scope link proto zebra",
		"[nsid 1][ADDR]4: stub    inet6 2001:db8:100::1/64 scope global",
		"[nsid 2][ROUTE]203.0.113.0/29 nhid 19 via 192.0.2.1 dev to-r1 proto bgp metric 20 ",
		"[nsid 2][ROUTE]Deleted 2001:db8:200::/64 nhid 20 via fe80::1 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 9][LINK]4: to-r3@if3: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state LOWERLAYERDOWN group default",
		"[nsid 9][NEXTHOP]id 1001 blackhole proto static",
	}
	observedWant = stepEvents{
		Ordered: []event{
			{NSID: "1", Label: "ADDR", Key: addrKey(netip.MustParsePrefix("198.51.100.1/28"), 4)},
			{NSID: "1", Label: "ADDR", Key: addrKey(netip.MustParsePrefix("2001:db8:100::1/64"), 4) + " tentative"},
			{NSID: "1", Label: "ROUTE", Key: "unicast 203.0.113.0/29 table main"},
		},
		Required: []event{
			{NSID: "1", Label: "ROUTE", Key: "local 198.51.100.1 table local"},
			{NSID: "1", Label: "ROUTE", Key: "unicast 2001:db8:100::/64 table main"},
			{NSID: "1", Label: "ADDR", Key: addrKey(netip.MustParsePrefix("2001:db8:100::1/64"), 4)},
			{NSID: "2", Label: "ROUTE", Deleted: true, Key: "unicast 2001:db8:200::/64 table main"},
		},
		Early:  []event{{NSID: "2", Label: "ROUTE", Key: "unicast 203.0.113.0/29 table main"}, {NSID: "3", Label: "ROUTE", Key: "unicast 203.0.113.0/29 table main"}},
		Rules:  []allowance{zebraNexthops, h1Carrier},
		Marker: markerEvent(1001),
	}
)

func judgeText(lines []string, want stepEvents) string {
	p, _ := judgeObserved(lines, want)
	return strings.Join(p, "\n")
}

func TestJudgeObserved(t *testing.T) {
	p, early := judgeObserved(observedLines, observedWant)
	if len(p) != 0 {
		t.Fatalf("a complete transcript: %q", p)
	}
	if len(early) != 1 || early[0] != observedWant.Early[0] {
		t.Fatalf("early events that came: %v, want r2's route only", early)
	}
	// Wanted events not printed: an ordered one, a required one.
	more := observedWant
	more.Ordered = append(slices.Clone(more.Ordered), event{NSID: "3", Label: "ROUTE", Key: "unicast 203.0.113.32/29 table main"})
	more.Required = append(slices.Clone(more.Required), observedWant.Required[0])
	p2 := judgeText(observedLines, more)
	for _, w := range []string{"missing: [nsid 3][ROUTE]unicast 203.0.113.32/29 table main", "missing: [nsid 1][ROUTE]local 198.51.100.1 table local"} {
		if !strings.Contains(p2, w) {
			t.Errorf("problems lack %q:\n%s", w, p2)
		}
	}
	// The harness's requests printed in another order than it made them.
	swapped := observedWant
	swapped.Ordered = []event{observedWant.Ordered[2], observedWant.Ordered[0], observedWant.Ordered[1]}
	if p := judgeText(observedLines, swapped); !strings.Contains(p, "out of order: [nsid 1][ADDR]198.51.100.1/28 dev 4 printed before [nsid 1][ROUTE]unicast 203.0.113.0/29 table main, which the harness made first") {
		t.Errorf("the order is not judged: %s", p)
	}
	// A link set up is not seen in a link set down.
	down := observedWant
	down.Ordered = append(slices.Clone(down.Ordered), event{NSID: "3", Label: "LINK", Key: linkKeyPrefix("stub", false)})
	if p := judgeText(observedLines, down); !strings.Contains(p, "missing: [nsid 3][LINK]stub down") {
		t.Errorf("want the link down missing: %s", p)
	}
	// The marker not last: something after it.
	if p := judgeText(append(slices.Clone(observedLines), "[nsid 9][NEXTHOP]id 1002 blackhole"), observedWant); !strings.Contains(p, "the step's marker [nsid 9][NEXTHOP]id 1001 is not the last event") {
		t.Errorf("marker: %s", p)
	}
}

// A kernel that delivers every notification twice to the observer (a
// LISTEN_ALL_NSID subscriber): every event printed twice. The old judge
// (every wanted event present, the rest ignored) passed it.
func TestJudgeObservedDoubled(t *testing.T) {
	var doubled []string
	for _, l := range observedLines {
		if l[0] == ' ' {
			doubled = append(doubled, l) // a continuation line goes with its event
			continue
		}
		doubled = append(doubled, l, l)
	}
	doubled = doubled[:len(doubled)-1] // the marker ends the window at its first copy
	p, _ := judgeObserved(doubled, observedWant)
	t.Logf("the diagnosis:\n  %s", strings.Join(p, "\n  "))
	if len(p) != 10 {
		t.Errorf("%d problems, want one for each of the 10 events printed twice before the marker", len(p))
	}
	for _, w := range []string{
		"printed twice or more: [nsid 1][ADDR]198.51.100.1/28 dev 4 (the kernel sends each notification once: a doubled delivery)",
		"printed twice or more: [nsid 1][NEXTHOP]id 12 (",
		"printed twice or more: [nsid 9][LINK]to-r3 up state LOWERLAYERDOWN (",
		"printed twice or more: [nsid 2][ROUTE]unicast 203.0.113.0/29 table main (",
	} {
		if !strings.Contains(strings.Join(p, "\n"), w) {
			t.Errorf("problems lack %q", w)
		}
	}
	// One event doubled is enough.
	one := slices.Insert(slices.Clone(observedLines), 10, observedLines[9])
	if p := judgeText(one, observedWant); p != "printed twice or more: [nsid 2][ROUTE]unicast 203.0.113.0/29 table main (the kernel sends each notification once: a doubled delivery)" {
		t.Errorf("one doubled event: %q", p)
	}
}

// An event that nothing in the step explains fails, naming it and the
// rules it matched none of; so do events from a namespace the observer
// has no id for, from its own, and a line ip should never print.
func TestJudgeObservedUnexplained(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"[nsid 3][ROUTE]198.51.100.0/28 nhid 15 via 192.0.2.5 dev to-r2 proto bgp metric 20", "unexplained: [nsid 3][ROUTE]unicast 198.51.100.0/28 table main (neither the step's changes nor a nexthop object in a router"},
		{"[nsid 2][LINK]4: stub@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP", "unexplained: [nsid 2][LINK]stub up state UP ("},
		{"[nsid 9][ADDR]2: to-r1    inet6 fe80::1/64 scope link", "unexplained: [nsid 9][ADDR]fe80::1/64 dev 2 ("},
		{"[nsid 9][LINK]5: x: <BROADCAST,UP> mtu 1500 qdisc noop state UP", "unexplained: [nsid 9][LINK]x up state UP ("},
		{"[nsid current][LINK]3: x: <BROADCAST> mtu 1500 qdisc noop state DOWN", "[nsid current][LINK]x down state DOWN: from a namespace"},
		{"[nsid 12][ROUTE]192.0.2.0/30 dev x", "[nsid 12][ROUTE]unicast 192.0.2.0/30 table main: from a namespace"},
		{"garbage", `unreadable line "garbage"`},
	} {
		lines := slices.Insert(slices.Clone(observedLines), 3, c.line)
		p, _ := judgeObserved(lines, observedWant)
		if len(p) != 1 || !strings.Contains(p[0], c.want) {
			t.Errorf("%s: got %q, want one problem with %q", c.line, p, c.want)
		}
	}
}
