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
		},
		Zebra:  []event{{NSID: "2", Label: "ROUTE", Deleted: true, Key: "unicast 2001:db8:200::/64 table main"}},
		Early:  []event{{NSID: "2", Label: "ROUTE", Key: "unicast 203.0.113.0/29 table main"}, {NSID: "3", Label: "ROUTE", Key: "unicast 203.0.113.0/29 table main"}},
		Rules:  []allowance{zebraNexthops, h1Carrier, (&sequence{K: 0}).zebraRoutes()},
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
	p, _ := judgeObserved(doubleEvery(observedLines), observedWant)
	t.Logf("the diagnosis:\n  %s", strings.Join(p, "\n  "))
	// Zebra's nexthop id 12 is the one event a replace may repeat
	// identically (insert_nexthop() notifies every replace): of the 10
	// events before the marker, 9 are doubled deliveries.
	if len(p) != 9 || strings.Contains(strings.Join(p, "\n"), "id 12") {
		t.Errorf("%d problems, want one for each of the 9 events printed twice that no replace repeats", len(p))
	}
	for _, w := range []string{
		`printed twice in a row: [nsid 1][ADDR]198.51.100.1/28 dev 4 ("[nsid 1][ADDR]4: stub    inet 198.51.100.1/28 scope global stub\n       valid_lft forever preferred_lft forever", and nothing else for that object between the two copies: a doubled delivery)`,
		"printed twice in a row: [nsid 1][ADDR]2001:db8:100::1/64 dev 4 tentative (",
		"printed twice in a row: [nsid 9][LINK]to-r3 up state LOWERLAYERDOWN (",
		"printed twice in a row: [nsid 2][ROUTE]unicast 203.0.113.0/29 table main (",
		"printed twice in a row: [nsid 2][ROUTE]Deleted unicast 2001:db8:200::/64 table main (",
	} {
		if !strings.Contains(strings.Join(p, "\n"), w) {
			t.Errorf("problems lack %q", w)
		}
	}
	// One event doubled is enough: an IPv4 BGP route (an identical
	// IPv4 replace notifies nothing).
	one := slices.Insert(slices.Clone(observedLines), 10, observedLines[9])
	if p := judgeText(one, observedWant); p != `printed twice in a row: [nsid 2][ROUTE]unicast 203.0.113.0/29 table main ("[nsid 2][ROUTE]203.0.113.0/29 nhid 19 via 192.0.2.1 dev to-r1 proto bgp metric 20 ", and nothing else for that object between the two copies: a doubled delivery)` {
		t.Errorf("one doubled event: %q", p)
	}
	// The same route printed again after a nexthop object of its router
	// was (zebra replaced it: the kernel notifies every route using it
	// again) is legitimate.
	renotified := slices.Insert(slices.Clone(observedLines), 10, "[nsid 2][NEXTHOP]id 19 via 192.0.2.1 dev to-r1 scope link proto zebra", observedLines[9])
	if p := judgeText(renotified, observedWant); p != "" {
		t.Errorf("a route notified again after its nexthop's replace: %q", p)
	}
	// A copy of the previous step's marker (a doubling kernel's) heads
	// a window even where every other event is one a zebra's replace
	// may repeat: such a kernel fails every step.
	zebraOnly := []string{
		"[nsid 9][NEXTHOP]id 1000 blackhole proto static",
		"[nsid 2][NEXTHOP]id 21 via fe80::28b9:7cff:fe10:1418 dev to-r1 scope link proto zebra",
		"[nsid 2][NEXTHOP]id 21 via fe80::28b9:7cff:fe10:1418 dev to-r1 scope link proto zebra",
		"[nsid 2][ROUTE]2001:db8:100::/64 nhid 21 via fe80::28b9:7cff:fe10:1418 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 2][ROUTE]2001:db8:100::/64 nhid 21 via fe80::28b9:7cff:fe10:1418 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 9][NEXTHOP]id 1001 blackhole proto static",
	}
	ping := stepEvents{Rules: observedWant.Rules, Marker: markerEvent(1001)}
	if p := judgeText(zebraOnly, ping); p != "unexplained: [nsid 9][NEXTHOP]id 1000 (neither the step's changes nor "+describeRules(ping.Rules)+")" {
		t.Errorf("a doubling kernel's window of zebra's events: %q", p)
	}
	if p := judgeText(zebraOnly[1:], ping); p != "" {
		t.Errorf("zebra's replaces alone: %q", p)
	}
}

// An event that nothing in the step explains fails, naming it and the
// rules it matched none of; so do events from a namespace the observer
// has no id for, from its own, and a line ip should never print.
func TestJudgeObservedUnexplained(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"[nsid 3][ROUTE]198.51.100.0/28 nhid 15 via 192.0.2.5 dev to-r2 proto static metric 20", "unexplained: [nsid 3][ROUTE]unicast 198.51.100.0/28 table main (neither the step's changes nor a nexthop object in a router"},
		// BGP routes: to a prefix no router announces, to the router's
		// own prefix, in h1, of another type.
		{"[nsid 3][ROUTE]198.51.100.128/28 nhid 15 via 192.0.2.5 dev to-r2 proto bgp metric 20", "unexplained: [nsid 3][ROUTE]unicast 198.51.100.128/28 table main ("},
		{"[nsid 1][ROUTE]198.51.100.0/28 nhid 15 via 192.0.2.2 dev to-r2 proto bgp metric 20", "unexplained: [nsid 1][ROUTE]unicast 198.51.100.0/28 table main ("},
		{"[nsid 9][ROUTE]Deleted 198.51.100.0/28 nhid 15 via 192.0.2.2 dev to-r2 proto bgp metric 20", "unexplained: [nsid 9][ROUTE]Deleted unicast 198.51.100.0/28 table main ("},
		{"[nsid 2][ROUTE]blackhole 198.51.100.0/28 proto bgp metric 20", "unexplained: [nsid 2][ROUTE]blackhole 198.51.100.0/28 table main ("},
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

// mode1.reinstall's window as the observer printed it on the patched 6.1
// under virtme-ng (out.2.log; its first and last lines verbatim, the
// middle cut to the routes it named, in the same format): as the BGP
// sessions came back one by one, the zebras installed their IPv6 routes,
// deleted them and installed them again, the third notification
// identical to the first. Three events, each legitimate: the old judge
// failed the step with 52 problems ("printed twice or more",
// "unexplained: ... Deleted").
var (
	reinstallHead = []string{
		"[nsid 1][LINK]4: stub@if3: <NO-CARRIER,BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state LOWERLAYERDOWN group default",
		"    link/ether 66:11:c4:49:aa:4f brd ff:ff:ff:ff:ff:ff link-netnsid 1",
		"[nsid 1][ROUTE]192.0.2.8/30 dev stub proto kernel scope link src 192.0.2.9",
		"[nsid 1][ROUTE]broadcast 192.0.2.11 dev stub table local proto kernel scope link src 192.0.2.9",
		"[nsid 2][LINK]5: stub@if4: <NO-CARRIER,BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state LOWERLAYERDOWN group default",
		"    link/ether f6:41:b7:06:61:45 brd ff:ff:ff:ff:ff:ff link-netnsid 2",
		"[nsid 2][ROUTE]192.0.2.12/30 dev stub proto kernel scope link src 192.0.2.13",
		"[nsid 2][ROUTE]broadcast 192.0.2.15 dev stub table local proto kernel scope link src 192.0.2.13",
		"[nsid 3][LINK]4: stub@if5: <NO-CARRIER,BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state LOWERLAYERDOWN group default",
		"    link/ether 3e:bf:83:6a:53:25 brd ff:ff:ff:ff:ff:ff link-netnsid 1",
		"[nsid 3][ROUTE]192.0.2.16/30 dev stub proto kernel scope link src 192.0.2.17",
		"[nsid 3][ROUTE]broadcast 192.0.2.19 dev stub table local proto kernel scope link src 192.0.2.17",
		"[nsid 1][ROUTE]multicast ff00::/8 dev stub table local proto kernel metric 256 pref medium",
		"[nsid 1][ROUTE]fe80::/64 dev stub proto kernel metric 256 pref medium",
		"[nsid 1][LINK]4: stub@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default",
		"    link/ether 66:11:c4:49:aa:4f brd ff:ff:ff:ff:ff:ff link-netnsid 1",
	}
	// The routes the zebras installed again, as printed last.
	reinstallTail = []string{
		"[nsid 1][ROUTE]2001:db8:200:11::/64 nhid 16 via fe80::e08c:c3ff:feed:d6e8 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 1][ROUTE]2001:db8:100:11::/64 nhid 16 via fe80::e08c:c3ff:feed:d6e8 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 1][ROUTE]2001:db8:100:12::/64 nhid 16 via fe80::e08c:c3ff:feed:d6e8 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 1][ROUTE]2001:db8:ff::3 nhid 16 via fe80::e08c:c3ff:feed:d6e8 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 1][ROUTE]2001:db8:ff::2 nhid 16 via fe80::e08c:c3ff:feed:d6e8 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 1][ROUTE]2001:db8:23::/64 nhid 16 via fe80::e08c:c3ff:feed:d6e8 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 2][ROUTE]2001:db8:201:10::/64 nhid 21 via fe80::28b9:7cff:fe10:1418 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 2][ROUTE]2001:db8:200:10::/64 nhid 21 via fe80::28b9:7cff:fe10:1418 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 2][ROUTE]2001:db8:100:10::/64 nhid 21 via fe80::28b9:7cff:fe10:1418 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 2][ROUTE]2001:db8:ff::1 nhid 21 via fe80::28b9:7cff:fe10:1418 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 3][ROUTE]2001:db8:201:10::/64 nhid 16 via fe80::681d:90ff:fe7d:ce96 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 3][ROUTE]2001:db8:200:10::/64 nhid 16 via fe80::681d:90ff:fe7d:ce96 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 3][ROUTE]2001:db8:100:10::/64 nhid 16 via fe80::681d:90ff:fe7d:ce96 dev to-r1 proto bgp metric 20 pref medium",
		"[nsid 3][ROUTE]2001:db8:ff::1 nhid 16 via fe80::681d:90ff:fe7d:ce96 dev to-r1 proto bgp metric 20 pref medium",
	}
	reinstallMarker = "[nsid 9][NEXTHOP]id 1012 blackhole proto static"
)

// reinstallWindow is the window: the head, each tail route installed,
// deleted, and installed again (but reinstalled), and the marker.
func reinstallWindow(reinstalled func(line string) bool) []string {
	w := slices.Clone(reinstallHead)
	w = append(w, reinstallTail...)
	for _, l := range reinstallTail {
		nsid, rest, _ := strings.Cut(l, "[ROUTE]")
		w = append(w, nsid+"[ROUTE]Deleted "+rest)
	}
	for _, l := range reinstallTail {
		if reinstalled(l) {
			w = append(w, l)
		}
	}
	return append(w, reinstallMarker)
}

func every(string) bool { return true }

// doubleEvery is lines as a kernel that delivers everything twice makes
// ip print them, up to the marker's first copy.
func doubleEvery(lines []string) []string {
	var out, ev []string
	for i, l := range lines {
		ev = append(ev, l) // an event and its continuation lines
		if i+1 == len(lines) || lines[i+1][0] != ' ' {
			out = append(append(out, ev...), ev...)
			ev = nil
		}
	}
	return out[:len(out)-1]
}

// reinstallWant is what reinstall wants of that window (the part of it
// the lines above show), mode1's sequence (K 1).
func reinstallWant() stepEvents {
	s := &sequence{K: 1}
	want := stepEvents{Rules: []allowance{zebraNexthops, stubLinkWatch, h1Carrier, s.zebraRoutes()}, Marker: markerEvent(1012)}
	for i := range routerCount {
		want.Ordered = append(want.Ordered, event{NSID: routerNSID(i), Label: "LINK", Key: linkKeyPrefix(stubLink, true)})
		want.Required = append(want.Required, routeEvent(i, stubBase(i).Masked(), false),
			kernelRoute(i, "broadcast", lastAddr(stubBase(i)), "local", false))
	}
	want.Required = append(want.Required, event{NSID: "1", Label: "ROUTE", Key: "multicast ff00::/8 table local"},
		routeEvent(0, netip.MustParsePrefix("fe80::/64"), false))
	for _, p := range []string{"2001:db8:200:11::/64", "2001:db8:100:11::/64", "2001:db8:100:12::/64"} {
		want.Zebra = append(want.Zebra, routeEvent(0, netip.MustParsePrefix(p), false))
	}
	for _, i := range []int{1, 2} {
		for _, p := range []string{"2001:db8:201:10::/64", "2001:db8:200:10::/64", "2001:db8:100:10::/64"} {
			want.Zebra = append(want.Zebra, routeEvent(i, netip.MustParsePrefix(p), false))
		}
	}
	return want
}

func TestJudgeObservedReinstall(t *testing.T) {
	if p := judgeText(reinstallWindow(every), reinstallWant()); p != "" {
		t.Fatalf("zebra's routes added, deleted and added again:\n%s", p)
	}
	// The last installation of one route lost: the observer's last
	// word on it is the deletion.
	lost := reinstallWindow(func(l string) bool { return l != reinstallTail[1] })
	if p := judgeText(lost, reinstallWant()); p != "missing: [nsid 1][ROUTE]unicast 2001:db8:100:11::/64 table main (the last event for it is [nsid 1][ROUTE]Deleted unicast 2001:db8:100:11::/64 table main)" {
		t.Errorf("the re-installation lost: %q", p)
	}
	// One deletion delivered twice.
	del := reinstallWindow(every)
	i := len(reinstallHead) + len(reinstallTail) + 4
	del = slices.Insert(del, i+1, del[i])
	if p := judgeText(del, reinstallWant()); !strings.HasPrefix(p, "printed twice in a row: [nsid 1][ROUTE]Deleted unicast 2001:db8:ff::2 table main (") || strings.Contains(p, "\n") {
		t.Errorf("a deletion doubled: %q", p)
	}
	// Every event delivered twice.
	p := judgeText(doubleEvery(reinstallWindow(every)), reinstallWant())
	for _, w := range []string{"printed twice in a row: [nsid 1][LINK]stub up state LOWERLAYERDOWN (", "printed twice in a row: [nsid 3][ROUTE]broadcast 192.0.2.19 table local (",
		"printed twice in a row: [nsid 2][ROUTE]Deleted unicast 2001:db8:ff::1 table main ("} {
		if !strings.Contains(p, w) {
			t.Errorf("every event doubled: the problems lack %q:\n%s", w, p)
		}
	}
}
