// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// UDP is a non-blocking IPv4 UDP socket bound in a namespace of a case,
// for a case that needs traffic (a neighbour resolved by ARP, say). It is
// closed when the case ends.
type UDP struct {
	fd   int
	ns   string
	addr netip.AddrPort
}

// BindUDP binds a UDP socket to addr, an IPv4 address and port, in n, and
// fails the case if it cannot.
func (n *NS) BindUDP(addr netip.AddrPort) *UDP {
	n.t.Helper()
	u := &UDP{fd: -1, ns: n.Name, addr: addr}
	err := n.NS.Do(func() error {
		if !addr.Addr().Is4() {
			return fmt.Errorf("%s is not an IPv4 address", addr.Addr())
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			return fmt.Errorf("UDP socket: %w", err)
		}
		u.fd = fd
		return unix.Bind(fd, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()})
	})
	if u.fd >= 0 {
		n.t.Cleanup(func() { unix.Close(u.fd) })
	}
	if err != nil {
		n.t.Fatalf("netns %s: bind a UDP socket to %s: %v", n.Name, addr, err)
	}
	return u
}

// String names the socket for diagnostics: `UDP socket on 192.0.2.1:9 in
// netns P`.
func (u *UDP) String() string { return fmt.Sprintf("UDP socket on %s in netns %s", u.addr, u.ns) }

// Recv reads one queued datagram into p without blocking and returns its
// length; unix.EAGAIN when nothing is queued.
func (u *UDP) Recv(p []byte) (int, error) {
	n, _, err := unix.Recvfrom(u.fd, p, 0)
	return n, err
}

// SendUDP sends payload in one datagram to dst, an IPv4 address and port,
// from a UDP socket of its own in n, closed before it returns.
func (n *NS) SendUDP(dst netip.AddrPort, payload []byte) error {
	return n.NS.Do(func() error {
		if !dst.Addr().Is4() {
			return fmt.Errorf("netns %s: send to %s: not an IPv4 address", n.Name, dst.Addr())
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("netns %s: UDP socket: %w", n.Name, err)
		}
		defer unix.Close(fd)
		if err := unix.Sendto(fd, payload, 0, &unix.SockaddrInet4{Port: int(dst.Port()), Addr: dst.Addr().As4()}); err != nil {
			return fmt.Errorf("netns %s: send a datagram to %s: %w", n.Name, dst, err)
		}
		return nil
	})
}
