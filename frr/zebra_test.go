// SPDX-License-Identifier: GPL-2.0

package main

import (
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCompareRIB(t *testing.T) {
	p := netip.MustParsePrefix("203.0.113.0/26")
	k := kstate{Routes: []kroute{{Dst: netip.MustParsePrefix("192.0.2.0/30"), Type: unix.RTN_UNICAST, Protocol: unix.RTPROT_KERNEL, OIF: 2}}}
	z := zview{Routes: map[netip.Prefix][]zroute{}}
	zebra := func(js string) {
		if err := parseZebraRoutes([]byte(js), z.Routes); err != nil {
			t.Fatal(err)
		}
	}
	zebra(`{"192.0.2.0/30":[{"prefix":"192.0.2.0/30","protocol":"connected","selected":true,"installed":true,
		"nexthops":[{"directlyConnected":true,"interfaceIndex":2,"interfaceName":"to-r2","active":true}]}]}`)
	if d := compareRIB(k, z); len(d) != 0 {
		t.Fatalf("equal views differ: %v", d)
	}
	// zebra still has a kernel route the kernel has deleted: it missed
	// the RTM_DELROUTE.
	zebra(`{"203.0.113.0/26":[{"prefix":"203.0.113.0/26","protocol":"kernel","selected":true,"installed":true,
		"nexthops":[{"directlyConnected":true,"interfaceIndex":3,"interfaceName":"stub","active":true}]}]}`)
	d := compareRIB(k, z)
	if len(d) != 1 || !strings.Contains(d[0], "a deletion zebra missed") || !strings.Contains(d[0], p.String()) {
		t.Fatalf("missed deletion not reported: %v", d)
	}
	// The kernel has a route zebra does not know.
	k.Routes = append(k.Routes, kroute{Dst: p, Type: unix.RTN_UNICAST, Protocol: unix.RTPROT_STATIC, OIF: 3},
		kroute{Dst: netip.MustParsePrefix("2001:db8:200::/64"), Type: unix.RTN_UNICAST, Protocol: unix.RTPROT_BOOT, OIF: 3})
	d = compareRIB(k, z)
	if len(d) != 1 || !strings.Contains(d[0], "2001:db8:200::/64 dev 3 proto boot | zebra: nothing selected") {
		t.Fatalf("unknown kernel route not reported: %v", d)
	}
}

func TestRightHop(t *testing.T) {
	k := kstate{Nexthops: map[uint32]knexthop{7: {Gateway: netip.MustParseAddr("fe80::1"), OIF: 2}}}
	r := kroute{Dst: netip.MustParsePrefix("2001:db8:100::/64"), Type: unix.RTN_UNICAST, Protocol: unix.RTPROT_BGP, NHID: 7}
	if !rightHop(k, r, []string{"2001:db8:12::1/64", "fe80::1/64"}, 2) {
		t.Error("the upstream router's link-local address out of the right device is the right nexthop")
	}
	if rightHop(k, r, []string{"2001:db8:12::1/64", "fe80::1/64"}, 3) {
		t.Error("the wrong device passed")
	}
	if rightHop(k, r, []string{"2001:db8:12::2/64"}, 2) {
		t.Error("a gateway that is not the upstream router's passed")
	}
	r.Protocol = unix.RTPROT_STATIC
	if rightHop(k, r, []string{"fe80::1/64"}, 2) {
		t.Error("a route not from BGP passed")
	}
}
