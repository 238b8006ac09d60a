// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// bringLoopbackUp sets IFF_UP on lo: nothing else in the guest would, and
// the suites bind and route over it.
func bringLoopbackUp() error {
	req, err := linkUpRequest("lo")
	if err != nil {
		return err
	}
	conn, err := netlink.Dial(unix.NETLINK_ROUTE, nil)
	if err != nil {
		return fmt.Errorf("bring lo up: open rtnetlink socket: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Execute(req); err != nil {
		return fmt.Errorf("bring lo up: RTM_NEWLINK: %w", err)
	}
	return nil
}

// linkUpRequest builds an RTM_NEWLINK that sets IFF_UP on the named link. It
// names the link with IFLA_IFNAME and leaves ifi_index 0, so no index lookup
// is needed first.
func linkUpRequest(name string) (netlink.Message, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.IFLA_IFNAME, name)
	attrs, err := ae.Encode()
	if err != nil {
		return netlink.Message{}, fmt.Errorf("encode IFLA_IFNAME %q: %w", name, err)
	}
	// struct ifinfomsg: family, pad, type (u16), index (s32), flags, change.
	ifinfo := make([]byte, unix.SizeofIfInfomsg)
	ifinfo[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint32(ifinfo[8:12], unix.IFF_UP)
	binary.NativeEndian.PutUint32(ifinfo[12:16], unix.IFF_UP)
	return netlink.Message{
		Header: netlink.Header{
			Type:  unix.RTM_NEWLINK,
			Flags: netlink.Request | netlink.Acknowledge,
		},
		Data: append(ifinfo, attrs...),
	}, nil
}
