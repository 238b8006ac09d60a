// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// socketCloseReleasesAccounting: the namespace counts its open netlink
// sockets (the NETLINK row's "sockets" column of /proc/net/protocols read
// in it): every socket opened adds one, whatever its protocol, binding or
// groups, and closing it takes that one away again, subscribed or not. The
// case opens five (bound with no group, by bind bitmask, joined to groups
// below and above 32, NETLINK_USERSOCK, never bound), checks +5, closes two
// (+3) and the rest (+0), exactly. Nothing else opens or closes a socket in
// its namespace meanwhile.
//
// The count rises in socket() itself. The last close releases the socket
// before close() returns, unless a child another case is forking holds a
// copy of the descriptor until its exec (Go forks without vfork for a
// CLONE_NEWUSER child): then the release follows that exec, so a count
// still too high is polled until closeReleaseDeadline; one too low fails
// at once.
//
// Kernel: netlink_create() -> sock_prot_inuse_add(net, &netlink_proto, 1);
// netlink_release() -> sock_prot_inuse_add(sock_net(sk), &netlink_proto,
// -1); proto_seq_printf() prints sock_prot_inuse_get(seq_file_net(seq),
// proto), the reader's namespace's count.
func socketCloseReleasesAccounting(t selftests.T) {
	s := selftests.NewNS(t, "S")
	before := netlinkInUse(t, s)

	unbound, err := nlsock.Open(s.NS, unix.NETLINK_ROUTE, "unbound")
	if err != nil {
		t.Fatalf("%v", err)
	}
	socks := []*selftests.Sock{
		s.Socket("plain"),
		s.Socket("bitmask", selftests.BindGroups(nlsock.GroupMask(unix.RTNLGRP_IPV4_IFADDR))),
		s.Socket("joined", selftests.Join(unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_STATS)),
		s.Socket("usersock", selftests.Proto(unix.NETLINK_USERSOCK)),
		s.Adopt(unbound),
	}
	if got, want := netlinkInUse(t, s), before+len(socks); got != want {
		t.Fatalf("netns %s: /proc/net/protocols NETLINK sockets %d after opening %d sockets, want %d (%d before)",
			s.Name, got, len(socks), want, before)
	}

	closeAll(t, socks[:2]...)
	expectInUseAfterClose(t, s, before+len(socks)-2, "closing plain and bitmask")
	closeAll(t, socks[2:]...)
	expectInUseAfterClose(t, s, before, "closing every socket the case opened")
}

// closeReleaseDeadline bounds the wait for a release that a concurrent
// fork deferred to its child's exec: milliseconds, more under emulation.
// Only a failing case waits this long.
const closeReleaseDeadline = 10 * time.Second

func closeAll(t selftests.T, socks ...*selftests.Sock) {
	t.Helper()
	for _, s := range socks {
		if err := s.Close(); err != nil {
			t.Fatalf("%v", err)
		}
	}
}

// expectInUseAfterClose checks that s's count of netlink sockets is want
// after the case closed some (after says which): at once, or, while it is
// higher, within closeReleaseDeadline.
func expectInUseAfterClose(t selftests.T, s *selftests.NS, want int, after string) {
	t.Helper()
	end := time.Now().Add(closeReleaseDeadline)
	for {
		got := netlinkInUse(t, s)
		switch {
		case got == want:
			return
		case got < want:
			t.Fatalf("netns %s: /proc/net/protocols NETLINK sockets %d after %s, want %d: fewer than are open", s.Name, got, after, want)
		case time.Now().After(end):
			t.Fatalf("netns %s: /proc/net/protocols NETLINK sockets %d after %s, want %d: still %d after %v",
				s.Name, got, after, want, got-want, closeReleaseDeadline)
		}
		time.Sleep(10 * time.Millisecond) // polling an asynchronous release, bounded by end
	}
}

// netlinkInUse reads s's count of netlink sockets; the case SKIPs when
// /proc/net/protocols cannot be read there.
func netlinkInUse(t selftests.T, s *selftests.NS) int {
	t.Helper()
	n, err := nlsock.InUse(s.NS)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		t.Skipf("the netlink socket count cannot be read: %v", err)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	return n
}
