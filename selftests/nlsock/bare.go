// SPDX-License-Identifier: GPL-2.0

package nlsock

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SetBlocking clears O_NONBLOCK (on) or sets it again (off). Open makes
// every socket non-blocking; a blocking one sleeps in recvfrom(2) until a
// datagram comes, and in sendto(2) while the receiver has no room, each
// at most for its timeout (SetReceiveTimeout, SetSendTimeout).
func (s *Socket) SetBlocking(on bool) error {
	return s.wrap(fmt.Sprintf("O_NONBLOCK %v", !on), unix.SetNonblock(s.fd, !on))
}

// SetReceiveTimeout sets SO_RCVTIMEO: a blocking receive gives up with
// EAGAIN after d (0: never).
func (s *Socket) SetReceiveTimeout(d time.Duration) error {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	return s.wrap(fmt.Sprintf("SO_RCVTIMEO %v", d), unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv))
}

// SetSendTimeout sets SO_SNDTIMEO: a blocking send gives up with EAGAIN
// after d (0: never).
func (s *Socket) SetSendTimeout(d time.Duration) error {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	return s.wrap(fmt.Sprintf("SO_SNDTIMEO %v", d), unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv))
}

// AttachFilter attaches the classic BPF program prog (SO_ATTACH_FILTER):
// every datagram for which it returns 0 is dropped before it is queued.
func (s *Socket) AttachFilter(prog []unix.SockFilter) error {
	if len(prog) == 0 {
		return fmt.Errorf("%s: SO_ATTACH_FILTER: an empty program", s)
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return s.wrap(fmt.Sprintf("SO_ATTACH_FILTER (%d instructions)", len(prog)),
		unix.SetsockoptSockFprog(s.fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fp))
}

// DetachFilter removes the filter AttachFilter attached (SO_DETACH_FILTER).
func (s *Socket) DetachFilter() error {
	return s.wrap("SO_DETACH_FILTER", unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_DETACH_FILTER, 0))
}

// Bare gives s's system calls bare, for a caller that counts or watches
// the call itself: each is that one system call on buffers the caller
// made beforehand, with nothing around it (no allocation, no formatting:
// fail-nth counts every injectable allocation of the thread), and returns
// its error as is. Everything else goes through Socket's methods, whose
// errors name the socket.
func (s *Socket) Bare() Bare { return Bare{fd: s.fd} }

// Bare is a socket's bare system calls (Socket.Bare).
type Bare struct{ fd int }

// Bind is bind(2) to portid pid (0: the kernel picks one) and the groups
// 1..32 bitmask groups.
func (b Bare) Bind(pid, groups uint32) error {
	sa := unix.RawSockaddrNetlink{Family: unix.AF_NETLINK, Pid: pid, Groups: groups}
	return syscallResult(unix.Syscall(unix.SYS_BIND, uintptr(b.fd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa)))
}

// Join is setsockopt(2) NETLINK_ADD_MEMBERSHIP of group.
func (b Bare) Join(group uint32) error {
	return setsockoptInt(b.fd, unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, int(group))
}

// SendTo is sendto(2) of p, a datagram marshalled beforehand, to the
// address to, with flags. On a blocking socket (SetBlocking) the thread
// sleeps in it, as SYS_SENDTO, while the receiver has no room.
func (b Bare) SendTo(p []byte, flags int, to *unix.SockaddrNetlink) error {
	return unix.Sendto(b.fd, p, flags, to)
}

// RecvFrom is recvfrom(2) into p with flags, and returns the bytes read.
// On a blocking socket the thread sleeps in it, as SYS_RECVFROM, until a
// datagram comes or the receive timeout passes.
func (b Bare) RecvFrom(p []byte, flags int) (int, error) {
	n, _, err := unix.Recvfrom(b.fd, p, flags)
	return n, err
}
