// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"math"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// maxLinks is the kernel's MAX_LINKS: netlink's table has this many
// protocols, 0 to 31.
const maxLinks = 32

// unknownProtocolRefused: socket(AF_NETLINK, SOCK_RAW, p) fails with
// EPROTONOSUPPORT for every p the kernel has no protocol for: outside the
// table (-1, MAX_LINKS, MAX_LINKS+1, a large number, INT_MIN), and
// NETLINK_UNUSED (1), a number no kernel registers. The refusal keeps a
// socket off every protocol's lists: netlink_create() clamps the number
// with array_index_nospec() right after its range check, so a socket
// that got past the check would be NETLINK_ROUTE's (0), and would be
// handed ROUTE notifications nobody subscribed it to. A NETLINK_ROUTE
// socket made the same way in the same namespace is the control: it is
// made, and its SO_PROTOCOL reads 0.
//
// Kernel: netlink_create(): `if (protocol < 0 || protocol >= MAX_LINKS)
// return -EPROTONOSUPPORT; protocol = array_index_nospec(protocol,
// MAX_LINKS);`, then `err = -EPROTONOSUPPORT` unless
// nl_table[protocol].registered (after request_module() where modules
// exist).
func unknownProtocolRefused(t selftests.T) {
	s := selftests.NewNS(t, "S")
	control, err := nlsock.Open(s.NS, unix.NETLINK_ROUTE, "route")
	if err != nil {
		t.Fatalf("the control: %v", err)
	}
	got, err := control.KernelProtocol()
	control.Close()
	if err != nil || got != unix.NETLINK_ROUTE {
		t.Fatalf("the control: SO_PROTOCOL of a NETLINK_ROUTE socket reads %d (%v), want 0", got, err)
	}
	for _, p := range []struct {
		proto int
		what  string
	}{
		{-1, "below the table"},
		{maxLinks, "MAX_LINKS, one past the table"},
		{maxLinks + 1, "past the table"},
		{1 << 20, "far past the table"},
		{math.MinInt32, "INT_MIN"},
		{unix.NETLINK_UNUSED, "NETLINK_UNUSED, in the table but never registered"},
	} {
		sock, err := nlsock.Open(s.NS, p.proto, "unknown")
		if err == nil {
			kp, kerr := sock.KernelProtocol()
			sock.Close()
			t.Errorf("socket(AF_NETLINK, SOCK_RAW, %d) (%s) in netns S: made a socket of protocol %d (%v); want EPROTONOSUPPORT", p.proto, p.what, kp, kerr)
			continue
		}
		if !errors.Is(err, unix.EPROTONOSUPPORT) {
			t.Errorf("socket(AF_NETLINK, SOCK_RAW, %d) (%s): %v; want EPROTONOSUPPORT", p.proto, p.what, err)
		}
	}
}

// unknownSocketTypeRefused: netlink has datagram sockets only:
// socket(AF_NETLINK, type, NETLINK_ROUTE) is made for SOCK_RAW and
// SOCK_DGRAM (the control: both made, both NETLINK_ROUTE) and fails with
// ESOCKTNOSUPPORT for SOCK_STREAM, SOCK_SEQPACKET and SOCK_RDM.
//
// Kernel: netlink_create(): `if (sock->type != SOCK_RAW && sock->type !=
// SOCK_DGRAM) return -ESOCKTNOSUPPORT;`.
func unknownSocketTypeRefused(t selftests.T) {
	s := selftests.NewNS(t, "S")
	for _, typ := range []struct {
		typ  int
		name string
	}{{unix.SOCK_RAW, "SOCK_RAW"}, {unix.SOCK_DGRAM, "SOCK_DGRAM"}} {
		sock, err := nlsock.OpenType(s.NS, typ.typ, unix.NETLINK_ROUTE, "control")
		if err != nil {
			t.Fatalf("the control, %s: %v", typ.name, err)
		}
		got, err := sock.KernelProtocol()
		sock.Close()
		if err != nil || got != unix.NETLINK_ROUTE {
			t.Errorf("the control, %s: SO_PROTOCOL reads %d (%v), want 0", typ.name, got, err)
		}
	}
	for _, typ := range []struct {
		typ  int
		name string
	}{{unix.SOCK_STREAM, "SOCK_STREAM"}, {unix.SOCK_SEQPACKET, "SOCK_SEQPACKET"}, {unix.SOCK_RDM, "SOCK_RDM"}} {
		sock, err := nlsock.OpenType(s.NS, typ.typ, unix.NETLINK_ROUTE, "stream")
		if err == nil {
			sock.Close()
			t.Errorf("socket(AF_NETLINK, %s, NETLINK_ROUTE) in netns S: made a socket; want ESOCKTNOSUPPORT", typ.name)
			continue
		}
		if !errors.Is(err, unix.ESOCKTNOSUPPORT) {
			t.Errorf("socket(AF_NETLINK, %s, NETLINK_ROUTE): %v; want ESOCKTNOSUPPORT", typ.name, err)
		}
	}
}
