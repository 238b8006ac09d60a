// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/jsimonetti/rtnetlink/v2"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// NewAddr adds the IPv4 or IPv6 address p to interface ifindex.
func NewAddr(ifindex uint32, p netip.Prefix) Request {
	return addrRequest(unix.RTM_NEWADDR, netlink.Create|netlink.Excl, ifindex, p)
}

// DelAddr removes the IPv4 or IPv6 address p from interface ifindex.
func DelAddr(ifindex uint32, p netip.Prefix) Request {
	return addrRequest(unix.RTM_DELADDR, 0, ifindex, p)
}

func addrRequest(typ uint16, flags netlink.HeaderFlags, ifindex uint32, p netip.Prefix) Request {
	family := uint8(unix.AF_INET)
	if p.Addr().Is6() {
		family = unix.AF_INET6
	}
	ip := net.IP(p.Addr().AsSlice())
	am := rtnetlink.AddressMessage{
		Family:       family,
		PrefixLength: uint8(p.Bits()),
		Index:        ifindex,
		Attributes:   &rtnetlink.AddressAttributes{Address: ip, Local: ip},
	}
	b, err := am.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return Request{
		Name: fmt.Sprintf("%s %s dev %d", TypeName(typ), p, ifindex),
		Msg:  message(typ, flags, b),
	}
}
