// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// What iproute2 6.1's `ip monitor all-nsid label link address route
// nexthop` printed on Debian 12 for an address, a nexthop and a veth
// pair made in a namespace with id 7, and an address in its own.
const allNSIDOutput = `[nsid 7][ADDR]1: lo    inet 198.51.100.1/32 scope global lo
       valid_lft forever preferred_lft forever
[nsid 7][ROUTE]local 198.51.100.1 dev lo table local proto kernel scope host src 198.51.100.1 
[nsid 7][NEXTHOP]id 5 blackhole 
[nsid 7][NEXTHOP]Deleted id 5 blackhole 
[nsid 7][LINK]3: va@vb: <BROADCAST,MULTICAST,M-DOWN> mtu 1500 qdisc noop state DOWN group default 
    link/ether f2:82:c7:37:25:7a brd ff:ff:ff:ff:ff:ff
[nsid 7][ROUTE]203.0.113.0/24 dev lo scope link 
[nsid current][ADDR]1: lo    inet 198.51.100.7/32 scope global lo
       valid_lft forever preferred_lft forever`

func TestParseIPMonitor(t *testing.T) {
	got, bad := parseIPMonitor(strings.Split(allNSIDOutput, "\n"))
	if len(bad) > 0 {
		t.Fatalf("unreadable: %v", bad)
	}
	want := []event{
		{"7", "ADDR", false, "198.51.100.1/32"},
		{"7", "ROUTE", false, "local 198.51.100.1 table local"},
		{"7", "NEXTHOP", false, "id 5"},
		{"7", "NEXTHOP", true, "id 5"},
		{"7", "LINK", false, "va"},
		{"7", "ROUTE", false, "unicast 203.0.113.0/24 table main"},
		{"current", "ADDR", false, "198.51.100.7/32"},
	}
	if d := compareEvents(want, got); d != "" {
		t.Fatalf("parsed differently:\n%s", d)
	}
}

func TestParseIPMonitorRefusesUnknownLines(t *testing.T) {
	_, bad := parseIPMonitor([]string{"[NETCONF]inet lo forwarding off", "no label at all"})
	if len(bad) != 2 {
		t.Fatalf("want both lines refused, got %v", bad)
	}
}

func TestLineEvent(t *testing.T) {
	id := int32(7)
	for _, c := range []struct {
		line selftests.Line
		all  bool
		want string
	}{
		{selftests.Line{Type: unix.RTM_NEWADDR, Detail: "198.51.100.1/32 dev 1"}, false, "[ADDR]198.51.100.1/32"},
		{selftests.Line{Type: unix.RTM_NEWROUTE, Detail: "local 198.51.100.1/32 table 255", NSID: &id}, true, "[nsid 7][ROUTE]local 198.51.100.1 table local"},
		{selftests.Line{Type: unix.RTM_DELADDR, Detail: "198.51.100.1/32 dev 1"}, true, "[nsid current][ADDR]Deleted 198.51.100.1/32"},
		{selftests.Line{Type: unix.RTM_NEWNEXTHOP, Detail: "id 999"}, false, "[NEXTHOP]id 999"},
		{selftests.Line{Type: unix.RTM_NEWLINK, Detail: "mon0"}, false, "[LINK]mon0"},
	} {
		e, err := lineEvent(c.line, c.all)
		if err != nil || e.String() != c.want {
			t.Errorf("%v: got %q, %v; want %q", c.line, e, err, c.want)
		}
	}
}

// A flipped expectation must fail, and say where: here the harness
// socket's events with the nsid flipped to 8, and with one event lost.
func TestCompareEventsFlippedExpectation(t *testing.T) {
	got, _ := parseIPMonitor(strings.Split(allNSIDOutput, "\n"))
	flipped := append([]event(nil), got...)
	flipped[2].NSID = "8"
	d := compareEvents(flipped, got)
	t.Logf("the diagnosis:\n%s", d)
	if !strings.Contains(d, "! [nsid 8][NEXTHOP]id 5") || !strings.Contains(d, "| [nsid 7][NEXTHOP]id 5") {
		t.Fatalf("the flipped nsid is not shown side by side:\n%s", d)
	}
	d = compareEvents(got[:len(got)-1], got)
	if !strings.Contains(d, "! -") {
		t.Fatalf("the extra event is not shown against '-':\n%s", d)
	}
	if compareEvents(got, got) != "" {
		t.Fatal("equal events reported as different")
	}
}
