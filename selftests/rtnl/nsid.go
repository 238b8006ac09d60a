// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// NotAssigned is the nsid of a peer that has no id (NETNSA_NSID_NOT_ASSIGNED).
const NotAssigned = -1

// rtgenmsg padded to 4 bytes, as RTM_*NSID expects.
var rtgenmsg = []byte{unix.AF_UNSPEC, 0, 0, 0}

// NewNSID gives the namespace peerFD refers to the id nsid in the
// namespace of the socket that sends the request (-1: lowest free id).
func NewNSID(peerFD int, nsid int32) Request {
	return NSIDRequest(unix.RTM_NEWNSID, WithNSID(nsid), ByFD(peerFD))
}

// getNSID asks for the id that the sender's namespace has for peerFD's.
func getNSID(peerFD int) Request { return NSIDRequest(unix.RTM_GETNSID, ByFD(peerFD)) }

// NSIDOf returns NETNSA_NSID from an RTM_NEWNSID/RTM_DELNSID message.
func NSIDOf(m netlink.Message) (int32, error) {
	if len(m.Data) < 4 {
		return 0, fmt.Errorf("short nsid message")
	}
	ad, err := netlink.NewAttributeDecoder(m.Data[4:])
	if err != nil {
		return 0, err
	}
	for ad.Next() {
		if ad.Type() == unix.NETNSA_NSID {
			return int32(binary.NativeEndian.Uint32(ad.Bytes())), nil
		}
	}
	return 0, fmt.Errorf("no NETNSA_NSID attribute")
}

// PeerID returns the id c's namespace has for the namespace peerFD refers
// to, or NotAssigned.
func (c *Conn) PeerID(peerFD int) (int32, error) {
	rep, err := c.Do(getNSID(peerFD))
	if err != nil {
		return 0, err
	}
	if len(rep.Msgs) != 1 {
		return 0, fmt.Errorf("RTM_GETNSID: %d replies", len(rep.Msgs))
	}
	return NSIDOf(rep.Msgs[0])
}
