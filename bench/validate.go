// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// validator checks one recipient's notifications of one batch without
// allocating: each must be the RTM_NEWROUTE of a request of the batch
// (sequence base+i, the sender's portid), for route i's prefix with the
// batch's nexthop id, and no route twice.
type validator struct {
	routes int
	base   uint32
	parity int
	dsts   [][4]byte
	seen   []bool
	portid uint32
	nsid   int32 // required NETLINK_LISTEN_ALL_NSID id, -1: none
	count  int
}

func (v *validator) datagram(b []byte) error {
	for len(b) > 0 {
		if len(b) < unix.NLMSG_HDRLEN {
			return fmt.Errorf("%d trailing bytes after notification %d", len(b), v.count)
		}
		l := int(binary.NativeEndian.Uint32(b))
		if l < unix.NLMSG_HDRLEN || l > len(b) {
			return fmt.Errorf("message length %d out of range (%d bytes)", l, len(b))
		}
		if err := v.message(b[:l]); err != nil {
			return err
		}
		v.count++
		b = b[min(len(b), nlsock.Align(l)):]
	}
	return nil
}

func (v *validator) message(m []byte) error {
	typ := binary.NativeEndian.Uint16(m[4:])
	seq := binary.NativeEndian.Uint32(m[8:])
	pid := binary.NativeEndian.Uint32(m[12:])
	if typ != unix.RTM_NEWROUTE {
		return fmt.Errorf("notification %d: type %d, want RTM_NEWROUTE (%d)", v.count, typ, unix.RTM_NEWROUTE)
	}
	i := int(seq - v.base)
	if seq < v.base || i >= v.routes {
		return fmt.Errorf("notification %d: seq %d outside the batch's %d..%d", v.count, seq, v.base, v.base+uint32(v.routes)-1)
	}
	if pid != v.portid {
		return fmt.Errorf("route %d: nlmsg_pid %d, want the sender's %d", i, pid, v.portid)
	}
	if v.seen[i] {
		return fmt.Errorf("route %d (seq %d): duplicate notification", i, seq)
	}
	v.seen[i] = true
	body := m[unix.NLMSG_HDRLEN:]
	if len(body) < unix.SizeofRtMsg {
		return fmt.Errorf("route %d: short rtmsg", i)
	}
	if body[0] != unix.AF_INET || body[1] != 24 {
		return fmt.Errorf("route %d: family %d dst_len %d, want AF_INET /24", i, body[0], body[1])
	}
	var dst []byte
	var nh uint32
	hasNH := false
	for a := body[unix.SizeofRtMsg:]; len(a) >= 4; {
		al := int(binary.NativeEndian.Uint16(a))
		at := binary.NativeEndian.Uint16(a[2:]) & nlaTypeMask
		if al < 4 || al > len(a) {
			return fmt.Errorf("route %d: attribute length %d out of range", i, al)
		}
		switch at {
		case unix.RTA_DST:
			dst = a[4:al]
		case rtnl.RTA_NH_ID:
			if al == 8 {
				nh, hasNH = binary.NativeEndian.Uint32(a[4:]), true
			}
		}
		a = a[min(len(a), nlsock.Align(al)):]
	}
	// v.dsts[i] is sliced in place: slicing a local copy would move
	// the copy to the heap on every call, not only on the error path.
	if len(dst) != 4 || [4]byte(dst) != v.dsts[i] {
		return fmt.Errorf("route %d (seq %d): RTA_DST %v, want %v", i, seq, dst, v.dsts[i][:])
	}
	if wantNH := nexthopFor(i, v.parity); !hasNH || nh != wantNH {
		return fmt.Errorf("route %d (seq %d): RTA_NH_ID %d (present %v), want %d", i, seq, nh, hasNH, wantNH)
	}
	return nil
}

// checkNSID checks the datagram's NETLINK_LISTEN_ALL_NSID control message.
// It walks the control buffer in place, as unix.ParseSocketControlMessage
// would but without its allocation: it runs once per notification.
func (v *validator) checkNSID(oob []byte) error {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < unix.CmsgLen(0) || l > len(oob) {
			return fmt.Errorf("notification %d: control message length %d out of range (%d bytes)", v.count, l, len(oob))
		}
		data := oob[unix.CmsgLen(0):l]
		if h.Level == unix.SOL_NETLINK && h.Type == unix.NETLINK_LISTEN_ALL_NSID && len(data) >= 4 {
			if got := int32(binary.NativeEndian.Uint32(data)); got != v.nsid {
				return fmt.Errorf("notification %d: nsid %d, want %d", v.count, got, v.nsid)
			}
			return nil
		}
		oob = oob[min(len(oob), unix.CmsgSpace(len(data))):]
	}
	return fmt.Errorf("notification %d: no nsid control message, want nsid %d", v.count, v.nsid)
}

// nlaTypeMask strips NLA_F_NESTED and NLA_F_NET_BYTEORDER from a type.
const nlaTypeMask = 0x3fff
