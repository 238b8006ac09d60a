// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"fmt"

	"github.com/jsimonetti/rtnetlink/v2"
	"github.com/jsimonetti/rtnetlink/v2/driver"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// LoopbackIndex is lo's ifindex in every network namespace.
const LoopbackIndex = 1

func linkMessage(typ uint16, flags netlink.HeaderFlags, lm rtnetlink.LinkMessage) netlink.Message {
	b, err := lm.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return message(typ, flags, b)
}

// SetUp brings interface ifindex up (or down).
func SetUp(ifindex uint32, up bool) Request {
	var flags uint32
	if up {
		flags = unix.IFF_UP
	}
	return Request{
		Name: fmt.Sprintf("RTM_NEWLINK ifindex %d up=%v", ifindex, up),
		Msg: linkMessage(unix.RTM_NEWLINK, 0, rtnetlink.LinkMessage{
			Family: unix.AF_UNSPEC, Index: ifindex, Flags: flags, Change: unix.IFF_UP,
		}),
	}
}

// NewVeth creates a veth pair name/peer. The peer is created in the
// namespace peerNSFD refers to, or beside name when peerNSFD is negative.
func NewVeth(name, peer string, peerNSFD int) Request {
	pa := &rtnetlink.LinkAttributes{Name: peer}
	if peerNSFD >= 0 {
		pa.NetNS = rtnetlink.NetNSForFD(uint32(peerNSFD))
	}
	return Request{
		Name: fmt.Sprintf("RTM_NEWLINK veth %s peer %s", name, peer),
		Msg: linkMessage(unix.RTM_NEWLINK, netlink.Create|netlink.Excl, rtnetlink.LinkMessage{
			Family: unix.AF_UNSPEC,
			Attributes: &rtnetlink.LinkAttributes{
				Name: name,
				Info: &rtnetlink.LinkInfo{Kind: "veth", Data: &driver.Veth{
					PeerInfo: &rtnetlink.LinkMessage{Family: unix.AF_UNSPEC, Attributes: pa},
				}},
			},
		}),
	}
}

// MoveLink moves interface ifindex into the namespace nsFD refers to
// (RTM_NEWLINK with IFLA_NET_NS_FD).
func MoveLink(ifindex uint32, nsFD int) Request {
	return Request{
		Name: fmt.Sprintf("RTM_NEWLINK ifindex %d netns fd %d", ifindex, nsFD),
		Msg: linkMessage(unix.RTM_NEWLINK, 0, rtnetlink.LinkMessage{
			Family: unix.AF_UNSPEC, Index: ifindex,
			Attributes: &rtnetlink.LinkAttributes{NetNS: rtnetlink.NetNSForFD(uint32(nsFD))},
		}),
	}
}

// GetLink asks for the interface called name; the reply is one RTM_NEWLINK.
func GetLink(name string) Request {
	return Request{
		Name: "RTM_GETLINK " + name,
		Msg: linkMessage(unix.RTM_GETLINK, 0, rtnetlink.LinkMessage{
			Family: unix.AF_UNSPEC, Attributes: &rtnetlink.LinkAttributes{Name: name},
		}),
	}
}

// LinkIndex returns the ifindex in an RTM_NEWLINK reply.
func LinkIndex(m netlink.Message) (uint32, error) {
	var lm rtnetlink.LinkMessage
	if err := lm.UnmarshalBinary(m.Data); err != nil {
		return 0, err
	}
	return lm.Index, nil
}

// NewMacvlan creates a macvlan called name on the interface lower (its
// IFLA_LINK), in bridge mode. Its link netns (rtnl_link_ops->get_link_net)
// is lower's namespace, wherever the macvlan itself moves.
func NewMacvlan(name string, lower uint32) Request {
	mode := driver.MacvlanModeBridge
	return Request{
		Name: fmt.Sprintf("RTM_NEWLINK macvlan %s on ifindex %d", name, lower),
		Msg: linkMessage(unix.RTM_NEWLINK, netlink.Create|netlink.Excl, rtnetlink.LinkMessage{
			Family: unix.AF_UNSPEC,
			Attributes: &rtnetlink.LinkAttributes{
				Name: name,
				Type: lower,
				Info: &rtnetlink.LinkInfo{Kind: "macvlan", Data: &driver.Macvlan{Mode: &mode}},
			},
		}),
	}
}
