// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Traffic control constants and layouts that x/sys/unix does not have
// (include/uapi/linux/pkt_sched.h, pkt_cls.h, tc_act/tc_mirred.h).
const (
	tcHIngress      = 0xFFFFFFF1 // TC_H_INGRESS: the parent of the ingress qdisc
	tcIngressHandle = 0xFFFF0000 // "ffff:", the ingress qdisc's handle and its filters' parent

	tcaU32Sel = 5 // TCA_U32_SEL
	tcaU32Act = 7 // TCA_U32_ACT
	tcU32Term = 1 // TC_U32_TERMINAL

	tcaActKind    = 1 // TCA_ACT_KIND
	tcaActOptions = 2 // TCA_ACT_OPTIONS
	tcaActIndex   = 3 // TCA_ACT_INDEX

	tcaMirredParms = 2 // TCA_MIRRED_PARMS
	tcaEgressRedir = 1 // TCA_EGRESS_REDIR
	tcActStolen    = 4 // TC_ACT_STOLEN
)

// tcmsg is struct tcmsg (20 bytes): family, 3 bytes of padding, ifindex,
// handle, parent, info.
func tcmsg(ifindex, handle, parent, info uint32) []byte {
	b := make([]byte, 20)
	b[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint32(b[4:], ifindex)
	binary.NativeEndian.PutUint32(b[8:], handle)
	binary.NativeEndian.PutUint32(b[12:], parent)
	binary.NativeEndian.PutUint32(b[16:], info)
	return b
}

// tcamsg is struct tcamsg: a family byte padded to 4 bytes.
var tcamsg = []byte{unix.AF_UNSPEC, 0, 0, 0}

// NewIngress adds the ingress qdisc to interface ifindex
// (tc qdisc add dev X ingress).
func NewIngress(ifindex uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_NEWQDISC ingress dev %d", ifindex),
		Msg: message(unix.RTM_NEWQDISC, netlink.Create|netlink.Excl,
			tcmsg(ifindex, tcIngressHandle, tcHIngress, 0),
			attrs(func(ae *netlink.AttributeEncoder) { ae.String(unix.TCA_KIND, "ingress") })),
	}
}

// DelIngress removes the ingress qdisc of interface ifindex, and with it
// every filter attached to it.
func DelIngress(ifindex uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_DELQDISC ingress dev %d", ifindex),
		Msg: message(unix.RTM_DELQDISC, 0,
			tcmsg(ifindex, tcIngressHandle, tcHIngress, 0),
			attrs(func(ae *netlink.AttributeEncoder) { ae.String(unix.TCA_KIND, "ingress") })),
	}
}

// filterInfo is tcm_info of an IPv4 filter: priority and protocol
// (network byte order).
func filterInfo(prio uint16) uint32 {
	return uint32(prio)<<16 | uint32(htons(unix.ETH_P_IP))
}

func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// NewU32Mirred attaches to the ingress qdisc of ifindex a u32 filter that
// matches every IPv4 packet and redirects it to egress of interface to
// (tc filter add dev X ingress protocol ip prio P u32 match u32 0 0
// action mirred egress redirect dev Y).
func NewU32Mirred(ifindex uint32, prio uint16, to uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_NEWTFILTER u32 mirred dev %d prio %d", ifindex, prio),
		Msg: message(unix.RTM_NEWTFILTER, netlink.Create|netlink.Excl,
			tcmsg(ifindex, 0, tcIngressHandle, filterInfo(prio)),
			attrs(func(ae *netlink.AttributeEncoder) {
				ae.String(unix.TCA_KIND, "u32")
				ae.Nested(unix.TCA_OPTIONS, func(ae *netlink.AttributeEncoder) error {
					ae.Bytes(tcaU32Sel, u32MatchAll())
					ae.Nested(tcaU32Act, func(ae *netlink.AttributeEncoder) error {
						ae.Nested(1, mirredAction(0, to))
						return nil
					})
					return nil
				})
			})),
	}
}

// DelU32 removes the u32 filter of priority prio from the ingress qdisc of
// ifindex (tc filter del dev X ingress protocol ip prio P u32).
func DelU32(ifindex uint32, prio uint16) Request {
	return Request{
		Name: fmt.Sprintf("RTM_DELTFILTER u32 dev %d prio %d", ifindex, prio),
		Msg: message(unix.RTM_DELTFILTER, 0,
			tcmsg(ifindex, 0, tcIngressHandle, filterInfo(prio)),
			attrs(func(ae *netlink.AttributeEncoder) { ae.String(unix.TCA_KIND, "u32") })),
	}
}

// u32MatchAll is struct tc_u32_sel (16 bytes: flags, offshift, nkeys, pad,
// offmask, off, offoff, hoff, hmask) with one struct tc_u32_key (mask,
// val, off, offmask) of mask 0: "match u32 0 0".
func u32MatchAll() []byte {
	b := make([]byte, 16+16)
	b[0] = tcU32Term
	b[2] = 1 // nkeys
	return b
}

// mirredAction encodes one action of kind mirred redirecting to egress of
// interface to; index 0 lets the kernel pick the action index.
func mirredAction(index, to uint32) func(*netlink.AttributeEncoder) error {
	return func(ae *netlink.AttributeEncoder) error {
		ae.String(tcaActKind, "mirred")
		ae.Nested(tcaActOptions, func(ae *netlink.AttributeEncoder) error {
			// struct tc_mirred: tc_gen (index, capab, action, refcnt,
			// bindcnt), eaction, ifindex.
			p := make([]byte, 28)
			binary.NativeEndian.PutUint32(p[0:], index)
			binary.NativeEndian.PutUint32(p[8:], tcActStolen)
			binary.NativeEndian.PutUint32(p[20:], tcaEgressRedir)
			binary.NativeEndian.PutUint32(p[24:], to)
			ae.Bytes(tcaMirredParms, p)
			return nil
		})
		return nil
	}
}

// NewMirredAction creates the standalone action mirred with the given
// index (tc actions add action mirred egress redirect dev Y index N).
func NewMirredAction(index, to uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_NEWACTION mirred index %d", index),
		Msg: message(unix.RTM_NEWACTION, netlink.Create|netlink.Excl, tcamsg,
			attrs(func(ae *netlink.AttributeEncoder) {
				ae.Nested(unix.TCA_ROOT_TAB, func(ae *netlink.AttributeEncoder) error {
					ae.Nested(1, mirredAction(index, to))
					return nil
				})
			})),
	}
}

// GetMirredAction asks for the mirred action with the given index; the
// reply is one RTM_NEWACTION, or ENOENT if there is none.
func GetMirredAction(index uint32) Request {
	return Request{
		Name: fmt.Sprintf("RTM_GETACTION mirred index %d", index),
		Msg: message(unix.RTM_GETACTION, 0, tcamsg,
			attrs(func(ae *netlink.AttributeEncoder) {
				ae.Nested(unix.TCA_ROOT_TAB, func(ae *netlink.AttributeEncoder) error {
					ae.Nested(1, func(ae *netlink.AttributeEncoder) error {
						ae.String(tcaActKind, "mirred")
						ae.Uint32(tcaActIndex, index)
						return nil
					})
					return nil
				})
			})),
	}
}
