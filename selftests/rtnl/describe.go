// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

var typeNames = map[uint16]string{
	unix.NLMSG_NOOP: "NLMSG_NOOP", unix.NLMSG_ERROR: "NLMSG_ERROR", unix.NLMSG_DONE: "NLMSG_DONE",
	unix.RTM_NEWLINK: "RTM_NEWLINK", unix.RTM_DELLINK: "RTM_DELLINK",
	unix.RTM_NEWADDR: "RTM_NEWADDR", unix.RTM_DELADDR: "RTM_DELADDR",
	unix.RTM_NEWROUTE: "RTM_NEWROUTE", unix.RTM_DELROUTE: "RTM_DELROUTE",
	unix.RTM_NEWQDISC: "RTM_NEWQDISC", unix.RTM_DELQDISC: "RTM_DELQDISC",
	unix.RTM_NEWTFILTER: "RTM_NEWTFILTER", unix.RTM_DELTFILTER: "RTM_DELTFILTER",
	unix.RTM_NEWACTION: "RTM_NEWACTION", unix.RTM_DELACTION: "RTM_DELACTION",
	unix.RTM_NEWCHAIN: "RTM_NEWCHAIN", unix.RTM_DELCHAIN: "RTM_DELCHAIN",
	unix.RTM_NEWNSID: "RTM_NEWNSID", unix.RTM_DELNSID: "RTM_DELNSID",
	unix.RTM_NEWNEXTHOP: "RTM_NEWNEXTHOP", unix.RTM_DELNEXTHOP: "RTM_DELNEXTHOP",
	unix.RTM_NEWSTATS:     "RTM_NEWSTATS",
	unix.RTM_NEWMULTICAST: "RTM_NEWMULTICAST", unix.RTM_DELMULTICAST: "RTM_DELMULTICAST",
}

// TypeName names a NETLINK_ROUTE message type.
func TypeName(t uint16) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type %d", t)
}

// Describe summarises the payload of a notification in a few words, enough
// to tell two messages of one type apart in a transcript: the address of an
// RTM_NEWADDR, the destination and table of a route, the name and move
// attributes of a link, the id of an nsid or nexthop message, the kind of a
// tc object. It returns "" for types it does not know.
func Describe(m netlink.Message) string {
	t := uint16(m.Header.Type)
	switch t {
	case unix.RTM_NEWADDR, unix.RTM_DELADDR, unix.RTM_NEWMULTICAST, unix.RTM_DELMULTICAST:
		return describeAddr(m.Data)
	case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
		return describeRoute(m.Data)
	case unix.RTM_NEWLINK, unix.RTM_DELLINK:
		return describeLink(m.Data)
	case unix.RTM_NEWNSID, unix.RTM_DELNSID:
		if id, err := NSIDOf(m); err == nil {
			return fmt.Sprintf("nsid %d", id)
		}
	case unix.RTM_NEWNEXTHOP, unix.RTM_DELNEXTHOP:
		return describeAttrs(m.Data, 8, map[uint16]string{unix.NHA_ID: "id"})
	case unix.RTM_NEWQDISC, unix.RTM_DELQDISC, unix.RTM_NEWTFILTER, unix.RTM_DELTFILTER,
		unix.RTM_NEWCHAIN, unix.RTM_DELCHAIN:
		return describeTC(m.Data)
	case unix.RTM_NEWACTION, unix.RTM_DELACTION:
		return describeAction(m)
	case unix.RTM_NEWSTATS:
		if len(m.Data) >= 8 {
			return fmt.Sprintf("ifindex %d", binary.NativeEndian.Uint32(m.Data[4:]))
		}
	case unix.NLMSG_ERROR:
		return fmt.Sprintf("errno %d", AckErrno(m))
	}
	return ""
}

func describeAddr(b []byte) string {
	if len(b) < unix.SizeofIfAddrmsg {
		return "short"
	}
	plen, ifindex := b[1], binary.NativeEndian.Uint32(b[4:])
	var addr string
	forAttrs(b[unix.SizeofIfAddrmsg:], func(typ uint16, v []byte) {
		if typ == unix.IFA_LOCAL || typ == unix.IFA_MULTICAST || (typ == unix.IFA_ADDRESS && addr == "") {
			if a, ok := netip.AddrFromSlice(v); ok {
				addr = a.String()
			}
		}
	})
	return fmt.Sprintf("%s/%d dev %d", addr, plen, ifindex)
}

var routeTypes = map[uint8]string{unix.RTN_UNICAST: "unicast", unix.RTN_LOCAL: "local",
	unix.RTN_BROADCAST: "broadcast", unix.RTN_MULTICAST: "multicast", unix.RTN_BLACKHOLE: "blackhole"}

func describeRoute(b []byte) string {
	if len(b) < unix.SizeofRtMsg {
		return "short"
	}
	dlen, table, typ := b[1], uint32(b[4]), b[7]
	dst := "default"
	var nhid uint32
	forAttrs(b[unix.SizeofRtMsg:], func(t uint16, v []byte) {
		switch t {
		case unix.RTA_DST:
			if a, ok := netip.AddrFromSlice(v); ok {
				dst = fmt.Sprintf("%s/%d", a, dlen)
			}
		case unix.RTA_TABLE:
			table = binary.NativeEndian.Uint32(v)
		case RTA_NH_ID:
			nhid = binary.NativeEndian.Uint32(v)
		}
	})
	s := fmt.Sprintf("%s %s table %d", routeTypes[typ], dst, table)
	if nhid != 0 {
		s += fmt.Sprintf(" nhid %d", nhid)
	}
	return strings.TrimSpace(s)
}

func describeLink(b []byte) string {
	if len(b) < unix.SizeofIfInfomsg {
		return "short"
	}
	var parts []string
	forAttrs(b[unix.SizeofIfInfomsg:], func(t uint16, v []byte) {
		switch t {
		case unix.IFLA_IFNAME:
			parts = append([]string{strings.TrimRight(string(v), "\x00")}, parts...)
		case unix.IFLA_NEW_NETNSID:
			parts = append(parts, fmt.Sprintf("new_netnsid %d", int32(binary.NativeEndian.Uint32(v))))
		case unix.IFLA_NEW_IFINDEX:
			parts = append(parts, fmt.Sprintf("new_ifindex %d", int32(binary.NativeEndian.Uint32(v))))
		case unix.IFLA_LINK_NETNSID:
			parts = append(parts, fmt.Sprintf("link_netnsid %d", int32(binary.NativeEndian.Uint32(v))))
		}
	})
	return strings.Join(parts, " ")
}

func describeTC(b []byte) string {
	if len(b) < 20 {
		return "short"
	}
	parts := []string{fmt.Sprintf("dev %d", int32(binary.NativeEndian.Uint32(b[4:])))}
	forAttrs(b[20:], func(t uint16, v []byte) {
		switch {
		case t == unix.TCA_KIND:
			parts = append(parts, strings.TrimRight(string(v), "\x00"))
		case t == unix.TCA_CHAIN && len(v) == 4:
			parts = append(parts, fmt.Sprintf("chain %d", binary.NativeEndian.Uint32(v)))
		}
	})
	return strings.Join(parts, " ")
}

func describeAttrs(b []byte, hdr int, names map[uint16]string) string {
	if len(b) < hdr {
		return "short"
	}
	var parts []string
	forAttrs(b[hdr:], func(t uint16, v []byte) {
		if n, ok := names[t]; ok && len(v) == 4 {
			parts = append(parts, fmt.Sprintf("%s %d", n, binary.NativeEndian.Uint32(v)))
		}
	})
	return strings.Join(parts, " ")
}

func forAttrs(b []byte, fn func(typ uint16, v []byte)) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return
	}
	for ad.Next() {
		fn(ad.Type(), ad.Bytes())
	}
}

// RTA_NH_ID is missing from x/sys/unix.
const RTA_NH_ID = 30
