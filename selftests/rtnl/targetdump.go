// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// DumpLinksIn asks for every link of the namespace the requester's
// namespace knows as nsid (IFLA_TARGET_NETNSID); nsid < 0 leaves the
// attribute out, dumping the requester's own namespace. Send with Dump.
func DumpLinksIn(nsid int32) Request {
	ifinfo := make([]byte, unix.SizeofIfInfomsg)
	ifinfo[0] = unix.AF_UNSPEC
	var a []byte
	if nsid >= 0 {
		a = attrs(func(ae *netlink.AttributeEncoder) { ae.Int32(unix.IFLA_TARGET_NETNSID, nsid) })
	}
	return Request{
		Name: fmt.Sprintf("RTM_GETLINK dump target nsid %d", nsid),
		Msg:  message(unix.RTM_GETLINK, 0, ifinfo, a),
	}
}

// DumpAddrsIn asks for every address of family (AF_UNSPEC: all) of the
// namespace the requester's namespace knows as nsid (IFA_TARGET_NETNSID);
// nsid < 0 leaves the attribute out. The kernel reads the attribute only
// from a socket with NETLINK_GET_STRICT_CHK; without it, it dumps the
// requester's own namespace. Send with Dump.
func DumpAddrsIn(family uint8, nsid int32) Request {
	ifa := make([]byte, unix.SizeofIfAddrmsg)
	ifa[0] = family
	var a []byte
	if nsid >= 0 {
		a = attrs(func(ae *netlink.AttributeEncoder) { ae.Int32(unix.IFA_TARGET_NETNSID, nsid) })
	}
	return Request{
		Name: fmt.Sprintf("RTM_GETADDR dump family %d target nsid %d", family, nsid),
		Msg:  message(unix.RTM_GETADDR, 0, ifa, a),
	}
}
