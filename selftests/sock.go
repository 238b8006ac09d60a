// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// Sock is a subscriber socket of a case and the namespace it lives in. It
// is closed when the case ends.
type Sock struct {
	*nlsock.Socket
	ns *NS
}

// NS returns the namespace the socket lives in.
func (s *Sock) NS() *NS { return s.ns }

// CollidingPortid is a portid for sockets that bind it explicitly in two
// namespaces: portids are unique per namespace and protocol only, so both
// binds succeed. Autobind never picks it (the process id, at most
// pid_max, then values from -4096 downwards).
const CollidingPortid = 0x7fff0001

// Option configures a socket made by NS.Socket.
type Option func(*sockConfig)

type sockConfig struct {
	proto    int
	pid      uint32
	mask     uint32
	groups   []uint32
	opts     []int
	rcvbuf   int
	forceBuf bool
	ownBuf   bool // set by RcvBuf or RcvBufForce
	passCred bool
}

// Proto selects the netlink protocol (default NETLINK_ROUTE).
func Proto(p int) Option { return func(c *sockConfig) { c.proto = p } }

// Portid binds to an explicit portid instead of letting the kernel pick.
func Portid(pid uint32) Option { return func(c *sockConfig) { c.pid = pid } }

// BindGroups sets groups 1..32 at bind time with a bitmask
// (nlsock.GroupMask).
func BindGroups(mask uint32) Option { return func(c *sockConfig) { c.mask = mask } }

// Join adds groups with NETLINK_ADD_MEMBERSHIP after binding.
func Join(groups ...uint32) Option {
	return func(c *sockConfig) { c.groups = append(c.groups, groups...) }
}

// With enables SOL_NETLINK flag options (NETLINK_LISTEN_ALL_NSID,
// NETLINK_PKTINFO, ...) before any group is joined.
func With(opts ...int) Option { return func(c *sockConfig) { c.opts = append(c.opts, opts...) } }

// PassCred sets SO_PASSCRED: each datagram comes with its sender's
// credentials, which the socket's transcript then shows.
func PassCred() Option { return func(c *sockConfig) { c.passCred = true } }

// RcvBuf sets the receive buffer with SO_RCVBUF (capped at rmem_max; 1
// gives the kernel's minimum) instead of the default.
func RcvBuf(bytes int) Option {
	return func(c *sockConfig) { c.rcvbuf, c.forceBuf, c.ownBuf = bytes, false, true }
}

// RcvBufForce sets the receive buffer with SO_RCVBUFFORCE, above rmem_max.
func RcvBufForce(bytes int) Option {
	return func(c *sockConfig) { c.rcvbuf, c.forceBuf, c.ownBuf = bytes, true, true }
}

// Socket opens a subscriber socket in n. It is always bound (an unbound
// socket has portid 0 and misses every notification that excludes portid
// 0: netlink_autobind() runs only on send or connect) and gets a 1 MiB
// receive buffer (SO_RCVBUFFORCE) unless an option says otherwise, so
// that no burst in a case overruns it. Without the right to force it (root
// of a child user namespace), the default is SO_RCVBUF 1 MiB, which the
// kernel caps at rmem_max (212992 bytes by default): still hundreds of the
// notifications a case sends, which come a few at a time.
func (n *NS) Socket(name string, opts ...Option) *Sock {
	n.t.Helper()
	c := newSockConfig(opts)
	s, err := nlsock.Open(n.NS, c.proto, name)
	if err != nil {
		n.t.Fatalf("%v", err)
	}
	return n.configure(s, c)
}

// SocketWithout is Socket for a socket opened on a thread whose effective
// set lacks capability: the socket keeps those credentials as its file
// credentials for good (what do_one_broadcast() checks with
// file_ns_capable()). Its options are set from an ordinary thread.
func (n *NS) SocketWithout(capability int, name string, opts ...Option) *Sock {
	n.t.Helper()
	c := newSockConfig(opts)
	var s *nlsock.Socket
	err := n.NS.Do(func() error {
		if err := dropCapability(capability); err != nil {
			return err
		}
		var err error
		s, err = nlsock.OpenHere(c.proto, name, n.Name)
		return err
	})
	if err != nil {
		n.t.Fatalf("socket %q in netns %s without capability %d: %v", name, n.Name, capability, err)
	}
	return n.configure(s, c)
}

func newSockConfig(opts []Option) sockConfig {
	c := sockConfig{proto: unix.NETLINK_ROUTE, rcvbuf: 1 << 20, forceBuf: true}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func (n *NS) configure(s *nlsock.Socket, c sockConfig) *Sock {
	n.t.Helper()
	sock := n.Adopt(s)
	var err error
	if c.forceBuf {
		err = s.ForceReceiveBuffer(c.rcvbuf)
		if !c.ownBuf && lacks(err, unix.CAP_NET_ADMIN) != "" {
			err = s.SetReceiveBuffer(c.rcvbuf)
		}
		skipWithout(n.t, err, unix.CAP_NET_ADMIN, "SO_RCVBUFFORCE")
	} else {
		err = s.SetReceiveBuffer(c.rcvbuf)
	}
	if err != nil {
		n.t.Fatalf("%v", err)
	}
	for _, o := range c.opts {
		sock.SetFlag(o, true)
	}
	if c.passCred {
		if err := s.SetPassCred(true); err != nil {
			n.t.Fatalf("%v", err)
		}
	}
	if err := s.Bind(c.pid, c.mask); err != nil {
		n.t.Fatalf("%v", err)
	}
	for _, g := range c.groups {
		if err := s.Join(g); err != nil {
			n.t.Fatalf("%v", err)
		}
	}
	return sock
}

// Adopt makes s, a socket that lives in n but was opened elsewhere (by a
// helper process, or on a thread with other credentials), a Sock of the
// case: Expect works on it, and it is closed when the case ends.
func (n *NS) Adopt(s *nlsock.Socket) *Sock {
	n.t.Cleanup(func() { s.Close() })
	return &Sock{Socket: s, ns: n}
}

// SetFlag sets or clears a SOL_NETLINK flag option and fails the case if
// the kernel refuses. A refusal for want of a capability the program does
// not have (NETLINK_LISTEN_ALL_NSID needs CAP_NET_BROADCAST) makes the
// case SKIP instead, naming it. A case that expects the refusal calls
// SetOption.
func (s *Sock) SetFlag(opt int, on bool) {
	t := s.ns.t
	t.Helper()
	err := s.SetOption(opt, on)
	if opt == unix.NETLINK_LISTEN_ALL_NSID {
		skipWithout(t, err, unix.CAP_NET_BROADCAST, "setsockopt(NETLINK_LISTEN_ALL_NSID)")
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
}

// Multicast sends from s an NLMSG_NOOP with a fresh sequence number to
// group (1..32) and to portid dst (0: the kernel socket, if the protocol has
// one), and returns it as a subscriber of group sees it: msg_name carries
// s's portid, the header is as sent. The message has no NLM_F_REQUEST, so a
// kernel socket ignores it. netlink_sendmsg() broadcasts before the unicast,
// so every copy is queued when Multicast returns, even when sendto() fails
// for the unicast part (ECONNREFUSED on NETLINK_USERSOCK with dst 0).
func (s *Sock) Multicast(dst, group uint32) (Msg, error) {
	return s.multicast(dst, group, 0)
}

// MulticastPayload is Multicast with payload zero bytes after the header:
// a datagram whose length the case chooses.
func (s *Sock) MulticastPayload(dst, group uint32, payload int) (Msg, error) {
	return s.multicast(dst, group, payload)
}

func (s *Sock) multicast(dst, group uint32, payload int) (Msg, error) {
	pid := s.Portid()
	data := make([]byte, payload)
	m := Msg{Type: unix.NLMSG_NOOP, Seq: rtnl.NextSeq(), Pid: pid, Group: group, FromPid: pid}.Payload(data)
	err := s.SendTo(netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: m.Seq, PID: pid}, Data: data},
		dst, nlsock.GroupMask(group))
	return m, err
}

// MustMulticastPayload is MustMulticast (to group only) with payload zero
// bytes after the header: a message whose size, and so the receive memory
// it charges, the case chooses. The transcript shows it as Multicast's.
func (s *Sock) MustMulticastPayload(group uint32, payload int) Msg {
	t := s.ns.t
	t.Helper()
	m, err := s.multicast(0, group, payload)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return m
}

// MustMulticast is Multicast that fails the case if sendto() does.
func (s *Sock) MustMulticast(dst, group uint32) Msg {
	t := s.ns.t
	t.Helper()
	m, err := s.Multicast(dst, group)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return m
}

// BurstSize is how many messages Burst sends: several times what a
// minimal receive buffer holds (two or three), far less than 1 MiB.
const BurstSize = 16

// Burst multicasts BurstSize messages from s to group and returns them as
// the subscribers see them. Each sendto() queues or drops its copies
// before it returns, so the burst is complete when Burst returns.
func (s *Sock) Burst(group uint32) []Msg {
	s.ns.t.Helper()
	burst := make([]Msg, BurstSize)
	for i := range burst {
		burst[i] = s.MustMulticast(0, group)
	}
	return burst
}

// Request sends r from the subscriber s itself, with NLM_F_REQUEST|NLM_F_ACK
// and extra flags (e.g. netlink.Echo), and reads nothing: the echo and the
// ACK stay queued on s and belong to its transcript. The kernel handles a
// request inside sendmsg(), so every message it causes is queued, on s and
// everywhere else, when Request returns. It returns the request's sequence
// number.
func (s *Sock) Request(r rtnl.Request, flags netlink.HeaderFlags) uint32 {
	t := s.ns.t
	t.Helper()
	m := r.Msg
	m.Header.Flags |= netlink.Request | netlink.Acknowledge | flags
	m.Header.Sequence = rtnl.NextSeq()
	if err := s.SendTo(m, 0, 0); err != nil {
		t.Fatalf("%s: %v", r.Name, err)
	}
	return m.Header.Sequence
}
