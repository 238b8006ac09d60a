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
	unix.RTM_NEWNEIGH: "RTM_NEWNEIGH", unix.RTM_DELNEIGH: "RTM_DELNEIGH",
	unix.RTM_NEWROUTE: "RTM_NEWROUTE", unix.RTM_DELROUTE: "RTM_DELROUTE",
	unix.RTM_NEWQDISC: "RTM_NEWQDISC", unix.RTM_DELQDISC: "RTM_DELQDISC",
	unix.RTM_NEWTFILTER: "RTM_NEWTFILTER", unix.RTM_DELTFILTER: "RTM_DELTFILTER",
	unix.RTM_NEWACTION: "RTM_NEWACTION", unix.RTM_DELACTION: "RTM_DELACTION",
	unix.RTM_NEWCHAIN: "RTM_NEWCHAIN", unix.RTM_DELCHAIN: "RTM_DELCHAIN",
	unix.RTM_NEWNSID: "RTM_NEWNSID", unix.RTM_DELNSID: "RTM_DELNSID",
	unix.RTM_NEWNEXTHOP: "RTM_NEWNEXTHOP", unix.RTM_DELNEXTHOP: "RTM_DELNEXTHOP",
	unix.RTM_NEWSTATS:     "RTM_NEWSTATS",
	unix.RTM_NEWMULTICAST: "RTM_NEWMULTICAST", unix.RTM_DELMULTICAST: "RTM_DELMULTICAST",
	// Named, but not described: their payload is compared byte for byte.
	unix.RTM_NEWRULE: "RTM_NEWRULE", unix.RTM_DELRULE: "RTM_DELRULE",
	unix.RTM_NEWTCLASS: "RTM_NEWTCLASS", unix.RTM_DELTCLASS: "RTM_DELTCLASS",
	unix.RTM_NEWNETCONF: "RTM_NEWNETCONF", unix.RTM_DELNETCONF: "RTM_DELNETCONF",
	unix.RTM_NEWPREFIX: "RTM_NEWPREFIX",
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
// tc object, the kind and index of each tc action. It returns "" for types
// it does not know (Describes says which it knows).
func Describe(m netlink.Message) string {
	if d, ok := describers[uint16(m.Header.Type)]; ok {
		return d(m)
	}
	return ""
}

// Describes reports whether Describe summarises messages of type t. A
// transcript compares the payload of any other type byte for byte, and
// shows it with RawDetail.
func Describes(t uint16) bool {
	_, ok := describers[t]
	return ok
}

// describers holds Describe's summary of each type it knows. A new type
// gets its entry here and its Detail function in detail.go.
var describers = map[uint16]func(netlink.Message) string{}

func init() {
	each := func(fn func(netlink.Message) string, types ...uint16) {
		for _, t := range types {
			describers[t] = fn
		}
	}
	each(func(m netlink.Message) string { return describeAddr(m.Data) },
		unix.RTM_NEWADDR, unix.RTM_DELADDR, unix.RTM_NEWMULTICAST, unix.RTM_DELMULTICAST)
	each(func(m netlink.Message) string { return describeRoute(m.Data) }, unix.RTM_NEWROUTE, unix.RTM_DELROUTE)
	each(func(m netlink.Message) string { return describeLink(m.Data) }, unix.RTM_NEWLINK, unix.RTM_DELLINK)
	each(func(m netlink.Message) string {
		if id, err := NSIDOf(m); err == nil {
			return NSIDDetail(id)
		}
		return ""
	}, unix.RTM_NEWNSID, unix.RTM_DELNSID)
	each(func(m netlink.Message) string { return describeNeigh(m.Data) }, unix.RTM_NEWNEIGH, unix.RTM_DELNEIGH)
	each(func(m netlink.Message) string {
		return describeAttrs(m.Data, 8, map[uint16]string{unix.NHA_ID: "id"})
	}, unix.RTM_NEWNEXTHOP, unix.RTM_DELNEXTHOP)
	each(func(m netlink.Message) string { return describeTC(m.Data) },
		unix.RTM_NEWQDISC, unix.RTM_DELQDISC, unix.RTM_NEWTFILTER, unix.RTM_DELTFILTER,
		unix.RTM_NEWCHAIN, unix.RTM_DELCHAIN)
	each(func(m netlink.Message) string { return describeActions(m.Data) }, unix.RTM_NEWACTION, unix.RTM_DELACTION)
	each(func(m netlink.Message) string {
		if len(m.Data) >= 8 {
			return StatsDetail(binary.NativeEndian.Uint32(m.Data[4:]))
		}
		return ""
	}, unix.RTM_NEWSTATS)
	each(func(m netlink.Message) string { return AckDetail(ackErrno(m)) }, unix.NLMSG_ERROR)
}

func describeAddr(b []byte) string {
	if len(b) < unix.SizeofIfAddrmsg {
		return "short"
	}
	plen, flags, ifindex := b[1], uint32(b[2]), binary.NativeEndian.Uint32(b[4:])
	var addr netip.Addr
	forAttrs(b[unix.SizeofIfAddrmsg:], func(typ uint16, v []byte) {
		switch {
		case typ == unix.IFA_LOCAL || typ == unix.IFA_MULTICAST || (typ == unix.IFA_ADDRESS && !addr.IsValid()):
			if a, ok := netip.AddrFromSlice(v); ok {
				addr = a
			}
		case typ == unix.IFA_FLAGS && len(v) == 4:
			flags |= binary.NativeEndian.Uint32(v) // all 32 bits; ifa_flags holds the low 8
		}
	})
	if !addr.IsValid() {
		return fmt.Sprintf("(no address)/%d dev %d", plen, ifindex)
	}
	d := AddrDetail(netip.PrefixFrom(addr, int(plen)), ifindex)
	if flags&unix.IFA_F_TENTATIVE != 0 {
		d += TentativeSuffix
	}
	return d
}

// neighStates names the NUD_* states of a neighbour message.
var neighStates = []struct {
	bit  uint16
	name string
}{{unix.NUD_INCOMPLETE, "incomplete"}, {unix.NUD_REACHABLE, "reachable"}, {unix.NUD_STALE, "stale"},
	{unix.NUD_DELAY, "delay"}, {unix.NUD_PROBE, "probe"}, {unix.NUD_FAILED, "failed"},
	{unix.NUD_NOARP, "noarp"}, {unix.NUD_PERMANENT, "permanent"}}

// describeNeigh gives a neighbour's destination, device and state, e.g.
// "192.0.2.2 dev 3 reachable".
func describeNeigh(b []byte) string {
	const sizeofNdmsg = 12 // family, 3 pad, ifindex, state, flags, type
	if len(b) < sizeofNdmsg {
		return "short"
	}
	ifindex, state := binary.NativeEndian.Uint32(b[4:]), binary.NativeEndian.Uint16(b[8:])
	var dst netip.Addr
	forAttrs(b[sizeofNdmsg:], func(typ uint16, v []byte) {
		if typ == unix.NDA_DST {
			if a, ok := netip.AddrFromSlice(v); ok {
				dst = a
			}
		}
	})
	var names []string
	for _, s := range neighStates {
		if state&s.bit != 0 {
			names = append(names, s.name)
			state &^= s.bit
		}
	}
	if state != 0 || len(names) == 0 {
		names = append(names, fmt.Sprintf("state %#x", state))
	}
	return NeighDetail(dst, ifindex, strings.Join(names, "|"))
}

var routeTypes = map[uint8]string{unix.RTN_UNICAST: "unicast", unix.RTN_LOCAL: "local",
	unix.RTN_BROADCAST: "broadcast", unix.RTN_MULTICAST: "multicast", unix.RTN_BLACKHOLE: "blackhole"}

func describeRoute(b []byte) string {
	if len(b) < unix.SizeofRtMsg {
		return "short"
	}
	dlen, table, typ := b[1], uint32(b[4]), b[7]
	var dst netip.Prefix
	var nhid uint32
	forAttrs(b[unix.SizeofRtMsg:], func(t uint16, v []byte) {
		switch t {
		case unix.RTA_DST:
			if a, ok := netip.AddrFromSlice(v); ok {
				dst = netip.PrefixFrom(a, int(dlen))
			}
		case unix.RTA_TABLE:
			table = binary.NativeEndian.Uint32(v)
		case RTA_NH_ID:
			nhid = binary.NativeEndian.Uint32(v)
		}
	})
	return RouteDetail(typ, dst, table, nhid)
}

func describeLink(b []byte) string {
	if len(b) < unix.SizeofIfInfomsg {
		return "short"
	}
	var name string
	var attrs []LinkAttr
	forAttrs(b[unix.SizeofIfInfomsg:], func(t uint16, v []byte) {
		switch t {
		case unix.IFLA_IFNAME:
			name = strings.TrimRight(string(v), "\x00")
		case unix.IFLA_NEW_NETNSID:
			attrs = append(attrs, NewNetnsid(int32(binary.NativeEndian.Uint32(v))))
		case unix.IFLA_NEW_IFINDEX:
			attrs = append(attrs, NewIfindex(int32(binary.NativeEndian.Uint32(v))))
		case unix.IFLA_LINK_NETNSID:
			attrs = append(attrs, LinkNetnsid(int32(binary.NativeEndian.Uint32(v))))
		}
	})
	return strings.TrimSpace(LinkDetail(name, attrs...))
}

func describeTC(b []byte) string {
	if len(b) < 20 {
		return "short"
	}
	dev := int32(binary.NativeEndian.Uint32(b[4:]))
	var parts []string
	forAttrs(b[20:], func(t uint16, v []byte) {
		switch {
		case t == unix.TCA_KIND:
			parts = append(parts, strings.TrimRight(string(v), "\x00"))
		case t == unix.TCA_CHAIN && len(v) == 4:
			parts = append(parts, TCChain(binary.NativeEndian.Uint32(v)))
		}
	})
	return strings.TrimSpace(TCDetail(dev, strings.Join(parts, " ")))
}

// describeActions lists the actions of an RTM_NEWACTION or RTM_DELACTION
// as "mirred index 7": struct tcamsg, then TCA_ROOT_TAB holding one nest
// per action with TCA_ACT_KIND and TCA_ACT_OPTIONS. The kernel does not
// put TCA_ACT_INDEX in notifications (tcf_action_dump_1()); the index is
// the first field (struct tc_gen) of the kind's parameters, attribute 2
// (TCA_MIRRED_PARMS, TCA_GACT_PARMS) for the kinds decoded here.
func describeActions(b []byte) string {
	if len(b) < len(tcamsg) {
		return "short"
	}
	var parts []string
	forAttrs(b[len(tcamsg):], func(t uint16, tab []byte) {
		if t != unix.TCA_ROOT_TAB {
			return
		}
		forAttrs(tab, func(_ uint16, act []byte) {
			parts = append(parts, describeAction(act))
		})
	})
	return strings.Join(parts, ", ")
}

func describeAction(b []byte) string {
	var kind string
	index := -1
	forAttrs(b, func(t uint16, v []byte) {
		switch t {
		case tcaActKind:
			kind = strings.TrimRight(string(v), "\x00")
		case tcaActIndex:
			if len(v) == 4 {
				index = int(binary.NativeEndian.Uint32(v))
			}
		}
	})
	forAttrs(b, func(t uint16, opts []byte) {
		if t != tcaActOptions || index >= 0 || (kind != "mirred" && kind != "gact") {
			return
		}
		forAttrs(opts, func(t uint16, v []byte) {
			if t == tcaMirredParms && len(v) >= 4 {
				index = int(binary.NativeEndian.Uint32(v))
			}
		})
	})
	if index < 0 {
		return kind
	}
	return fmt.Sprintf("%s index %d", kind, index)
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

// flag bits whose meaning depends on the message (include/uapi/linux/netlink.h).
var (
	commonFlags = []flagName{{unix.NLM_F_REQUEST, "REQUEST"}, {unix.NLM_F_MULTI, "MULTI"},
		{unix.NLM_F_ACK, "ACK"}, {unix.NLM_F_ECHO, "ECHO"}, {unix.NLM_F_DUMP_INTR, "DUMP_INTR"},
		{unix.NLM_F_DUMP_FILTERED, "DUMP_FILTERED"}}
	newFlags = []flagName{{unix.NLM_F_REPLACE, "REPLACE"}, {unix.NLM_F_EXCL, "EXCL"},
		{unix.NLM_F_CREATE, "CREATE"}, {unix.NLM_F_APPEND, "APPEND"}}
	delFlags = []flagName{{unix.NLM_F_NONREC, "NONREC"}, {0x200, "BULK"}}
	ackFlags = []flagName{{unix.NLM_F_CAPPED, "CAPPED"}, {unix.NLM_F_ACK_TLVS, "ACK_TLVS"}}
)

type flagName struct {
	bit  uint16
	name string
}

// FlagNames renders the nlmsg_flags of a message of type typ as
// "CREATE|EXCL", or "0". The bits above 0xff mean different things for an
// ACK (NLMSG_ERROR), a delete (RTM_DEL*) and everything else; unknown bits
// show in hex.
func FlagNames(typ, flags uint16) string {
	if flags == 0 {
		return "0"
	}
	table := append([]flagName(nil), commonFlags...)
	switch {
	case typ == unix.NLMSG_ERROR:
		table = append(table, ackFlags...)
	case typ >= unix.RTM_BASE && (typ-unix.RTM_BASE)%4 == 1:
		table = append(table, delFlags...)
	default:
		table = append(table, newFlags...)
	}
	var parts []string
	for _, f := range table {
		if flags&f.bit != 0 {
			parts = append(parts, f.name)
			flags &^= f.bit
		}
	}
	if flags != 0 {
		parts = append(parts, fmt.Sprintf("%#x", flags))
	}
	return strings.Join(parts, "|")
}
