// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"fmt"
	"net/netip"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Route describes a unicast route in the main table. It goes through a
// nexthop object (NHID, RTA_NH_ID) or, without one, through Gateway and/or
// OIF.
type Route struct {
	Dst     netip.Prefix
	NHID    uint32
	Gateway netip.Addr
	OIF     uint32
}

// NewRoute adds r; it fails with EEXIST if the destination exists.
func NewRoute(r Route) Request {
	return routeRequest("RTM_NEWROUTE", r, netlink.Create|netlink.Excl)
}

// ReplaceRoute replaces (or creates) the route to r.Dst with r
// (NLM_F_CREATE|NLM_F_REPLACE, like `ip route replace`).
func ReplaceRoute(r Route) Request {
	return routeRequest("RTM_NEWROUTE replace", r, netlink.Create|netlink.Replace)
}

// DelRoute deletes the route to r.Dst (RTM_DELROUTE) that matches r.
func DelRoute(r Route) Request {
	return Request{
		Name: fmt.Sprintf("RTM_DELROUTE %s", r),
		Msg:  message(unix.RTM_DELROUTE, 0, r.rtmsg(), attrs(r.encode)),
	}
}

func routeRequest(verb string, r Route, flags netlink.HeaderFlags) Request {
	return Request{
		Name: fmt.Sprintf("%s %s", verb, r),
		Msg:  message(unix.RTM_NEWROUTE, flags, r.rtmsg(), attrs(r.encode)),
	}
}

// rtmsg is struct rtmsg {family, dst_len, src_len, tos, table, protocol,
// scope, type; u32 flags}.
func (r Route) rtmsg() []byte {
	family := uint8(unix.AF_INET)
	if r.Dst.Addr().Is6() {
		family = unix.AF_INET6
	}
	return []byte{family, uint8(r.Dst.Bits()), 0, 0, unix.RT_TABLE_MAIN, unix.RTPROT_STATIC,
		unix.RT_SCOPE_UNIVERSE, unix.RTN_UNICAST, 0, 0, 0, 0}
}

func (r Route) encode(ae *netlink.AttributeEncoder) {
	ae.Bytes(unix.RTA_DST, r.Dst.Masked().Addr().AsSlice())
	if r.NHID != 0 {
		ae.Uint32(RTA_NH_ID, r.NHID)
	}
	if r.Gateway.IsValid() {
		ae.Bytes(unix.RTA_GATEWAY, r.Gateway.AsSlice())
	}
	if r.OIF != 0 {
		ae.Uint32(unix.RTA_OIF, r.OIF)
	}
}

func (r Route) String() string {
	s := r.Dst.Masked().String()
	if r.NHID != 0 {
		s += fmt.Sprintf(" nhid %d", r.NHID)
	}
	if r.Gateway.IsValid() {
		s += " via " + r.Gateway.String()
	}
	if r.OIF != 0 {
		s += fmt.Sprintf(" dev %d", r.OIF)
	}
	return s
}
