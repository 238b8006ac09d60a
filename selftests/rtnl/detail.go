// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"crypto/sha256"
	"fmt"
	"net/netip"
	"strings"
)

// The Detail of a transcript row is what Describe makes of a message's
// payload; an expected message's Detail must be the same text. Both sides
// build it with the functions below, so the format is written down once:
//
//	RTM_NEWADDR, RTM_DELADDR     "198.51.100.1/32 dev 1"            AddrDetail
//	RTM_NEWROUTE, RTM_DELROUTE   "local 198.51.100.1/32 table 255",
//	                             "unicast 10.0.0.0/24 table 254 nhid 7"
//	                                                                RouteDetail
//	RTM_NEWLINK, RTM_DELLINK     "vy", "vy new_netnsid 3 new_ifindex 9",
//	                             "vy link_netnsid 2"                LinkDetail
//	RTM_NEWNSID, RTM_DELNSID     "nsid 42"                          NSIDDetail
//	RTM_NEWNEXTHOP, _DELNEXTHOP  "id 7"                             NexthopDetail
//	tc qdisc/filter/chain        "dev 1 ingress", "dev 1 u32", "dev 1 chain 0"
//	                                                                TCDetail
//	RTM_NEWACTION, _DELACTION    "mirred index 7, gact index 2"     (Describe)
//	RTM_NEWSTATS                 "ifindex 1"                        StatsDetail
//	NLMSG_ERROR (an ACK)         "errno 0"                          AckDetail
//	any other type (NLMSG_NOOP)  "payload 0a0b0c0d", ""             RawDetail
//
// An expected message of a type Describe knows matches any payload when
// its Detail is empty. The payload of any other type is compared byte for
// byte, and RawDetail only shows it.

// AddrDetail is the Detail of an address message: the address (IFA_LOCAL,
// else IFA_ADDRESS) with the prefix length, and the interface.
func AddrDetail(p netip.Prefix, ifindex uint32) string {
	return fmt.Sprintf("%s dev %d", p, ifindex)
}

// NeighDetail is the Detail of a neighbour message: its destination,
// device and NUD state names joined by "|" ("reachable", "stale", ...).
func NeighDetail(dst netip.Addr, ifindex uint32, state string) string {
	return fmt.Sprintf("%s dev %d %s", dst, ifindex, state)
}

// TentativeSuffix follows the AddrDetail of an IPv6 address still in
// duplicate address detection (IFA_F_TENTATIVE); an IPv4 address never
// has it.
const TentativeSuffix = " tentative"

// RouteDetail is the Detail of a route message: its type ("unicast",
// "local", ...: routeTypeName), destination ("default" when it has none),
// table and, if not 0, the nexthop object it uses (RTA_NH_ID).
func RouteDetail(typ uint8, dst netip.Prefix, table, nhid uint32) string {
	d := "default"
	if dst.IsValid() {
		d = dst.String()
	}
	s := fmt.Sprintf("%s %s table %d", routeTypeName(typ), d, table)
	if nhid != 0 {
		s += fmt.Sprintf(" nhid %d", nhid)
	}
	return strings.TrimSpace(s)
}

// routeTypeName names a route type (rtm_type) as Describe does.
func routeTypeName(typ uint8) string { return routeTypes[typ] }

// LinkDetail is the Detail of a link message: the interface name, then
// "key value" for each attribute of a move the message carries, in the
// order given: "new_netnsid", "new_ifindex", "link_netnsid".
func LinkDetail(name string, attrs ...LinkAttr) string {
	parts := []string{name}
	for _, a := range attrs {
		parts = append(parts, fmt.Sprintf("%s %d", a.Key, a.Value))
	}
	return strings.Join(parts, " ")
}

// LinkAttr is one attribute of a link message's Detail.
type LinkAttr struct {
	Key   string // "new_netnsid", "new_ifindex" or "link_netnsid"
	Value int32
}

// NewNetnsid, NewIfindex and LinkNetnsid are the LinkAttrs of
// IFLA_NEW_NETNSID, IFLA_NEW_IFINDEX and IFLA_LINK_NETNSID.
func NewNetnsid(id int32) LinkAttr      { return LinkAttr{"new_netnsid", id} }
func NewIfindex(index int32) LinkAttr   { return LinkAttr{"new_ifindex", index} }
func LinkNetnsid(id int32) LinkAttr     { return LinkAttr{"link_netnsid", id} }
func NSIDDetail(id int32) string        { return fmt.Sprintf("nsid %d", id) }
func NexthopDetail(id uint32) string    { return fmt.Sprintf("id %d", id) }
func StatsDetail(ifindex uint32) string { return fmt.Sprintf("ifindex %d", ifindex) }
func AckDetail(errno int) string        { return fmt.Sprintf("errno %d", errno) }

// TCDetail is the Detail of a qdisc, filter or chain message: the
// interface, then its kind ("ingress", "u32") or "chain N".
func TCDetail(ifindex int32, what string) string { return fmt.Sprintf("dev %d %s", ifindex, what) }

// TCChain is TCDetail's what for a chain message.
func TCChain(index uint32) string { return fmt.Sprintf("chain %d", index) }

// RawDetail shows the payload of a message of a type Describe does not
// know: "" when there is none, its bytes in hex up to rawHexMax bytes,
// else its length and the start of its SHA-256. It only shows the payload:
// the transcript compares such payloads byte for byte.
func RawDetail(payload []byte) string {
	switch {
	case len(payload) == 0:
		return ""
	case len(payload) <= rawHexMax:
		return fmt.Sprintf("payload %x", payload)
	}
	sum := sha256.Sum256(payload)
	return fmt.Sprintf("payload %d bytes sha256 %x", len(payload), sum[:8])
}

// rawHexMax is the longest payload RawDetail shows byte by byte, short
// enough to keep a transcript row readable.
const rawHexMax = 16
