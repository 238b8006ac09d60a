// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/rtnl"
)

// The kernel's side of every comparison: what a router's namespace holds,
// read with rtnetlink dumps from its control socket.

// kroute is a route of the main table.
type kroute struct {
	Dst      netip.Prefix
	Type     uint8 // RTN_*
	Protocol uint8 // RTPROT_*
	NHID     uint32
	Gateway  netip.Addr
	OIF      uint32
}

// knexthop is a nexthop object.
type knexthop struct {
	Gateway   netip.Addr
	OIF       uint32
	Blackhole bool
	Group     []uint32
}

// kaddr is an address of an interface.
type kaddr struct {
	Index     uint32
	Prefix    netip.Prefix
	Tentative bool // IPv6 DAD still runs
}

// kstate is one dump of a namespace.
type kstate struct {
	Routes   []kroute
	Nexthops map[uint32]knexthop
	Addrs    []kaddr
}

var protoNames = map[uint8]string{unix.RTPROT_KERNEL: "kernel", unix.RTPROT_BOOT: "boot",
	unix.RTPROT_STATIC: "static", unix.RTPROT_ZEBRA: "zebra", unix.RTPROT_BGP: "bgp"}

var typeNames = map[uint8]string{unix.RTN_UNICAST: "unicast", unix.RTN_BLACKHOLE: "blackhole",
	unix.RTN_UNREACHABLE: "unreachable", unix.RTN_PROHIBIT: "prohibit"}

func nameOr(names map[uint8]string, v uint8) string {
	if n, ok := names[v]; ok {
		return n
	}
	return fmt.Sprint(v)
}

// hop is a route's effective nexthop: its own gateway and device, or its
// nexthop object's.
type hop struct {
	Gateway   netip.Addr
	OIF       uint32
	Blackhole bool
}

func (h hop) String() string {
	var parts []string
	if h.Blackhole {
		parts = append(parts, "blackhole")
	}
	if h.Gateway.IsValid() {
		parts = append(parts, "via "+h.Gateway.String())
	}
	if h.OIF != 0 {
		parts = append(parts, fmt.Sprintf("dev %d", h.OIF))
	}
	return strings.Join(parts, " ")
}

// hops resolves r's nexthops (a group's members each count).
func (s kstate) hops(r kroute) []hop {
	if r.Type == unix.RTN_BLACKHOLE || r.Type == unix.RTN_UNREACHABLE || r.Type == unix.RTN_PROHIBIT {
		return []hop{{Blackhole: true}}
	}
	if r.NHID == 0 {
		return []hop{{Gateway: r.Gateway, OIF: r.OIF}}
	}
	nh, ok := s.Nexthops[r.NHID]
	if !ok {
		return nil
	}
	if len(nh.Group) == 0 {
		return []hop{{Gateway: nh.Gateway, OIF: nh.OIF, Blackhole: nh.Blackhole}}
	}
	var out []hop
	for _, id := range nh.Group {
		m := s.Nexthops[id]
		out = append(out, hop{Gateway: m.Gateway, OIF: m.OIF, Blackhole: m.Blackhole})
	}
	return out
}

// routesTo returns the main-table routes to p (fe80::/64 has one per
// interface).
func (s kstate) routesTo(p netip.Prefix) []kroute {
	var out []kroute
	for _, r := range s.Routes {
		if r.Dst == p && comparable(r) {
			out = append(out, r)
		}
	}
	return out
}

// prefixes returns every prefix of the main table, once each, in order.
func (s kstate) prefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, r := range s.Routes {
		if comparable(r) && !slices.Contains(out, r.Dst) {
			out = append(out, r.Dst)
		}
	}
	return out
}

// comparable: the route types zebra keeps (not broadcast, local, ...).
func comparable(r kroute) bool {
	switch r.Type {
	case unix.RTN_UNICAST, unix.RTN_BLACKHOLE, unix.RTN_UNREACHABLE, unix.RTN_PROHIBIT:
		return true
	}
	return false
}

// route returns the main-table route to p, if any.
func (s kstate) route(p netip.Prefix) (kroute, bool) {
	for _, r := range s.Routes {
		if r.Dst == p {
			return r, true
		}
	}
	return kroute{}, false
}

// describe is a route as `ip route` would name it, nexthops resolved.
func (s kstate) describe(r kroute) string {
	var hs []string
	for _, h := range s.hops(r) {
		hs = append(hs, h.String())
	}
	d := fmt.Sprintf("%s %s proto %s", r.Dst, strings.Join(hs, ", "), nameOr(protoNames, r.Protocol))
	if r.NHID != 0 {
		d += fmt.Sprintf(" nhid %d", r.NHID)
	}
	if r.Type != unix.RTN_UNICAST {
		d += " type " + nameOr(typeNames, r.Type)
	}
	return d
}

// addrsOf returns the prefixes of interface index, sorted.
func (s kstate) addrsOf(index uint32) []string {
	var out []string
	for _, a := range s.Addrs {
		if a.Index == index {
			out = append(out, a.Prefix.String())
		}
	}
	sort.Strings(out)
	return out
}

// dumpKernel reads the main table (IPv4 and IPv6), the nexthop objects
// and the addresses of the namespace c lives in.
func dumpKernel(c *rtnl.Conn) (kstate, error) {
	s := kstate{Nexthops: map[uint32]knexthop{}}
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		rtm := make([]byte, unix.SizeofRtMsg)
		rtm[0] = fam
		msgs, err := c.Dump(rtnl.Request{Name: fmt.Sprintf("RTM_GETROUTE dump family %d", fam), Msg: netlink.Message{
			Header: netlink.Header{Type: unix.RTM_GETROUTE}, Data: rtm}})
		if err != nil {
			return s, err
		}
		for _, m := range msgs {
			if r, ok := parseRoute(m.Data); ok {
				s.Routes = append(s.Routes, r)
			}
		}
	}
	msgs, err := c.Dump(rtnl.Request{Name: "RTM_GETNEXTHOP dump", Msg: netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETNEXTHOP}, Data: make([]byte, 8)}})
	if err != nil {
		return s, err
	}
	for _, m := range msgs {
		if id, nh, ok := parseNexthop(m.Data); ok {
			s.Nexthops[id] = nh
		}
	}
	msgs, err = c.Dump(rtnl.Request{Name: "RTM_GETADDR dump", Msg: netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETADDR}, Data: make([]byte, unix.SizeofIfAddrmsg)}})
	if err != nil {
		return s, err
	}
	for _, m := range msgs {
		if a, ok := parseAddr(m.Data); ok {
			s.Addrs = append(s.Addrs, a)
		}
	}
	return s, nil
}

func decodeAttrs(b []byte, fn func(typ uint16, v []byte)) bool {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return false
	}
	for ad.Next() {
		fn(ad.Type(), ad.Bytes())
	}
	return ad.Err() == nil
}

// parseRoute reads an RTM_NEWROUTE of the main table; ok is false for
// any other table (local, and the cache entries of IPv6).
func parseRoute(b []byte) (kroute, bool) {
	if len(b) < unix.SizeofRtMsg {
		return kroute{}, false
	}
	r := kroute{Type: b[7], Protocol: b[5]}
	table, dlen := uint32(b[4]), int(b[1])
	dst := netip.IPv4Unspecified()
	if b[0] == unix.AF_INET6 {
		dst = netip.IPv6Unspecified()
	}
	ok := decodeAttrs(b[unix.SizeofRtMsg:], func(typ uint16, v []byte) {
		switch typ {
		case unix.RTA_DST:
			if a, ok := netip.AddrFromSlice(v); ok {
				dst = a
			}
		case unix.RTA_TABLE:
			table = binary.NativeEndian.Uint32(v)
		case unix.RTA_GATEWAY:
			if a, ok := netip.AddrFromSlice(v); ok {
				r.Gateway = a
			}
		case unix.RTA_OIF:
			r.OIF = binary.NativeEndian.Uint32(v)
		case rtnl.RTA_NH_ID:
			r.NHID = binary.NativeEndian.Uint32(v)
		}
	})
	if !ok || table != unix.RT_TABLE_MAIN {
		return kroute{}, false
	}
	r.Dst = netip.PrefixFrom(dst, dlen)
	return r, true
}

func parseNexthop(b []byte) (uint32, knexthop, bool) {
	if len(b) < 8 {
		return 0, knexthop{}, false
	}
	var id uint32
	var nh knexthop
	ok := decodeAttrs(b[8:], func(typ uint16, v []byte) {
		switch typ {
		case unix.NHA_ID:
			id = binary.NativeEndian.Uint32(v)
		case unix.NHA_GATEWAY:
			if a, ok := netip.AddrFromSlice(v); ok {
				nh.Gateway = a
			}
		case unix.NHA_OIF:
			nh.OIF = binary.NativeEndian.Uint32(v)
		case unix.NHA_BLACKHOLE:
			nh.Blackhole = true
		case unix.NHA_GROUP:
			for i := 0; i+8 <= len(v); i += 8 {
				nh.Group = append(nh.Group, binary.NativeEndian.Uint32(v[i:]))
			}
		}
	})
	return id, nh, ok && id != 0
}

func parseAddr(b []byte) (kaddr, bool) {
	if len(b) < unix.SizeofIfAddrmsg {
		return kaddr{}, false
	}
	a := kaddr{Index: binary.NativeEndian.Uint32(b[4:]), Tentative: b[2]&unix.IFA_F_TENTATIVE != 0}
	var addr, local netip.Addr
	ok := decodeAttrs(b[unix.SizeofIfAddrmsg:], func(typ uint16, v []byte) {
		ip, good := netip.AddrFromSlice(v)
		switch {
		case !good:
		case typ == unix.IFA_LOCAL:
			local = ip
		case typ == unix.IFA_ADDRESS:
			addr = ip
		}
	})
	if local.IsValid() {
		addr = local
	}
	if !ok || !addr.IsValid() {
		return kaddr{}, false
	}
	a.Prefix = netip.PrefixFrom(addr, int(b[1]))
	return a, true
}
