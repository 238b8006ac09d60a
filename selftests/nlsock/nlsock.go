// SPDX-License-Identifier: GPL-2.0

// Package nlsock is a raw netlink socket for tests that must see exactly what
// the kernel delivers: every datagram with its source address, its
// NETLINK_PKTINFO group, its NETLINK_LISTEN_ALL_NSID nsid and its
// SO_PASSCRED credentials, and every receive error (ENOBUFS) in the order it happens.
//
// mdlayher/netlink drops control messages and retries around errors, which is
// right for applications and wrong for a test of multicast delivery; its
// Message and attribute codecs are used for everything else.
package nlsock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
)

// Socket is a non-blocking netlink socket created in a given namespace.
type Socket struct {
	Name  string // for diagnostics, e.g. "f"
	NS    string // name of the namespace it was created in
	Proto int

	fd       int
	pktinfo  bool
	allNSID  bool
	passCred bool
	buf      []byte // receive buffer, reused: Recv copies out what it read
	oob      []byte // control buffer, reused likewise
	// name is msg_name, with room past the struct sockaddr_nl to see
	// that the kernel writes nothing there.
	name [unix.SizeofSockaddrNetlink + 4]byte
}

// Open creates a netlink socket of protocol proto inside ns. The socket
// belongs to ns for its whole life, whatever thread uses it later.
func Open(ns *netns.NS, proto int, name string) (*Socket, error) {
	return OpenType(ns, unix.SOCK_RAW, proto, name)
}

// OpenType creates a netlink socket of type typ (SOCK_RAW and SOCK_DGRAM
// are netlink's; any other is for the refusal it must get) and protocol
// proto inside ns.
func OpenType(ns *netns.NS, typ, proto int, name string) (*Socket, error) {
	var s *Socket
	err := ns.Do(func() error {
		var err error
		s, err = openHere(typ, proto, name, ns.Name)
		return err
	})
	return s, err
}

// OpenHere creates the socket in the calling thread's namespace (nsName
// says which, for diagnostics) with the calling thread's credentials,
// which the socket keeps as its file credentials for good. Call it inside
// netns.NS.Do, after changing what the socket should inherit.
func OpenHere(proto int, name, nsName string) (*Socket, error) {
	return openHere(unix.SOCK_RAW, proto, name, nsName)
}

func openHere(typ, proto int, name, nsName string) (*Socket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, typ|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, proto)
	if err != nil {
		return nil, fmt.Errorf("socket %q in netns %s: %w", name, nsName, err)
	}
	return &Socket{Name: name, NS: nsName, Proto: proto, fd: fd}, nil
}

// FromFD wraps a netlink socket received from another process.
func FromFD(fd int, proto int, name, ns string) *Socket {
	return &Socket{Name: name, NS: ns, Proto: proto, fd: fd}
}

// FD returns the file descriptor.
func (s *Socket) FD() int { return s.fd }

// String names the socket for diagnostics: `socket "f" in netns F`.
func (s *Socket) String() string { return fmt.Sprintf("socket %q in netns %s", s.Name, s.NS) }

func (s *Socket) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s: %w", s, op, err)
}

// Close closes the socket; it leaves every group it was in.
func (s *Socket) Close() error {
	if s.fd < 0 {
		return nil
	}
	err := unix.Close(s.fd)
	s.fd = -1
	return s.wrap("close", err)
}

// Bind binds to portid pid (0: let the kernel pick one) and sets the
// socket's groups 1..32 to the bitmask groups.
func (s *Socket) Bind(pid, groups uint32) error {
	sa := unix.RawSockaddrNetlink{Family: unix.AF_NETLINK, Pid: pid, Groups: groups}
	return s.wrap(fmt.Sprintf("bind(pid %d, groups %#x)", pid, groups),
		syscallResult(unix.Syscall(unix.SYS_BIND, uintptr(s.fd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))))
}

// Address returns getsockname(): the portid and the groups 1..32 bitmask.
func (s *Socket) Address() (pid, groups uint32, err error) {
	sa, err := unix.Getsockname(s.fd)
	if err != nil {
		return 0, 0, s.wrap("getsockname", err)
	}
	nl, ok := sa.(*unix.SockaddrNetlink)
	if !ok {
		return 0, 0, fmt.Errorf("%s: getsockname returned %T", s, sa)
	}
	return nl.Pid, nl.Groups, nil
}

// Portid returns the socket's port id (0 if it was never bound).
func (s *Socket) Portid() uint32 {
	pid, _, _ := s.Address()
	return pid
}

// Join adds the socket to group with NETLINK_ADD_MEMBERSHIP (any group, also
// above 32).
func (s *Socket) Join(group uint32) error {
	return s.wrap(fmt.Sprintf("NETLINK_ADD_MEMBERSHIP %d", group),
		setsockoptInt(s.fd, unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, int(group)))
}

// Leave drops group with NETLINK_DROP_MEMBERSHIP.
func (s *Socket) Leave(group uint32) error {
	return s.wrap(fmt.Sprintf("NETLINK_DROP_MEMBERSHIP %d", group),
		setsockoptInt(s.fd, unix.SOL_NETLINK, unix.NETLINK_DROP_MEMBERSHIP, int(group)))
}

// Memberships returns the groups the socket is in, from
// NETLINK_LIST_MEMBERSHIPS, in ascending order.
func (s *Socket) Memberships() ([]uint32, error) {
	buf, n, err := s.listMemberships(64)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		// A buffer of exactly that size gets the same words.
		exact, m, err := s.listMemberships(n)
		if err != nil {
			return nil, err
		}
		if m != n || !bytes.Equal(exact, buf[:n]) {
			return nil, fmt.Errorf("%s: NETLINK_LIST_MEMBERSHIPS into %d bytes: %d bytes, % x; into %d: %d bytes, % x",
				s, n, m, exact, len(buf), n, buf[:n])
		}
	}
	var groups []uint32
	for w := 0; w+4 <= n; w += 4 {
		word := binary.NativeEndian.Uint32(buf[w:])
		for bit := 0; bit < 32; bit++ {
			if word&(1<<bit) != 0 {
				groups = append(groups, uint32(w*8+bit+1))
			}
		}
	}
	return groups, nil
}

// SetOption sets a SOL_NETLINK flag option (NETLINK_PKTINFO,
// NETLINK_LISTEN_ALL_NSID, NETLINK_NO_ENOBUFS, NETLINK_BROADCAST_ERROR,
// NETLINK_EXT_ACK, NETLINK_GET_STRICT_CHK, NETLINK_CAP_ACK).
func (s *Socket) SetOption(opt int, on bool) error {
	v := flagValue(on)
	err := setsockoptInt(s.fd, unix.SOL_NETLINK, opt, v)
	if err == nil {
		switch opt {
		case unix.NETLINK_PKTINFO:
			s.pktinfo = on
		case unix.NETLINK_LISTEN_ALL_NSID:
			s.allNSID = on
		}
	}
	return s.wrap(fmt.Sprintf("setsockopt(%s, %d)", OptionName(opt), v), err)
}

// Option reads a SOL_NETLINK flag option with getsockopt.
func (s *Socket) Option(opt int) (int, error) {
	op := fmt.Sprintf("getsockopt(%s)", OptionName(opt))
	buf := make([]byte, 4)
	n, err := getsockopt(s.fd, unix.SOL_NETLINK, opt, buf)
	if err != nil {
		return 0, s.wrap(op, err)
	}
	if n != len(buf) {
		return 0, fmt.Errorf("%s: %s: optlen %d, want %d (an int)", s, op, n, len(buf))
	}
	return int(int32(binary.NativeEndian.Uint32(buf))), nil
}

// KernelProtocol reads the protocol the kernel gave the socket
// (SOL_SOCKET SO_PROTOCOL), which is not always the one asked for.
func (s *Socket) KernelProtocol() (int, error) {
	return s.socketInt(unix.SO_PROTOCOL, "SO_PROTOCOL")
}

// socketInt reads the SOL_SOCKET option opt, an int.
func (s *Socket) socketInt(opt int, name string) (int, error) {
	buf := make([]byte, 4)
	n, err := getsockopt(s.fd, unix.SOL_SOCKET, opt, buf)
	if err != nil {
		return 0, s.wrap("getsockopt("+name+")", err)
	}
	if n != len(buf) {
		return 0, fmt.Errorf("%s: getsockopt(%s): optlen %d, want %d (an int)", s, name, n, len(buf))
	}
	return int(int32(binary.NativeEndian.Uint32(buf))), nil
}

// PktInfo reports whether NETLINK_PKTINFO was enabled through SetOption.
func (s *Socket) PktInfo() bool { return s.pktinfo }

// AllNSID reports whether NETLINK_LISTEN_ALL_NSID was enabled through SetOption.
func (s *Socket) AllNSID() bool { return s.allNSID }

// listMemberships is one getsockopt(NETLINK_LIST_MEMBERSHIPS) into size
// bytes, filled with a canary first: the kernel writes the words that fit
// and says how many bytes all groups take, and a byte changed past that
// is an error.
func (s *Socket) listMemberships(size int) (buf []byte, n int, err error) {
	const canary = 0xa5
	buf = bytes.Repeat([]byte{canary}, size)
	n, err = getsockopt(s.fd, unix.SOL_NETLINK, unix.NETLINK_LIST_MEMBERSHIPS, buf)
	if err != nil {
		return nil, 0, s.wrap(fmt.Sprintf("NETLINK_LIST_MEMBERSHIPS into %d bytes", size), err)
	}
	if n > size {
		return nil, 0, fmt.Errorf("%s: NETLINK_LIST_MEMBERSHIPS needs %d bytes, more than %d", s, n, size)
	}
	for i := n; i < size; i++ {
		if buf[i] != canary {
			return nil, 0, fmt.Errorf("%s: NETLINK_LIST_MEMBERSHIPS said %d bytes but wrote byte %d too (% x)", s, n, i, buf[n:i+1])
		}
	}
	return buf, n, nil
}

// MembershipsSize is getsockopt(NETLINK_LIST_MEMBERSHIPS) with optlen 0:
// the bytes all the socket's groups take, which the kernel reports even
// when it can write none of them.
func (s *Socket) MembershipsSize() (int, error) {
	n, err := getsockopt(s.fd, unix.SOL_NETLINK, unix.NETLINK_LIST_MEMBERSHIPS, nil)
	return n, s.wrap("NETLINK_LIST_MEMBERSHIPS with optlen 0", err)
}

// ListMembershipsAt is getsockopt(NETLINK_LIST_MEMBERSHIPS) into size
// bytes at address optval, which may be one the process cannot write (for
// the EFAULT it must give): the length the kernel reported, or its error
// bare.
func (s *Socket) ListMembershipsAt(optval uintptr, size int) (int, error) {
	return getsockoptAt(s.fd, unix.SOL_NETLINK, unix.NETLINK_LIST_MEMBERSHIPS, optval, size)
}

// OptionAt is getsockopt(SOL_NETLINK, opt) with optval and optlen the
// addresses given, either of which may be one the process cannot write
// (for the EFAULT it must give): the call's error bare.
func (s *Socket) OptionAt(opt int, optval, optlen uintptr) error {
	return getsockoptRaw(s.fd, unix.SOL_NETLINK, opt, optval, optlen)
}

// SetOptionAt is setsockopt(SOL_NETLINK, opt) with optval the address
// given, which may be one the process cannot read (for the EFAULT it must
// give), and optlen bytes: the call's error bare.
func (s *Socket) SetOptionAt(opt int, optval uintptr, optlen int) error {
	return setsockoptRaw(s.fd, unix.SOL_NETLINK, opt, optval, uintptr(optlen))
}

// OptionInto is getsockopt(SOL_NETLINK, opt) into buf, exactly as long as
// given: the length the kernel reported, or its error bare.
func (s *Socket) OptionInto(opt int, buf []byte) (int, error) {
	return getsockopt(s.fd, unix.SOL_NETLINK, opt, buf)
}

// flagValue is a boolean socket option's int value.
func flagValue(on bool) int {
	if on {
		return 1
	}
	return 0
}

// SetPassCred sets or clears SO_PASSCRED: with it every datagram read
// comes with an SCM_CREDENTIALS control message.
func (s *Socket) SetPassCred(on bool) error {
	v := flagValue(on)
	err := unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_PASSCRED, v)
	if err == nil {
		s.passCred = on
	}
	return s.wrap(fmt.Sprintf("setsockopt(SO_PASSCRED, %d)", v), err)
}

// PassCred reports whether SO_PASSCRED was enabled through SetPassCred.
func (s *Socket) PassCred() bool { return s.passCred }

// SetReceiveBuffer sets SO_RCVBUF: the kernel caps it at net.core.rmem_max
// and raises it to its minimum, so 1 gives the smallest buffer there is.
func (s *Socket) SetReceiveBuffer(bytes int) error {
	return s.wrap(fmt.Sprintf("SO_RCVBUF %d", bytes), unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, bytes))
}

// ForceReceiveBuffer sets SO_RCVBUFFORCE, which ignores rmem_max and needs
// CAP_NET_ADMIN in the initial user namespace (capable(), not ns_capable()).
func (s *Socket) ForceReceiveBuffer(bytes int) error {
	return s.wrap(fmt.Sprintf("SO_RCVBUFFORCE %d", bytes), unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bytes))
}

// ReceiveMemory returns what SO_MEMINFO reports of the receive side: the
// bytes the queued skbs charge (sk_rmem_alloc, their truesize) and the
// receive buffer they are held against (sk_rcvbuf).
func (s *Socket) ReceiveMemory() (rmem, rcvbuf uint32, err error) {
	buf := make([]byte, 4*unix.SK_MEMINFO_VARS)
	n, err := getsockopt(s.fd, unix.SOL_SOCKET, unix.SO_MEMINFO, buf)
	if err != nil {
		return 0, 0, s.wrap("getsockopt(SO_MEMINFO)", err)
	}
	if n < 4*(unix.SK_MEMINFO_RCVBUF+1) {
		return 0, 0, fmt.Errorf("%s: getsockopt(SO_MEMINFO): %d bytes", s, n)
	}
	return binary.NativeEndian.Uint32(buf[4*unix.SK_MEMINFO_RMEM_ALLOC:]), binary.NativeEndian.Uint32(buf[4*unix.SK_MEMINFO_RCVBUF:]), nil
}

// SetSendBuffer sets SO_SNDBUF: the kernel doubles it, caps it at
// net.core.wmem_max and raises it to its minimum.
func (s *Socket) SetSendBuffer(bytes int) error {
	return s.wrap(fmt.Sprintf("SO_SNDBUF %d", bytes), unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, bytes))
}

// SendBuffer reads the socket's send buffer size, sk_sndbuf
// (getsockopt SO_SNDBUF).
func (s *Socket) SendBuffer() (int, error) {
	return s.socketInt(unix.SO_SNDBUF, "SO_SNDBUF")
}

// SendTo sends one netlink message to portid pid and group bitmask groups
// (the kernel multicasts to the lowest group in the mask only). The header's
// Length is filled in; Sequence and PID are sent as given.
func (s *Socket) SendTo(m netlink.Message, pid, groups uint32) error {
	m.Header.Length = uint32(Align(unix.NLMSG_HDRLEN + len(m.Data)))
	b, err := m.MarshalBinary()
	if err != nil {
		return s.wrap("marshal", err)
	}
	to := &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Pid: pid, Groups: groups}
	return s.wrap(fmt.Sprintf("sendto(pid %d, groups %#x)", pid, groups), unix.Sendto(s.fd, b, unix.MSG_DONTWAIT, to))
}

// GroupMask is groups as a bind(2) or msg_name nl_groups bitmask. Only
// groups 1..32 have a bit; 0 and the groups above 32 add nothing, which is
// also what msg_name shows for a delivery on them (netlink_group_mask()).
func GroupMask(groups ...uint32) uint32 {
	var mask uint32
	for _, g := range groups {
		if g >= 1 && g <= 32 {
			mask |= 1 << (g - 1)
		}
	}
	return mask
}

// Datagram is one recvmsg() result.
type Datagram struct {
	Msgs     []netlink.Message
	FromPid  uint32      // msg_name nl_pid: 0 for the kernel
	FromMask uint32      // msg_name nl_groups: the group as a bitmask, 0 above 32
	NSID     *int32      // NETLINK_LISTEN_ALL_NSID cmsg, if present
	Group    *uint32     // NETLINK_PKTINFO cmsg, if present
	Creds    *unix.Ucred // SCM_CREDENTIALS cmsg (SO_PASSCRED), if present
}

// ErrEmpty is returned by Recv when nothing is queued.
var ErrEmpty = errors.New("receive queue empty")

// Recv reads one datagram without blocking (RecvPayload) and parses its
// netlink messages. It returns ErrEmpty when the queue is empty and the
// socket error (e.g. unix.ENOBUFS after an overrun) when the kernel reports
// one.
func (s *Socket) Recv() (Datagram, error) {
	payload, d, err := s.RecvPayload()
	if err != nil {
		return Datagram{}, err
	}
	if d.Msgs, err = ParseMessages(payload); err != nil {
		return Datagram{}, s.wrap("parse", err)
	}
	return d, nil
}

// RecvPayload reads one datagram without blocking: its sender's address
// and control messages checked, its bytes unparsed (d has no Msgs), for a
// protocol whose datagrams are not netlink messages too:
// NETLINK_KOBJECT_UEVENT's "ACTION@DEVPATH\0KEY=VALUE\0..." text. A
// truncated datagram or control message is an error: the test would
// otherwise judge a partial transcript.
func (s *Socket) RecvPayload() (payload []byte, d Datagram, err error) {
	n, oob, from, err := s.recvmsg(0)
	switch {
	case errors.Is(err, unix.EAGAIN):
		return nil, Datagram{}, ErrEmpty
	case err != nil:
		return nil, Datagram{}, err
	}
	d.FromPid, d.FromMask = from.Pid, from.Groups
	if err := d.parseControl(oob); err != nil {
		return nil, Datagram{}, s.wrap("control messages", err)
	}
	return bytes.Clone(s.buf[:n]), d, nil
}

// nameFill is what msg_name holds before every read: netlink_recvmsg()
// writes each field of the struct sockaddr_nl, nl_pad too, so none of it
// may show through, and it writes nothing past the struct.
const nameFill = 0xa5

// senderAddr checks the sender's address recvmsg() wrote into name (the
// msg_name buffer, nameFill before the call) with length namelen
// (msg_namelen after it): a whole struct sockaddr_nl, AF_NETLINK, nl_pad
// 0, and the rest of the buffer untouched.
func senderAddr(name []byte, namelen int) (unix.RawSockaddrNetlink, error) {
	if namelen != unix.SizeofSockaddrNetlink {
		return unix.RawSockaddrNetlink{}, fmt.Errorf("msg_namelen %d, want %d (struct sockaddr_nl)", namelen, unix.SizeofSockaddrNetlink)
	}
	nl := unix.RawSockaddrNetlink{
		Family: binary.NativeEndian.Uint16(name[0:]),
		Pad:    binary.NativeEndian.Uint16(name[2:]),
		Pid:    binary.NativeEndian.Uint32(name[4:]),
		Groups: binary.NativeEndian.Uint32(name[8:]),
	}
	switch {
	case nl.Family != unix.AF_NETLINK:
		return unix.RawSockaddrNetlink{}, fmt.Errorf("nl_family %d, want AF_NETLINK (%d)", nl.Family, unix.AF_NETLINK)
	case nl.Pad != 0:
		return unix.RawSockaddrNetlink{}, fmt.Errorf("nl_pad %#x, want 0 (%#x: never written) (nl_pid %d, nl_groups %#x)", nl.Pad, uint16(nameFill)<<8|nameFill, nl.Pid, nl.Groups)
	}
	for i, b := range name[namelen:] {
		if b != nameFill {
			return unix.RawSockaddrNetlink{}, fmt.Errorf("byte %d of msg_name, past the %d-byte address, was written (%#x)", namelen+i, namelen, b)
		}
	}
	return nl, nil
}

// recvmsg reads (or with MSG_PEEK, peeks at) one datagram into the
// socket's reused buffers without blocking and returns its length and
// control data, which stay valid until the next call. A truncated datagram
// or control message is an error; unix.EAGAIN is returned bare.
func (s *Socket) recvmsg(flags int) (n int, oob []byte, from unix.RawSockaddrNetlink, err error) {
	if s.buf == nil {
		s.buf = make([]byte, 64<<10) // NLMSG_GOODSIZE is at most 8 KiB
		// Room for both 4-byte SOL_NETLINK cmsgs, SCM_CREDENTIALS
		// and one more of the larger: anything unexpected shows up
		// as such, not as MSG_CTRUNC.
		s.oob = make([]byte, 2*unix.CmsgSpace(4)+2*unix.CmsgSpace(unix.SizeofUcred))
	}
	op := "recvmsg"
	if flags&unix.MSG_PEEK != 0 {
		op = "recvmsg(MSG_PEEK)"
	}
	for i := range s.name {
		s.name[i] = nameFill
	}
	iov := unix.Iovec{Base: &s.buf[0]}
	iov.SetLen(len(s.buf))
	msg := unix.Msghdr{Name: &s.name[0], Namelen: uint32(len(s.name)), Iov: &iov, Control: &s.oob[0]}
	msg.SetIovlen(1)
	msg.SetControllen(len(s.oob))
	r, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&msg)), uintptr(flags|unix.MSG_DONTWAIT))
	n = int(r)
	switch {
	case errno == unix.EAGAIN:
		return 0, nil, from, errno
	case errno != 0:
		return 0, nil, from, s.wrap(op, errno)
	case msg.Flags&unix.MSG_TRUNC != 0:
		return 0, nil, from, fmt.Errorf("%s: %s: datagram truncated (MSG_TRUNC, %d bytes read)", s, op, n)
	case msg.Flags&unix.MSG_CTRUNC != 0:
		return 0, nil, from, fmt.Errorf("%s: %s: control data truncated (MSG_CTRUNC)", s, op)
	}
	from, err = senderAddr(s.name[:], int(msg.Namelen))
	if err != nil {
		return 0, nil, from, s.wrap(op+": msg_name", err)
	}
	return n, s.oob[:msg.Controllen], from, nil
}

// RecvInto is one recvmsg() of the datagram at the head of the queue into
// p, exactly as long as given (empty: a zero-length iovec), with flags
// (MSG_PEEK, MSG_TRUNC) and MSG_DONTWAIT, and no control buffer. It returns
// what recvmsg returned and its msg_flags, judging neither: it is for a
// test of truncation itself. Recv is the reader that refuses truncation.
// unix.EAGAIN is returned bare.
func (s *Socket) RecvInto(p []byte, flags int) (n, msgFlags int, err error) {
	n, _, msgFlags, _, err = unix.Recvmsg(s.fd, p, nil, flags|unix.MSG_DONTWAIT)
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		err = s.wrap(fmt.Sprintf("recvmsg(%d bytes, flags %#x)", len(p), flags), err)
	}
	return n, msgFlags, err
}

// parseControl fills in d's group, nsid and credentials from the control
// messages. netlink_recvmsg() writes each at most once per datagram, so a
// second one of any kind is an error (it would otherwise overwrite the
// first and hide a kernel that reports a datagram twice), as is anything
// else.
func (d *Datagram) parseControl(oob []byte) error {
	cmsgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return err
	}
	for _, c := range cmsgs {
		if c.Header.Level == unix.SOL_SOCKET && c.Header.Type == unix.SCM_CREDENTIALS {
			cr, err := unix.ParseUnixCredentials(&c)
			if err != nil {
				return fmt.Errorf("SCM_CREDENTIALS: %w", err)
			}
			if d.Creds != nil {
				return fmt.Errorf("two SCM_CREDENTIALS control messages on one datagram (%+v and %+v)", *d.Creds, *cr)
			}
			d.Creds = cr
			continue
		}
		if c.Header.Level != unix.SOL_NETLINK || len(c.Data) != 4 {
			return fmt.Errorf("unexpected control message level %d type %d len %d", c.Header.Level, c.Header.Type, len(c.Data))
		}
		v := binary.NativeEndian.Uint32(c.Data)
		switch c.Header.Type {
		case unix.NETLINK_PKTINFO:
			if d.Group != nil {
				return fmt.Errorf("two NETLINK_PKTINFO control messages on one datagram (groups %d and %d)", *d.Group, v)
			}
			d.Group = &v
		case unix.NETLINK_LISTEN_ALL_NSID:
			id := int32(v)
			if d.NSID != nil {
				return fmt.Errorf("two NETLINK_LISTEN_ALL_NSID control messages on one datagram (nsids %d and %d)", *d.NSID, id)
			}
			d.NSID = &id
		default:
			return fmt.Errorf("unexpected SOL_NETLINK control message type %d", c.Header.Type)
		}
	}
	return nil
}

// ParseMessages splits a datagram into netlink messages.
func ParseMessages(b []byte) ([]netlink.Message, error) {
	var msgs []netlink.Message
	for len(b) > 0 {
		if len(b) < unix.NLMSG_HDRLEN {
			return nil, fmt.Errorf("%d trailing bytes", len(b))
		}
		l := int(binary.NativeEndian.Uint32(b))
		if l < unix.NLMSG_HDRLEN || l > len(b) {
			return nil, fmt.Errorf("message length %d out of range (%d bytes left)", l, len(b))
		}
		m := netlink.Message{
			Header: netlink.Header{
				Length:   uint32(l),
				Type:     netlink.HeaderType(binary.NativeEndian.Uint16(b[4:])),
				Flags:    netlink.HeaderFlags(binary.NativeEndian.Uint16(b[6:])),
				Sequence: binary.NativeEndian.Uint32(b[8:]),
				PID:      binary.NativeEndian.Uint32(b[12:]),
			},
			Data: b[unix.NLMSG_HDRLEN:l],
		}
		msgs = append(msgs, m)
		b = b[min(len(b), Align(l)):]
	}
	return msgs, nil
}

// Align rounds n up to NLMSG_ALIGNTO (4), as NLMSG_ALIGN and NLA_ALIGN do.
func Align(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }

// Control is one control message as recvmsg returned it.
type Control struct {
	Level, Type int32
	Len         uint64 // cmsg_len: header and data, without the padding
	Data        []byte
}

// PeekControl returns the control messages of the datagram at the head of
// the queue, exactly as the kernel wrote them, without dequeuing it
// (MSG_PEEK): the datagram stays there for Recv. It fails when nothing is
// queued (ErrEmpty) and on truncation.
func (s *Socket) PeekControl() ([]Control, error) {
	_, oob, _, err := s.recvmsg(unix.MSG_PEEK)
	switch {
	case errors.Is(err, unix.EAGAIN):
		return nil, fmt.Errorf("%s: recvmsg(MSG_PEEK): %w", s, ErrEmpty)
	case err != nil:
		return nil, err
	}
	cmsgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, s.wrap("control data", err)
	}
	out := make([]Control, len(cmsgs))
	for i, c := range cmsgs {
		// Data is copied out of the reused control buffer.
		out[i] = Control{Level: c.Header.Level, Type: c.Header.Type, Len: uint64(c.Header.Len), Data: bytes.Clone(c.Data)}
	}
	return out, nil
}

// Wait blocks until the socket is readable (data or a pending error) or the
// timeout passes. Use it only for events the kernel makes asynchronous.
func (s *Socket) Wait(timeout time.Duration) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		n, err := unix.Poll(fds, int(left.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, s.wrap("poll", err)
		}
		return n > 0, nil
	}
}

// Drops returns the socket's drop counter from the "Drops" column of
// /proc/thread-self/net/netlink, read from inside ns (the socket's namespace).
func (s *Socket) Drops(ns *netns.NS) (uint64, error) {
	pid := s.Portid()
	r, err := ReadRow(ns, s.Proto, pid)
	return r.Drops, s.wrap("read drops", err)
}
