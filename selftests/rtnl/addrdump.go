// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// GetAddrs dumps the IPv4 addresses of the namespace the request names:
// the sender's own, or with target >= 0 (IFA_TARGET_NETNSID) the one that
// the sender's namespace has that id for. The kernel honours the attribute
// only on a socket with NETLINK_GET_STRICT_CHK (inet_dump_ifaddr() parses
// it in inet_valid_dump_ifaddr_req(), called only if cb->strict_check);
// without it, the attribute is not even looked at.
func GetAddrs(target *int32) Request {
	name := "RTM_GETADDR dump AF_INET"
	var at []byte
	if target != nil {
		name += fmt.Sprintf(" IFA_TARGET_NETNSID %d", *target)
		at = attrs(func(ae *netlink.AttributeEncoder) { ae.Int32(unix.IFA_TARGET_NETNSID, *target) })
	}
	// A zeroed ifaddrmsg: strict checking refuses a dump request with
	// prefixlen, flags or scope set.
	ifa := make([]byte, unix.SizeofIfAddrmsg)
	ifa[0] = unix.AF_INET
	return Request{Name: name, Msg: message(unix.RTM_GETADDR, 0, ifa, at)}
}

// Attr is one netlink attribute as the kernel sent it.
type Attr struct {
	Type  uint16
	Value []byte
}

// Addr is an RTM_NEWADDR message taken apart: struct ifaddrmsg and every
// attribute in the order the kernel put them.
type Addr struct {
	Family, PrefixLen, Flags, Scope uint8
	Index                           uint32
	Attrs                           []Attr
}

// ParseAddr takes an RTM_NEWADDR message apart.
func ParseAddr(m netlink.Message) (Addr, error) {
	if m.Header.Type != unix.RTM_NEWADDR || len(m.Data) < unix.SizeofIfAddrmsg {
		return Addr{}, fmt.Errorf("not an RTM_NEWADDR: type %d, %d bytes", m.Header.Type, len(m.Data))
	}
	b := m.Data
	a := Addr{Family: b[0], PrefixLen: b[1], Flags: b[2], Scope: b[3], Index: binary.NativeEndian.Uint32(b[4:])}
	ad, err := netlink.NewAttributeDecoder(b[unix.SizeofIfAddrmsg:])
	if err != nil {
		return Addr{}, err
	}
	for ad.Next() {
		a.Attrs = append(a.Attrs, Attr{Type: ad.Type(), Value: bytes.Clone(ad.Bytes())})
	}
	return a, ad.Err()
}

// TargetNSID returns the IFA_TARGET_NETNSID attributes of a: none in a
// dump of the sender's own namespace, exactly one in a targeted one.
func (a Addr) TargetNSID() []int32 {
	var ids []int32
	for _, at := range a.Attrs {
		if at.Type == unix.IFA_TARGET_NETNSID && len(at.Value) == 4 {
			ids = append(ids, int32(binary.NativeEndian.Uint32(at.Value)))
		}
	}
	return ids
}

// Without returns a without the attributes of type typ.
func (a Addr) Without(typ uint16) Addr {
	out := a
	out.Attrs = nil
	for _, at := range a.Attrs {
		if at.Type != typ {
			out.Attrs = append(out.Attrs, at)
		}
	}
	return out
}

// Equal reports whether a and b are the same field by field: the header
// and every attribute, type and bytes, in order.
func (a Addr) Equal(b Addr) bool {
	if a.Family != b.Family || a.PrefixLen != b.PrefixLen || a.Flags != b.Flags ||
		a.Scope != b.Scope || a.Index != b.Index || len(a.Attrs) != len(b.Attrs) {
		return false
	}
	for i := range a.Attrs {
		if a.Attrs[i].Type != b.Attrs[i].Type || !bytes.Equal(a.Attrs[i].Value, b.Attrs[i].Value) {
			return false
		}
	}
	return true
}

var addrAttrNames = map[uint16]string{
	unix.IFA_ADDRESS: "address", unix.IFA_LOCAL: "local", unix.IFA_LABEL: "label",
	unix.IFA_BROADCAST: "broadcast", unix.IFA_CACHEINFO: "cacheinfo", unix.IFA_FLAGS: "flags",
	unix.IFA_TARGET_NETNSID: "target_netnsid", unix.IFA_RT_PRIORITY: "rt_priority", ifaProto: "proto",
}

// String shows every field, the attributes in the kernel's order.
func (a Addr) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "family %d plen %d flags %#x scope %d dev %d", a.Family, a.PrefixLen, a.Flags, a.Scope, a.Index)
	for _, at := range a.Attrs {
		name, ok := addrAttrNames[at.Type]
		if !ok {
			name = fmt.Sprintf("attr%d", at.Type)
		}
		switch {
		case at.Type == unix.IFA_LABEL:
			fmt.Fprintf(&b, " %s=%q", name, trimNUL(at.Value))
		case len(at.Value) == 4 && (at.Type == unix.IFA_ADDRESS || at.Type == unix.IFA_LOCAL || at.Type == unix.IFA_BROADCAST):
			fmt.Fprintf(&b, " %s=%s", name, netip.AddrFrom4([4]byte(at.Value)))
		case len(at.Value) == 4 && at.Type == unix.IFA_TARGET_NETNSID:
			fmt.Fprintf(&b, " %s=%d", name, int32(binary.NativeEndian.Uint32(at.Value)))
		default:
			fmt.Fprintf(&b, " %s=%x", name, at.Value)
		}
	}
	return b.String()
}

// ifaProto is IFA_PROTO (Linux 5.18), missing from x/sys/unix.
const ifaProto = 11
