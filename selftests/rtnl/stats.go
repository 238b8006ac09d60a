// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// SetL3Stats switches the L3 offload statistics of interface ifindex on or
// off (RTM_SETSTATS with IFLA_STATS_SET_OFFLOAD_XSTATS_L3_STATS, like `ip
// stats set dev DEV l3_stats on|off`). Each successful switch notifies one
// RTM_NEWSTATS on RTNLGRP_STATS (rtnl_offload_xstats_notify). Needs
// CAP_NET_ADMIN and Linux 5.19 or later.
func SetL3Stats(ifindex uint32, on bool) Request {
	var v uint8
	if on {
		v = 1
	}
	return Request{
		Name: fmt.Sprintf("RTM_SETSTATS ifindex %d l3_stats %v", ifindex, on),
		Msg: message(unix.RTM_SETSTATS, 0, ifStatsMsg(ifindex), attrs(func(ae *netlink.AttributeEncoder) {
			ae.Uint8(unix.IFLA_STATS_SET_OFFLOAD_XSTATS_L3_STATS, v)
		})),
	}
}

// ifStatsMsg is struct if_stats_msg {family, pad1; u16 pad2; u32 ifindex;
// u32 filter_mask}; RTM_SETSTATS needs no filter.
func ifStatsMsg(ifindex uint32) []byte {
	b := []byte{unix.AF_UNSPEC, 0, 0, 0}
	b = binary.NativeEndian.AppendUint32(b, ifindex)
	return binary.NativeEndian.AppendUint32(b, 0)
}
