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

// Nexthop describes a nexthop object (RTM_NEWNEXTHOP). Exactly one form is
// used: Blackhole, Gateway (with OIF, or OIF alone for a device nexthop), or
// Group.
type Nexthop struct {
	ID        uint32
	Blackhole bool
	Gateway   netip.Addr // IPv4 or IPv6 gateway; needs OIF
	OIF       uint32     // output interface; must be up with carrier
	Group     []GroupMember
}

// GroupMember is one entry of a nexthop group.
type GroupMember struct {
	ID     uint32
	Weight uint8 // relative weight minus one, as in struct nexthop_grp (0: weight 1)
}

// NewNexthop creates nh; it fails with EEXIST if the id is taken.
func NewNexthop(nh Nexthop) Request {
	return nexthopRequest("RTM_NEWNEXTHOP", nh, netlink.Create|netlink.Excl)
}

// ReplaceNexthop replaces (or creates) nexthop nh.ID with nh
// (NLM_F_CREATE|NLM_F_REPLACE, like `ip nexthop replace`).
func ReplaceNexthop(nh Nexthop) Request {
	return nexthopRequest("RTM_NEWNEXTHOP replace", nh, netlink.Create|netlink.Replace)
}

func nexthopRequest(verb string, nh Nexthop, flags netlink.HeaderFlags) Request {
	return Request{
		Name: fmt.Sprintf("%s %s", verb, nh),
		Msg:  message(unix.RTM_NEWNEXTHOP, flags, nhmsg(nh.family()), attrs(nh.encode)),
	}
}

// family is the nhmsg family the kernel expects: AF_UNSPEC for groups, the
// gateway's family for gateways, and AF_INET for blackhole and device
// nexthops (rtm_to_nh_config rejects AF_UNSPEC without NHA_GROUP).
func (nh Nexthop) family() uint8 {
	switch {
	case len(nh.Group) > 0:
		return unix.AF_UNSPEC
	case nh.Gateway.Is6():
		return unix.AF_INET6
	default:
		return unix.AF_INET
	}
}

func (nh Nexthop) encode(ae *netlink.AttributeEncoder) {
	ae.Uint32(unix.NHA_ID, nh.ID)
	switch {
	case len(nh.Group) > 0:
		ae.Bytes(unix.NHA_GROUP, encodeGroup(nh.Group))
	case nh.Blackhole:
		ae.Flag(unix.NHA_BLACKHOLE, true)
	default:
		ae.Uint32(unix.NHA_OIF, nh.OIF)
		if nh.Gateway.IsValid() {
			ae.Bytes(unix.NHA_GATEWAY, nh.Gateway.AsSlice())
		}
	}
}

// encodeGroup lays out struct nexthop_grp {u32 id; u8 weight; u8 weight_high;
// u16 resvd2} for each member.
func encodeGroup(members []GroupMember) []byte {
	b := make([]byte, 0, len(members)*unix.SizeofNexthopGrp)
	for _, m := range members {
		b = binary.NativeEndian.AppendUint32(b, m.ID)
		b = append(b, m.Weight, 0, 0, 0)
	}
	return b
}

// nhmsg is struct nhmsg {family, scope, protocol, resvd; u32 flags}; a
// request uses protocol RTPROT_STATIC like iproute2.
func nhmsg(family uint8) []byte {
	return []byte{family, 0, unix.RTPROT_STATIC, 0, 0, 0, 0, 0}
}

func (nh Nexthop) String() string {
	s := fmt.Sprintf("id %d", nh.ID)
	switch {
	case len(nh.Group) > 0:
		ids := make([]string, len(nh.Group))
		for i, m := range nh.Group {
			ids[i] = fmt.Sprint(m.ID)
			if m.Weight != 0 {
				ids[i] += fmt.Sprintf(",%d", int(m.Weight)+1)
			}
		}
		return s + " group " + strings.Join(ids, "/")
	case nh.Blackhole:
		return s + " blackhole"
	case nh.Gateway.IsValid():
		return fmt.Sprintf("%s via %s dev %d", s, nh.Gateway, nh.OIF)
	default:
		return fmt.Sprintf("%s dev %d", s, nh.OIF)
	}
}
