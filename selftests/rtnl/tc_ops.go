// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// More tc requests: filter replace and delete by handle, explicit chains,
// deleting a standalone action, and the dumps that show what exists.

const (
	tcaU32ClassID = 1 // TCA_U32_CLASSID

	// U32FirstKey is the handle the kernel gives the first key of a u32
	// filter added without a handle: hash table 800:, bucket 0, key 0x800
	// (u32_init() makes the root table 0x80000000, gen_new_kid() starts
	// at 0x800).
	U32FirstKey = 0x80000800
)

// u32Options is TCA_OPTIONS of a u32 filter that matches everything,
// with a classid if classid is not 0.
func u32Options(classid uint32) func(*netlink.AttributeEncoder) error {
	return func(ae *netlink.AttributeEncoder) error {
		if classid != 0 {
			ae.Uint32(tcaU32ClassID, classid)
		}
		ae.Bytes(tcaU32Sel, u32MatchAll())
		return nil
	}
}

// ReplaceU32 replaces the u32 key handle of the filter with priority prio
// on the ingress qdisc of ifindex by one with the classid classid
// (tc filter replace dev X ingress protocol ip prio P handle H u32 match
// u32 0 0 classid C).
func ReplaceU32(ifindex uint32, prio uint16, handle, classid uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_NEWTFILTER replace u32 dev %d prio %d handle %#x classid %#x", ifindex, prio, handle, classid),
		Msg: message(unix.RTM_NEWTFILTER, netlink.Create|netlink.Replace,
			tcmsg(ifindex, handle, tcIngressHandle, filterInfo(prio)),
			attrs(func(ae *netlink.AttributeEncoder) {
				ae.String(unix.TCA_KIND, "u32")
				ae.Nested(unix.TCA_OPTIONS, u32Options(classid))
			})),
	}
}

// DelU32Key removes the key handle from the u32 filter of priority prio on
// the ingress qdisc of ifindex (tc filter del dev X ingress protocol ip
// prio P handle H u32). Removing the last key removes the filter and, if
// it was the chain's last, the chain.
func DelU32Key(ifindex uint32, prio uint16, handle uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_DELTFILTER u32 dev %d prio %d handle %#x", ifindex, prio, handle),
		Msg: message(unix.RTM_DELTFILTER, 0,
			tcmsg(ifindex, handle, tcIngressHandle, filterInfo(prio)),
			attrs(func(ae *netlink.AttributeEncoder) { ae.String(unix.TCA_KIND, "u32") })),
	}
}

// GetFilters dumps the filters of every chain on the ingress qdisc of
// ifindex (tc filter show dev X ingress).
func GetFilters(ifindex uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_GETTFILTER dump dev %d ingress", ifindex),
		Msg:  message(unix.RTM_GETTFILTER, 0, tcmsg(ifindex, 0, tcIngressHandle, 0)),
	}
}

// chainRequest is an RTM_*CHAIN request for chain index on the ingress
// qdisc of ifindex.
func chainRequest(typ uint16, flags netlink.HeaderFlags, name string, ifindex, index uint32) Request {
	return Request{
		Name: fmt.Sprintf("%s dev %d ingress chain %d", name, ifindex, index),
		Msg: message(typ, flags, tcmsg(ifindex, 0, tcIngressHandle, 0),
			attrs(func(ae *netlink.AttributeEncoder) { ae.Uint32(unix.TCA_CHAIN, index) })),
	}
}

// NewChain creates the empty chain index on the ingress qdisc of ifindex
// (tc chain add dev X ingress chain N).
func NewChain(ifindex, index uint32) Request {
	return chainRequest(unix.RTM_NEWCHAIN, netlink.Create|netlink.Excl, "RTM_NEWCHAIN", ifindex, index)
}

// DelChain deletes chain index of the ingress qdisc of ifindex with its
// filters (tc chain del dev X ingress chain N).
func DelChain(ifindex, index uint32) Request {
	return chainRequest(unix.RTM_DELCHAIN, 0, "RTM_DELCHAIN", ifindex, index)
}

// GetChains dumps the chains of the ingress qdisc of ifindex
// (tc chain show dev X ingress).
func GetChains(ifindex uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_GETCHAIN dump dev %d ingress", ifindex),
		Msg:  message(unix.RTM_GETCHAIN, 0, tcmsg(ifindex, 0, tcIngressHandle, 0)),
	}
}

// DelMirredAction deletes the standalone mirred action with the given
// index (tc actions del action mirred index N).
func DelMirredAction(index uint32) Request {
	r := GetMirredAction(index)
	r.Name = fmt.Sprintf("RTM_DELACTION mirred index %d", index)
	r.Msg.Header.Type = unix.RTM_DELACTION
	return r
}

// TCObject is a qdisc, filter or chain message taken apart: struct tcmsg,
// the kind, the chain and the kind's options.
type TCObject struct {
	Ifindex              int32
	Handle, Parent, Info uint32
	Kind                 string
	Chain                *uint32
	Options              []Attr
}

// ParseTC takes a tcmsg-based message (RTM_NEWQDISC, RTM_NEWTFILTER,
// RTM_NEWCHAIN and their DEL twins) apart.
func ParseTC(m netlink.Message) (TCObject, error) {
	b := m.Data
	if len(b) < 20 {
		return TCObject{}, fmt.Errorf("tc message of %d bytes", len(b))
	}
	o := TCObject{
		Ifindex: int32(binary.NativeEndian.Uint32(b[4:])),
		Handle:  binary.NativeEndian.Uint32(b[8:]),
		Parent:  binary.NativeEndian.Uint32(b[12:]),
		Info:    binary.NativeEndian.Uint32(b[16:]),
	}
	forAttrs(b[20:], func(typ uint16, v []byte) {
		switch {
		case typ == unix.TCA_KIND:
			o.Kind = string(trimNUL(v))
		case typ == unix.TCA_CHAIN && len(v) == 4:
			c := binary.NativeEndian.Uint32(v)
			o.Chain = &c
		case typ == unix.TCA_OPTIONS:
			forAttrs(v, func(t uint16, ov []byte) { o.Options = append(o.Options, Attr{Type: t, Value: bytes.Clone(ov)}) })
		}
	})
	return o, nil
}

// U32ClassID returns TCA_U32_CLASSID of a u32 key, or 0 if it has none.
func (o TCObject) U32ClassID() uint32 {
	for _, a := range o.Options {
		if a.Type == tcaU32ClassID && len(a.Value) == 4 {
			return binary.NativeEndian.Uint32(a.Value)
		}
	}
	return 0
}

func (o TCObject) String() string {
	s := fmt.Sprintf("dev %d handle %#x parent %#x info %#x %s", o.Ifindex, o.Handle, o.Parent, o.Info, o.Kind)
	if o.Chain != nil {
		s += fmt.Sprintf(" chain %d", *o.Chain)
	}
	if c := o.U32ClassID(); c != 0 {
		s += fmt.Sprintf(" classid %#x", c)
	}
	return s
}
