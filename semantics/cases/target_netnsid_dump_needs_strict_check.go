// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"fmt"
	"net/netip"
	"slices"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// targetNetnsidDumpNeedsStrictCheck: what the kernel does with
// IFA_TARGET_NETNSID when the request is not the good case. O maps S as 4
// and nothing else (its RTM_GETNSID dump lists exactly 4), so 5 is an id
// O has not assigned; S and O have different addresses.
//
//   - Without NETLINK_GET_STRICT_CHK the attribute is not parsed at all:
//     the dump with IFA_TARGET_NETNSID=4 returns O's own addresses, field
//     by field what a plain dump in O returns, none tagged with
//     IFA_TARGET_NETNSID, and none of S's. The same for the unassigned id
//     5 and for -1: no error either. This is what trips monitors up: a
//     lax socket silently gets the wrong namespace.
//   - With strict checking, the unassigned 5 and the negative -1 fail the
//     dump with EINVAL and the extended ACK "ipv4: Invalid target network
//     namespace id", carried by the NLMSG_DONE (the dump callback fails
//     on its first pass), with no address before it; the same socket's
//     dump with 4 then returns S's addresses (the socket is fine).
//   - None of these dumps multicasts anything (sentinels in S and O).
//
// Kernel: inet_dump_ifaddr(): if (cb->strict_check) { err =
// inet_valid_dump_ifaddr_req(...); if (err < 0) goto put_tgt_net; }, so a
// lax request keeps fillargs.netnsid = -1 and tgt_net = sock_net(sk);
// rtnl_get_net_ns_capable() -> get_net_ns_by_id(), which returns NULL for
// a negative or unknown id -> ERR_PTR(-EINVAL); netlink_dump_done() puts
// the errno and the message into NLMSG_DONE.
func targetNetnsidDumpNeedsStrictCheck(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	const id, unassigned = 4, 5
	o.Map(s, id)
	sAddr, oAddr := netip.MustParsePrefix("198.51.100.10/32"), netip.MustParsePrefix("203.0.113.10/32")
	s.Do(rtnl.NewAddr(rtnl.LoopbackIndex, sAddr))
	o.Do(rtnl.NewAddr(rtnl.LoopbackIndex, oAddr))
	if ids, err := o.Ctl.NSIDs(); err != nil || !slices.Equal(ids, []int32{id}) {
		t.Fatalf("netns O: ids %v (%v), want exactly [%d]", ids, err, id)
	}

	sub := s.Socket("s", addrGroups)
	op := o.Socket("op", addrGroups)
	oa := o.Socket("oa", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), addrGroups)

	inO := mustDumpAddrs(t, dumpConn(t, o, true), nil)
	expectAddrSet(t, "dump in O", inO, loAddr, oAddr.String()+" dev 1")
	inS := mustDumpAddrs(t, dumpConn(t, s, true), nil)
	expectAddrSet(t, "dump in S", inS, loAddr, sAddr.String()+" dev 1")

	lax := dumpConn(t, o, false)
	for _, target := range []int32{id, unassigned, -1} {
		got := mustDumpAddrs(t, lax, nsidPtr(target))
		expectSameAddrs(t, fmt.Sprintf("dump from O without NETLINK_GET_STRICT_CHK, IFA_TARGET_NETNSID %d", target), got, inO, nil)
	}

	strict := dumpConn(t, o, true)
	for _, target := range []int32{unassigned, -1} {
		got, err := dumpAddrs(t, strict, nsidPtr(target))
		expectDumpError(t, fmt.Sprintf("strict dump from O with IFA_TARGET_NETNSID %d", target), got, err, unix.EINVAL, targetInvalidMsg)
	}
	got := mustDumpAddrs(t, strict, nsidPtr(id))
	expectSameAddrs(t, fmt.Sprintf("strict dump from O with IFA_TARGET_NETNSID %d", id), got, inS, nsidPtr(id))

	sub.Expect()
	op.Expect()
	oa.Expect()
}
