// SPDX-License-Identifier: GPL-2.0

package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/jsimonetti/rtnetlink/v2"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/rtnl"
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

// What the same ip (in the namespace, without all-nsid) printed on 6.18
// for the series of the ip monitor cases made with ip commands: the link
// watch had run before mon0 was set up (ip's RTM_GETLINK for the name
// runs it: rtnl_getlink() calls linkwatch_sync_dev() since 6.8).
const seriesOutput = `[ADDR]1: lo    inet 198.51.100.1/32 scope global lo
       valid_lft forever preferred_lft forever
[ROUTE]local 198.51.100.1 dev lo table local proto kernel scope host src 198.51.100.1 
[ROUTE]203.0.113.0/24 dev lo scope link 
[NEXTHOP]id 5 blackhole 
[LINK]2: mon1@NONE: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN group default 
    link/ether 26:a6:30:8b:de:a8 brd ff:ff:ff:ff:ff:ff
[LINK]3: mon0@mon1: <BROADCAST,MULTICAST,M-DOWN> mtu 1500 qdisc noop state DOWN group default 
    link/ether 7e:1a:a5:1b:ca:39 brd ff:ff:ff:ff:ff:ff
[LINK]3: mon0@mon1: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> mtu 1500 qdisc noqueue state LOWERLAYERDOWN group default 
    link/ether 7e:1a:a5:1b:ca:39 brd ff:ff:ff:ff:ff:ff
[ADDR]Deleted 1: lo    inet 198.51.100.1/32 scope global lo
       valid_lft forever preferred_lft forever
[ROUTE]Deleted local 198.51.100.1 dev lo table local proto kernel scope host src 198.51.100.1 
[NEXTHOP]id 999 blackhole `

func TestParseIPMonitor(t *testing.T) {
	got, bad := parseIPMonitor(strings.Split(allNSIDOutput, "\n"))
	if len(bad) > 0 {
		t.Fatalf("unreadable: %v", bad)
	}
	want := []event{
		{NSID: "7", Label: "ADDR", Key: "198.51.100.1/32 dev 1"},
		{NSID: "7", Label: "ROUTE", Key: "local 198.51.100.1 table local"},
		{NSID: "7", Label: "NEXTHOP", Key: "id 5"},
		{NSID: "7", Label: "NEXTHOP", Deleted: true, Key: "id 5"},
		{NSID: "7", Label: "LINK", Key: "va down state DOWN"},
		{NSID: "7", Label: "ROUTE", Key: "unicast 203.0.113.0/24 table main"},
		{NSID: "current", Label: "ADDR", Key: "198.51.100.7/32 dev 1"},
	}
	if d := compareEvents(want, got); d != "" {
		t.Fatalf("parsed differently:\n%s", d)
	}
}

func TestParseIPMonitorRefusesUnknownLines(t *testing.T) {
	_, bad := parseIPMonitor([]string{"[NETCONF]inet lo forwarding off", "no label at all", "[LINK]3: mon0: mtu 1500"})
	if len(bad) != 3 {
		t.Fatalf("want all three lines refused, got %v", bad)
	}
}

// ip's real output for the series is what the series' changes state.
func TestSeriesExpectationMatchesIPOutput(t *testing.T) {
	got, bad := parseIPMonitor(strings.Split(seriesOutput, "\n"))
	if len(bad) > 0 {
		t.Fatalf("unreadable: %v", bad)
	}
	if f := judge(changeSeries(999), []monObserver{{name: "ip monitor", got: got}}); len(f) > 0 {
		t.Fatalf("%s", f[0])
	}
}

func TestMessageEvent(t *testing.T) {
	link := func(typ uint16, name string, flags uint32, state rtnetlink.OperationalState) netlink.Message {
		b, err := (&rtnetlink.LinkMessage{Family: unix.AF_UNSPEC, Index: 3, Flags: flags,
			Attributes: &rtnetlink.LinkAttributes{Name: name, OperationalState: state}}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(typ)}, Data: b}
	}
	addr := rtnl.NewAddr(1, netip.MustParsePrefix("198.51.100.1/32")).Msg
	deladdr := rtnl.DelAddr(1, netip.MustParsePrefix("198.51.100.1/32")).Msg
	nh := rtnl.NewNexthop(rtnl.Nexthop{ID: 999, Blackhole: true}).Msg
	id := int32(7)
	for _, c := range []struct {
		m    netlink.Message
		from uint32
		nsid *int32
		all  bool
		want string
	}{
		{addr, 0, nil, false, "[ADDR]198.51.100.1/32 dev 1"},
		{deladdr, 0, nil, true, "[nsid current][ADDR]Deleted 198.51.100.1/32 dev 1"},
		{nh, 0, &id, true, "[nsid 7][NEXTHOP]id 999"},
		{nh, 4242, nil, false, "[NEXTHOP]id 999 (sent by portid 4242, not the kernel)"},
		{link(unix.RTM_NEWLINK, "mon0", unix.IFF_UP|unix.IFF_BROADCAST, rtnetlink.OperStateLowerLayerDown), 0, nil, false, "[LINK]mon0 up state LOWERLAYERDOWN"},
		{link(unix.RTM_NEWLINK, "mon0", unix.IFF_UP|unix.IFF_RUNNING, rtnetlink.OperStateUnknown), 0, nil, false, "[LINK]mon0 up state UNKNOWN"},
		{link(unix.RTM_DELLINK, "mon1", unix.IFF_BROADCAST, rtnetlink.OperStateDown), 0, &id, true, "[nsid 7][LINK]Deleted mon1 down state DOWN"},
	} {
		e, err := messageEvent(c.m, c.from, c.nsid, c.all)
		if err != nil || e.String() != c.want {
			t.Errorf("%v: got %q, %v; want %q", c.m.Header, e, err, c.want)
		}
	}
}

// seriesEvents is the series as an observer with nsid sees it, the set-up
// of mon0 by its alternative setUp (0: the link watch ran before it, 1:
// after it).
func seriesEvents(nsid string, setUp int) []event {
	var out []event
	for _, c := range changeSeries(999) {
		alt := c.notifies[0]
		if len(c.notifies) > 1 {
			alt = c.notifies[setUp]
		}
		for _, e := range alt {
			out = append(out, withNSID(e, nsid))
		}
	}
	return out
}

// The four observers of a run in which every one received what the series
// states; the two in O with S's id.
func fourObservers(setUp int) []monObserver {
	return []monObserver{
		{name: "socket local", got: seriesEvents("", setUp)},
		{name: "socket foreign", nsid: "7", got: seriesEvents("7", setUp)},
		{name: "ip monitor", got: seriesEvents("", setUp)},
		{name: "ip monitor all-nsid", nsid: "7", got: seriesEvents("7", setUp)},
	}
}

func insertAt(es []event, i int, e event) []event {
	return slices.Insert(slices.Clone(es), i, e)
}

// A notification delivered twice to every socket: the old rule (each
// monitor against its harness socket, the socket in O against the one in
// S) is blind to it, the expectation from the series fails all four.
func TestJudgeDuplicateInEveryObserver(t *testing.T) {
	obs := fourObservers(0)
	for i := range obs {
		e := event{NSID: obs[i].nsid, Label: "NEXTHOP", Key: "id 5"}
		obs[i].got = insertAt(obs[i].got, 4, e)
	}
	stripNSID := func(es []event) []event {
		out := slices.Clone(es)
		for i := range out {
			out[i].NSID = ""
		}
		return out
	}
	if compareEvents(obs[0].got, obs[2].got) != "" || compareEvents(obs[1].got, obs[3].got) != "" ||
		compareEvents(obs[0].got, stripNSID(obs[1].got)) != "" {
		t.Fatal("the old rule was expected to pass the duplicate (that is the flaw this test shows)")
	}
	fails := judge(changeSeries(999), obs)
	if len(fails) != 4 {
		t.Fatalf("%d failures, want one for each of the 4 observers: %q", len(fails), fails)
	}
	t.Logf("the diagnosis:\n%s", fails[3])
	if !strings.Contains(fails[3], "! [nsid 7][LINK]mon1 down state DOWN") || !strings.Contains(fails[3], "| [nsid 7][NEXTHOP]id 5") {
		t.Fatalf("the duplicate is not shown against the expectation:\n%s", fails[3])
	}
}

// Each observer is judged on its own: a fault in one fails that one only.
func TestJudgeEachObserverOnItsOwn(t *testing.T) {
	obs := fourObservers(1)
	obs[2].got = obs[2].got[:len(obs[2].got)-1] // ip monitor lost the sentinel
	obs[1].got[3].From = 4242                   // the nexthop came from a user socket
	fails := judge(changeSeries(999), obs)
	if len(fails) != 2 || !strings.HasPrefix(fails[0], "socket foreign:") || !strings.HasPrefix(fails[1], "ip monitor:") {
		t.Fatalf("want failures of socket foreign and ip monitor only, got %q", fails)
	}
}

// The link watch's RTM_NEWLINK for mon0: exactly once and right after the
// set-up's when that reported UNKNOWN, never when it reported
// LOWERLAYERDOWN, never elsewhere.
func TestJudgeLinkWatchEvent(t *testing.T) {
	late := linkEvent("mon0", true, "LOWERLAYERDOWN")
	before, after := seriesEvents("", 0), seriesEvents("", 1)
	setUp := slices.Index(after, linkEvent("mon0", true, "UNKNOWN"))
	for _, c := range []struct {
		name string
		got  []event
		ok   bool
	}{
		{"the link watch ran before the set-up", before, true},
		{"the link watch ran after the set-up", after, true},
		{"its event twice", insertAt(after, setUp+1, late), false},
		{"its event without the set-up's UNKNOWN first", insertAt(before, setUp+1, late), false},
		{"its event missing", slices.Delete(slices.Clone(after), setUp+1, setUp+2), false},
		{"its event after the sentinel", append(slices.Delete(slices.Clone(after), setUp+1, setUp+2), late), false},
		{"its event after the address was deleted", insertAt(slices.Delete(slices.Clone(after), setUp+1, setUp+2), setUp+3, late), false},
		{"its event for mon1", slices.Replace(slices.Clone(after), setUp+1, setUp+2, linkEvent("mon1", true, "LOWERLAYERDOWN")), false},
		{"its event with operstate DOWN", slices.Replace(slices.Clone(after), setUp+1, setUp+2, linkEvent("mon0", true, "DOWN")), false},
	} {
		fails := judge(changeSeries(999), []monObserver{{name: "ip monitor", got: c.got}})
		if (len(fails) == 0) != c.ok {
			t.Errorf("%s: passed %v, want %v: %q", c.name, len(fails) == 0, c.ok, fails)
		}
	}
}

// compareEvents renders both sides and marks the rows that differ.
func TestCompareEvents(t *testing.T) {
	got, _ := parseIPMonitor(strings.Split(allNSIDOutput, "\n"))
	flipped := slices.Clone(got)
	flipped[2].NSID = "8"
	d := compareEvents(flipped, got)
	if !strings.Contains(d, "! [nsid 8][NEXTHOP]id 5") || !strings.Contains(d, "| [nsid 7][NEXTHOP]id 5") {
		t.Fatalf("the flipped nsid is not shown side by side:\n%s", d)
	}
	if d := compareEvents(got[:len(got)-1], got); !strings.Contains(d, "! -") {
		t.Fatalf("the extra event is not shown against '-':\n%s", d)
	}
	if compareEvents(got, got) != "" {
		t.Fatal("equal events reported as different")
	}
}

// An observer that lost the set-up's RTM_NEWLINK (UNKNOWN) has, on its
// own, what the other alternative states: the kernel chose once for all,
// so it fails, named, against the alternative the others received. (The
// old rule let each observer pick its own alternative and passed this.)
func TestJudgeObserversTakeOneAlternative(t *testing.T) {
	for _, lost := range []int{0, 3} {
		obs := fourObservers(1)
		setUp := slices.Index(obs[lost].got, withNSID(linkEvent("mon0", true, "UNKNOWN"), obs[lost].nsid))
		obs[lost].got = slices.Delete(obs[lost].got, setUp, setUp+1)
		fails := judge(changeSeries(999), obs)
		t.Logf("the diagnosis:\n%s", strings.Join(fails, "\n"))
		if len(fails) != 2 {
			t.Fatalf("observer %s lost the set-up's event: %d failures, want the disagreement and its comparison: %q", obs[lost].name, len(fails), fails)
		}
		want := `"set mon0 up": the kernel sends one of its alternatives to every observer, but they differ: 3 of 4 received alternative 2 (`
		if !strings.HasPrefix(fails[0], want) || !strings.Contains(fails[0], obs[lost].name+" received alternative 1 (") {
			t.Errorf("the disagreement is not named: %q", fails[0])
		}
		if !strings.HasPrefix(fails[1], obs[lost].name+": ") {
			t.Errorf("the observer's comparison is not shown: %q", fails[1])
		}
	}
	// Every observer with the one-event alternative: the kernel's choice.
	if fails := judge(changeSeries(999), fourObservers(0)); len(fails) != 0 {
		t.Fatalf("%q", fails)
	}
}
