// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"fmt"

	"github.com/jsimonetti/rtnetlink/v2"
	"github.com/jsimonetti/rtnetlink/v2/driver"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// NewVethAt creates a veth pair name/peer beside each other with the
// given ifindexes (ifi_index of the request and of the peer's ifinfomsg;
// rtnl_create_link() takes them as they are, register_netdevice() fails
// with EBUSY if one is taken). It lets a case occupy an ifindex on
// purpose, e.g. the one a device moved in later would keep.
func NewVethAt(name string, index uint32, peer string, peerIndex uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_NEWLINK veth %s ifindex %d peer %s ifindex %d", name, index, peer, peerIndex),
		Msg: linkMessage(unix.RTM_NEWLINK, netlink.Create|netlink.Excl, rtnetlink.LinkMessage{
			Family: unix.AF_UNSPEC,
			Index:  index,
			Attributes: &rtnetlink.LinkAttributes{
				Name: name,
				Info: &rtnetlink.LinkInfo{Kind: "veth", Data: &driver.Veth{
					PeerInfo: &rtnetlink.LinkMessage{Family: unix.AF_UNSPEC, Index: peerIndex,
						Attributes: &rtnetlink.LinkAttributes{Name: peer}},
				}},
			},
		}),
	}
}
