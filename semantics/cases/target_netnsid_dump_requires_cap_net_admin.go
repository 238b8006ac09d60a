// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// targetNetnsidDumpRequiresCapNetAdmin: a targeted dump needs
// CAP_NET_ADMIN over the target's user namespace in the credentials of
// the socket's opener. U is a namespace owned by a child user namespace;
// `u` was opened there by that user namespace's root. U maps S (owned by
// the initial user namespace) as 3 and itself as 2.
//
//   - u's strict dump with IFA_TARGET_NETNSID=3 is refused: EACCES with
//     the extended ACK "ipv4: Invalid target network namespace id", no
//     address.
//   - u's strict dump with IFA_TARGET_NETNSID=2 (U itself, where u's
//     opener is root) works: U's addresses, each tagged 2, field by field
//     U's own dump. So the refusal is about the capability, not the
//     socket or the id.
//   - A socket opened in U by this process (root of the initial user
//     namespace) gets S's addresses through the same id 3.
//   - Nothing is multicast: subscribers in S and U hold nothing.
//
// Kernel: rtnl_get_net_ns_capable(): if (!sk_ns_capable(sk, net->user_ns,
// CAP_NET_ADMIN)) { put_net(net); return ERR_PTR(-EACCES); };
// sk_ns_capable() checks sk->sk_socket->file->f_cred (file_ns_capable()).
func targetNetnsidDumpRequiresCapNetAdmin(t selftests.T) {
	s := selftests.NewNS(t, "S")
	userNS, u, err := selftests.NewUserNS(t, "U", "u", unix.NETLINK_ROUTE)
	if err != nil {
		t.Skipf("needs a socket opened by root of a child user namespace: %v", err)
	}
	const sID, selfID = 3, 2
	userNS.Map(s, sID)
	userNS.Map(userNS, selfID)
	sAddr, uAddr := netip.MustParsePrefix("198.51.100.20/32"), netip.MustParsePrefix("203.0.113.20/32")
	s.Do(rtnl.NewAddr(rtnl.LoopbackIndex, sAddr))
	userNS.Do(rtnl.NewAddr(rtnl.LoopbackIndex, uAddr))

	if err := u.Bind(0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	for _, opt := range []int{unix.NETLINK_GET_STRICT_CHK, unix.NETLINK_EXT_ACK} {
		if err := u.SetOption(opt, true); err != nil {
			t.Fatalf("%v", err)
		}
	}
	uConn := &rtnl.Conn{Sock: u.Socket}

	sub := s.Socket("s", addrGroups)
	up := userNS.Socket("up", addrGroups)

	inS := mustDumpAddrs(t, dumpConn(t, s, true), nil)
	expectAddrSet(t, "dump in S", inS, loAddr, sAddr.String()+" dev 1")
	inU := mustDumpAddrs(t, dumpConn(t, userNS, true), nil)
	expectAddrSet(t, "dump in U", inU, loAddr, uAddr.String()+" dev 1")

	got, err := dumpAddrs(t, uConn, nsidPtr(sID))
	expectDumpError(t, fmt.Sprintf("%s: strict dump with IFA_TARGET_NETNSID %d (S)", u, sID), got, err, unix.EACCES, targetInvalidMsg)
	got = mustDumpAddrs(t, uConn, nsidPtr(selfID))
	expectSameAddrs(t, fmt.Sprintf("%s: strict dump with IFA_TARGET_NETNSID %d (U itself)", u, selfID), got, inU, nsidPtr(selfID))
	got = mustDumpAddrs(t, dumpConn(t, userNS, true), nsidPtr(sID))
	expectSameAddrs(t, fmt.Sprintf("our socket in U: strict dump with IFA_TARGET_NETNSID %d (S)", sID), got, inS, nsidPtr(sID))

	sub.Expect()
	up.Expect()
}
