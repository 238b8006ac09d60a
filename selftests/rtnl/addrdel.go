// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/jsimonetti/rtnetlink/v2"
	"golang.org/x/sys/unix"
)

// DelAddr removes the IPv4 or IPv6 address p from interface ifindex.
func DelAddr(ifindex uint32, p netip.Prefix) Request {
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
		Name: fmt.Sprintf("RTM_DELADDR %s dev %d", p, ifindex),
		Msg:  message(unix.RTM_DELADDR, 0, b),
	}
}
