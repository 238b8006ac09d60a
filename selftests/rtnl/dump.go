// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"encoding/binary"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// DoneError turns the NLMSG_DONE that ends a dump into nil or an *Error. A
// dump callback that fails (a strict dump request it rejects, say) does not
// get an NLMSG_ERROR: netlink_dump_done() puts its negative errno in the
// NLMSG_DONE payload and, with NETLINK_EXT_ACK, the extended ACK text as
// NLMSGERR_ATTR_MSG right after it, flagged NLM_F_ACK_TLVS; later kernels
// (6.12 does, 6.1 does not) add the bad attribute's offset too.
func DoneError(name string, m netlink.Message) error {
	if len(m.Data) < 4 {
		return nil
	}
	code := int32(binary.NativeEndian.Uint32(m.Data))
	if code == 0 {
		return nil
	}
	e := &Error{Request: name, Errno: unix.Errno(-code)}
	if m.Header.Flags&netlink.AcknowledgeTLVs != 0 {
		e.readTLVs(m.Data[4:])
	}
	return e
}

func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}
