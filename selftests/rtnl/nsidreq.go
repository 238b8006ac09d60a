// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// NSIDAttr is one attribute of an RTM_NEWNSID or RTM_GETNSID request: a
// way to name a peer namespace (NETNSA_PID, NETNSA_FD, NETNSA_NSID), an id
// to give, or the namespace to look in (NETNSA_TARGET_NSID).
type NSIDAttr struct {
	Type  uint16
	Value int32
}

// ByPID names the namespace of the task pid (a thread id will do).
func ByPID(pid int) NSIDAttr { return NSIDAttr{unix.NETNSA_PID, int32(pid)} }

// ByFD names the namespace an nsfs file descriptor refers to.
func ByFD(fd int) NSIDAttr { return NSIDAttr{unix.NETNSA_FD, int32(fd)} }

// WithNSID is NETNSA_NSID: the id to give (RTM_NEWNSID) or the id that
// names the peer (RTM_GETNSID).
func WithNSID(id int32) NSIDAttr { return NSIDAttr{unix.NETNSA_NSID, id} }

// InTarget is NETNSA_TARGET_NSID: look the peer up in the namespace the
// requester's namespace knows as id.
func InTarget(id int32) NSIDAttr { return NSIDAttr{unix.NETNSA_TARGET_NSID, id} }

func (a NSIDAttr) String() string {
	switch a.Type {
	case unix.NETNSA_NSID:
		return fmt.Sprintf("nsid %d", a.Value)
	case unix.NETNSA_PID:
		return fmt.Sprintf("pid %d", a.Value)
	case unix.NETNSA_FD:
		return fmt.Sprintf("fd %d", a.Value)
	case unix.NETNSA_TARGET_NSID:
		return fmt.Sprintf("target_nsid %d", a.Value)
	case unix.NETNSA_CURRENT_NSID:
		return fmt.Sprintf("current_nsid %d", a.Value)
	}
	return fmt.Sprintf("attr %d %d", a.Type, a.Value)
}

// NSIDRequest is an RTM_NEWNSID or RTM_GETNSID (typ) carrying attrs in
// that order, each 4 bytes: send it with Do, or Dump for an RTM_GETNSID
// dump.
func NSIDRequest(typ uint16, attrs ...NSIDAttr) Request {
	name := "RTM_GETNSID"
	if typ == unix.RTM_NEWNSID {
		name = "RTM_NEWNSID"
	}
	for i, a := range attrs {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		name += sep + a.String()
	}
	return Request{Name: name, Msg: message(typ, 0, rtgenmsg, encodeNSIDAttrs(attrs))}
}

func encodeNSIDAttrs(as []NSIDAttr) []byte {
	return attrs(func(ae *netlink.AttributeEncoder) {
		for _, a := range as {
			ae.Int32(a.Type, a.Value)
		}
	})
}

// NSIDAttrOffset is where NSIDRequest puts its i-th attribute, counted
// from the request's nlmsghdr: what NLMSGERR_ATTR_OFFS says when the
// kernel blames that attribute.
func NSIDAttrOffset(i int) uint32 { return uint32(unix.NLMSG_HDRLEN + len(rtgenmsg) + 8*i) }

// NSIDReply is an RTM_NEWNSID reply or dump entry taken apart.
type NSIDReply struct {
	Family  uint8 // rtgenmsg.rtgen_family
	NSID    int32 // NETNSA_NSID
	Current *int32
	// Attrs lists every attribute type in the message, in order.
	Attrs []uint16
}

func (r NSIDReply) String() string {
	s := fmt.Sprintf("family %d nsid %d", r.Family, r.NSID)
	if r.Current != nil {
		s += fmt.Sprintf(" current_nsid %d", *r.Current)
	}
	return s + fmt.Sprintf(" attrs %v", r.Attrs)
}

// ParseNSIDReply takes an RTM_NEWNSID message apart.
func ParseNSIDReply(m netlink.Message) (NSIDReply, error) {
	var r NSIDReply
	if m.Header.Type != unix.RTM_NEWNSID {
		return r, fmt.Errorf("message type %d, want RTM_NEWNSID", m.Header.Type)
	}
	if len(m.Data) < len(rtgenmsg) {
		return r, fmt.Errorf("RTM_NEWNSID of %d bytes, shorter than rtgenmsg", len(m.Data))
	}
	r.Family = m.Data[0]
	var bad error
	seen := false
	forAttrs(m.Data[len(rtgenmsg):], func(typ uint16, v []byte) {
		r.Attrs = append(r.Attrs, typ)
		if len(v) != 4 {
			bad = fmt.Errorf("attribute %d of %d bytes, want 4", typ, len(v))
			return
		}
		val := int32(binary.NativeEndian.Uint32(v))
		switch typ {
		case unix.NETNSA_NSID:
			r.NSID, seen = val, true
		case unix.NETNSA_CURRENT_NSID:
			r.Current = &val
		}
	})
	if bad != nil {
		return r, bad
	}
	if !seen {
		return r, fmt.Errorf("RTM_NEWNSID without NETNSA_NSID")
	}
	return r, nil
}
