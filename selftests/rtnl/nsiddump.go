// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"slices"

	"golang.org/x/sys/unix"
)

// NSIDs returns every id c's namespace has given to a peer (an RTM_GETNSID
// dump: rtnl_net_dumpid() walks the namespace's idr), in ascending order.
func (c *Conn) NSIDs() ([]int32, error) {
	msgs, err := c.Dump(Request{Name: "RTM_GETNSID dump", Msg: message(unix.RTM_GETNSID, 0, rtgenmsg)})
	if err != nil {
		return nil, err
	}
	ids := make([]int32, 0, len(msgs))
	for _, m := range msgs {
		id, err := NSIDOf(m)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}
