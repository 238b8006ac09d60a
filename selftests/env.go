package selftests

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// Env is the fixture of one case: the namespaces and sockets it creates,
// all released by t.Cleanup when the case ends, whatever way it ends.
type Env struct {
	t T
}

// NewEnv returns the fixture of the case t.
func NewEnv(t T) *Env { return &Env{t: t} }

// NS is a private network namespace prepared for exact counting: IPv6 off
// (no DAD or router solicitation noise) and lo up, before any subscriber
// exists. Ctl is its control socket.
type NS struct {
	*netns.NS
	Ctl *rtnl.Conn

	env       *Env
	sentinels map[int]*nlsock.Socket // per protocol
	addrs     int
}

// NewNS creates a namespace called name (for diagnostics).
func (e *Env) NewNS(name string) *NS {
	e.t.Helper()
	ns, err := netns.New(name)
	if err != nil {
		e.t.Fatalf("%v", err)
	}
	e.t.Cleanup(func() { ns.Close() })
	n, err := prepare(ns)
	if err != nil {
		e.t.Fatalf("prepare netns %s: %v", name, err)
	}
	n.env = e
	e.t.Cleanup(n.close)
	return n
}

func prepare(ns *netns.NS) (*NS, error) {
	for _, knob := range []string{"net/ipv6/conf/all/disable_ipv6", "net/ipv6/conf/default/disable_ipv6"} {
		if err := WriteSysctl(ns, knob, "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	ctl, err := rtnl.Dial(ns)
	if err != nil {
		return nil, err
	}
	if _, err := ctl.Do(rtnl.SetUp(rtnl.LoopbackIndex, true)); err != nil {
		ctl.Close()
		return nil, err
	}
	return &NS{NS: ns, Ctl: ctl, sentinels: map[int]*nlsock.Socket{}}, nil
}

func (n *NS) close() {
	for _, s := range n.sentinels {
		s.Close()
	}
	n.Ctl.Close()
}

// Do sends a request from the namespace's control socket and fails the case
// if the kernel refuses it.
func (n *NS) Do(r rtnl.Request) rtnl.Reply {
	n.env.t.Helper()
	rep, err := n.Ctl.Do(r)
	if err != nil {
		n.env.t.Fatalf("netns %s: %v", n.Name, err)
	}
	return rep
}

// Map gives peer the id nsid in n (RTM_NEWNSID sent from inside n), so that
// LISTEN_ALL_NSID sockets in n receive peer's notifications, and checks
// with RTM_GETNSID that the id is in place. nsid -1 lets the kernel
// choose; the id is returned.
func (n *NS) Map(peer *NS, nsid int32) int32 {
	n.env.t.Helper()
	n.Do(rtnl.NewNSID(peer.FD(), nsid))
	got := n.IDOf(peer)
	if nsid >= 0 && got != nsid {
		n.env.t.Fatalf("netns %s: gave netns %s the id %d, but RTM_GETNSID reports %d", n.Name, peer.Name, nsid, got)
	}
	return got
}

// IDOf returns the id n has for peer, or rtnl.NotAssigned.
func (n *NS) IDOf(peer *NS) int32 {
	n.env.t.Helper()
	id, err := n.Ctl.PeerID(peer.FD())
	if err != nil {
		n.env.t.Fatalf("netns %s: id of %s: %v", n.Name, peer.Name, err)
	}
	return id
}

// AddrEvent is event E1: a fresh /32 added to lo, which notifies exactly
// one RTM_NEWADDR on RTNLGRP_IPV4_IFADDR and one RTM_NEWROUTE (the local
// route) on RTNLGRP_IPV4_ROUTE, both queued before the ACK.
type AddrEvent struct {
	Seq, Pid uint32
	Prefix   netip.Prefix
}

// NewAddr is the RTM_NEWADDR of the event.
func (a AddrEvent) NewAddr() Msg {
	return Msg{Type: unix.RTM_NEWADDR, Seq: a.Seq, Pid: a.Pid, Group: unix.RTNLGRP_IPV4_IFADDR,
		Detail: fmt.Sprintf("%s dev %d", a.Prefix, rtnl.LoopbackIndex)}
}

// NewRoute is the RTM_NEWROUTE of the event: the local route in table 255.
// The kernel adds it on its own (fib_add_ifaddr() -> fib_magic(), whose
// fc_nlinfo has no nlh and portid 0), so its header has seq 0 and pid 0,
// not the request's.
func (a AddrEvent) NewRoute() Msg {
	return Msg{Type: unix.RTM_NEWROUTE, Group: unix.RTNLGRP_IPV4_ROUTE,
		Detail: fmt.Sprintf("local %s table %d", a.Prefix, unix.RT_TABLE_LOCAL)}
}

// AddAddr triggers E1 in n from its control socket.
func (n *NS) AddAddr() AddrEvent {
	n.env.t.Helper()
	return n.AddAddrFrom(n.Ctl, 0)
}

// AddAddrFrom triggers E1 from c (a control connection in n) with extra
// header flags (e.g. netlink.Echo).
func (n *NS) AddAddrFrom(c *rtnl.Conn, flags netlink.HeaderFlags) AddrEvent {
	n.env.t.Helper()
	p := n.nextPrefix()
	r := rtnl.NewAddr(rtnl.LoopbackIndex, p)
	r.Msg.Header.Flags |= flags
	rep, err := c.Do(r)
	if err != nil {
		n.env.t.Fatalf("netns %s: %v", n.Name, err)
	}
	return AddrEvent{Seq: rep.Seq, Pid: c.Portid(), Prefix: p}
}

// nextPrefix hands out 198.51.100.1/32 onwards, then 203.0.113.0/24
// (documentation ranges: they can never clash with a real network).
func (n *NS) nextPrefix() netip.Prefix {
	i := n.addrs
	n.addrs++
	if i >= 2*254 {
		n.env.t.Fatalf("netns %s: out of test addresses", n.Name)
	}
	base := [4]byte{198, 51, 100, 0}
	if i >= 254 {
		base, i = [4]byte{203, 0, 113, 0}, i-254
	}
	base[3] = byte(i + 1)
	return netip.PrefixFrom(netip.AddrFrom4(base), 32)
}

// Sock is a subscriber socket and the namespace it lives in.
type Sock struct {
	*nlsock.Socket
	ns *NS
}

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
	skipBind bool
}

// Proto selects the netlink protocol (default NETLINK_ROUTE).
func Proto(p int) Option { return func(c *sockConfig) { c.proto = p } }

// Portid binds to an explicit portid instead of letting the kernel pick.
func Portid(pid uint32) Option { return func(c *sockConfig) { c.pid = pid } }

// BindGroups sets groups 1..32 at bind time with a bitmask.
func BindGroups(mask uint32) Option { return func(c *sockConfig) { c.mask = mask } }

// Join adds groups with NETLINK_ADD_MEMBERSHIP after binding.
func Join(groups ...uint32) Option {
	return func(c *sockConfig) { c.groups = append(c.groups, groups...) }
}

// With enables SOL_NETLINK flag options (NETLINK_LISTEN_ALL_NSID,
// NETLINK_PKTINFO, ...) before any group is joined.
func With(opts ...int) Option { return func(c *sockConfig) { c.opts = append(c.opts, opts...) } }

// RcvBuf sets the receive buffer (SO_RCVBUF, or SO_RCVBUFFORCE when force).
func RcvBuf(bytes int, force bool) Option {
	return func(c *sockConfig) { c.rcvbuf, c.forceBuf = bytes, force }
}

// Socket opens a subscriber socket in n. It is always bound (an unbound
// socket has portid 0 and misses every notification that excludes portid
// 0, cases.md §7.8) and gets a 1 MiB receive buffer unless RcvBuf says
// otherwise, so that no burst in a case overruns it.
func (n *NS) Socket(name string, opts ...Option) *Sock {
	t := n.env.t
	t.Helper()
	c := sockConfig{proto: unix.NETLINK_ROUTE, rcvbuf: 1 << 20, forceBuf: true}
	for _, o := range opts {
		o(&c)
	}
	s, err := nlsock.Open(n.NS, c.proto, name)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.SetReceiveBuffer(c.rcvbuf, c.forceBuf); err != nil {
		t.Fatalf("%v", err)
	}
	for _, o := range c.opts {
		if err := s.SetOption(o, true); err != nil {
			t.Fatalf("%v", err)
		}
	}
	if err := s.Bind(c.pid, c.mask); err != nil {
		t.Fatalf("%v", err)
	}
	for _, g := range c.groups {
		if err := s.Join(g); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return &Sock{Socket: s, ns: n}
}

// NS returns the namespace the socket lives in.
func (s *Sock) NS() *NS { return s.ns }

func (n *NS) sentinelSocket(proto int) (*nlsock.Socket, error) {
	if s, ok := n.sentinels[proto]; ok {
		return s, nil
	}
	s, err := nlsock.Open(n.NS, proto, "sentinel")
	if err != nil {
		return nil, err
	}
	if err := s.Bind(0, 0); err != nil {
		s.Close()
		return nil, err
	}
	n.sentinels[proto] = s
	return s, nil
}

// Expect proves that s has received exactly want since the last check,
// in order, and nothing else. A sentinel is unicast to s from a socket in
// s's own namespace; everything queued before it is the transcript. All
// events the cases trigger are queued before the ACK of their request (or
// before sendmsg returns), so when the sentinel arrives, every message the
// kernel was going to deliver for them is already there: no sleep, no
// timeout. Expect reports a mismatch as a side-by-side diff.
func (e *Env) Expect(s *Sock, want ...Msg) {
	e.t.Helper()
	got, err := s.transcript(nil)
	e.compare(s, want, got, err)
}

// ExpectEventually is Expect for events the kernel makes asynchronous (the
// death of a namespace): it polls until len(want) lines have arrived or
// the deadline passes, then proves with the sentinel that nothing else
// came.
func (e *Env) ExpectEventually(s *Sock, deadline time.Duration, want ...Msg) {
	e.t.Helper()
	got, err := s.transcript(e.await(s, deadline, len(want)))
	e.compare(s, want, got, err)
}

// await reads s until n transcript lines have arrived or the deadline
// passes, and returns them.
func (e *Env) await(s *Sock, deadline time.Duration, n int) []Line {
	e.t.Helper()
	var early []Line
	end := time.Now().Add(deadline)
	for len(early) < n && !Interrupted() {
		d, err := s.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			if left := time.Until(end); left > 0 {
				if _, err := s.Wait(min(left, 100*time.Millisecond)); err != nil {
					e.t.Fatalf("%v", err)
				}
				continue
			}
			break
		}
		if err != nil {
			early = append(early, Line{Err: unwrapErrno(err)})
			continue
		}
		early = append(early, lines(d)...)
	}
	return early
}

func (e *Env) compare(s *Sock, want []Msg, got []Line, err error) {
	e.t.Helper()
	wl := make([]Line, len(want))
	for i, m := range want {
		wl[i] = m.line(s.Socket)
	}
	d := diff(wl, got)
	switch {
	case err != nil && d != "":
		e.t.Errorf("%s (portid %d): %v; transcript so far:\n%s", s, s.Portid(), err, d)
	case err != nil:
		e.t.Errorf("%s (portid %d): %v", s, s.Portid(), err)
	case d != "":
		e.t.Errorf("%s (portid %d): unexpected transcript\n%s", s, s.Portid(), d)
	}
}

// transcript reads s up to a fresh sentinel and returns what came before.
func (s *Sock) transcript(got []Line) ([]Line, error) {
	snt, err := s.ns.sentinelSocket(s.Proto)
	if err != nil {
		return got, err
	}
	seq, from := rtnl.NextSeq(), snt.Portid()
	if err := snt.SendTo(sentinel(seq, from), s.Portid(), 0); err != nil {
		return got, fmt.Errorf("sentinel: %w", err)
	}
	got, found, err := s.read(got, func(l Line) bool {
		return l.Type == unix.NLMSG_NOOP && l.Seq == seq && l.FromPid == from
	})
	if err == nil && !found {
		err = errors.New("receive queue ended without the sentinel (dropped by a full or congested socket?)")
	}
	return got, err
}

func unwrapErrno(err error) error {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// read appends to got what s has queued, without blocking, until the queue
// is empty or a line satisfies stop (that line is not appended; found
// reports it). A recvmsg error such as ENOBUFS becomes a line of its own.
func (s *Sock) read(got []Line, stop func(Line) bool) (_ []Line, found bool, err error) {
	for {
		d, err := s.Recv()
		switch {
		case errors.Is(err, nlsock.ErrEmpty):
			return got, false, nil
		case err != nil:
			var errno unix.Errno
			if !errors.As(err, &errno) {
				return got, false, err
			}
			got = append(got, Line{Err: errno})
			continue
		}
		for _, l := range lines(d) {
			if stop != nil && stop(l) {
				return got, true, nil
			}
			got = append(got, l)
		}
	}
}
