// SPDX-License-Identifier: GPL-2.0

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

// NS is a private network namespace of a case, prepared for exact
// counting: IPv6 off (no DAD or router solicitation noise) and lo up,
// before any subscriber exists. Ctl is its control socket. Everything it
// holds is released when the case ends, whatever way it ends.
type NS struct {
	*netns.NS
	Ctl *rtnl.Conn

	t         T
	sentinels map[int]*nlsock.Socket // per protocol
	addrs     int
}

// NewNS creates a namespace called name (for diagnostics) for the case t.
func NewNS(t T, name string) *NS {
	t.Helper()
	ns, err := netns.New(name)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { ns.Close() })
	return prepare(t, ns)
}

// prepare makes ns, a namespace the case owns (its handle is closed by a
// cleanup already), an NS.
func prepare(t T, ns *netns.NS) *NS {
	t.Helper()
	track(ns)
	for _, knob := range []string{"net/ipv6/conf/all/disable_ipv6", "net/ipv6/conf/default/disable_ipv6"} {
		if err := ns.WriteSysctl(knob, "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("prepare netns %s: %v", ns.Name, err)
		}
	}
	ctl, err := rtnl.Dial(ns)
	if err != nil {
		t.Fatalf("prepare netns %s: %v", ns.Name, err)
	}
	n := &NS{NS: ns, Ctl: ctl, t: t, sentinels: map[int]*nlsock.Socket{}}
	t.Cleanup(n.close)
	if _, err := ctl.Do(rtnl.SetUp(rtnl.LoopbackIndex, true)); err != nil {
		t.Fatalf("prepare netns %s: %v", ns.Name, err)
	}
	return n
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
	n.t.Helper()
	rep, err := n.Ctl.Do(r)
	if err != nil {
		n.t.Fatalf("netns %s: %v", n.Name, err)
	}
	return rep
}

// NSIDEvent is an id given to a peer with RTM_NEWNSID, and the request
// that gave it.
type NSIDEvent struct {
	ID       int32
	Seq, Pid uint32
}

// NewNSID is the RTM_NEWNSID the request notified on RTNLGRP_NSID in the
// namespace that gave the id (rtnl_net_newid() -> rtnl_net_notifyid()
// with the request's seq and portid).
func (e NSIDEvent) NewNSID() Msg {
	m := NSIDNotification(unix.RTM_NEWNSID, e.ID)
	m.Seq, m.Pid = e.Seq, e.Pid
	return m
}

// NSIDNotification is an RTM_NEWNSID or RTM_DELNSID that the kernel sends
// on its own (rtnl_net_notifyid() with no request: seq 0, pid 0) on
// RTNLGRP_NSID about the peer it has the id id for.
func NSIDNotification(typ uint16, id int32) Msg {
	return Notification(typ, unix.RTNLGRP_NSID, rtnl.NSIDDetail(id))
}

// NetnsDeathDeadline bounds the wait for the RTM_DELNSID of a namespace
// whose last reference is gone, and for what its death takes with it.
// cleanup_net() runs on a workqueue shared by every dying namespace of the
// machine: tens of ms here, seconds on a debug kernel under emulation, and
// more than 10 s on that kernel when the host's two cores also run three
// other guests (netns_death_removes_linked_device got the RTM_DELNSID
// but not yet the device's RTM_DELLINK after 10 s). Only a failing case
// waits this long.
const NetnsDeathDeadline = 30 * time.Second

// Map gives peer the id nsid in n (RTM_NEWNSID sent from inside n), so that
// LISTEN_ALL_NSID sockets in n receive peer's notifications, and checks
// with RTM_GETNSID that the id is in place. nsid -1 lets the kernel
// choose; the event holds the id given.
func (n *NS) Map(peer *NS, nsid int32) NSIDEvent {
	n.t.Helper()
	rep := n.Do(rtnl.NewNSID(peer.FD(), nsid))
	got := n.IDOf(peer)
	if nsid >= 0 && got != nsid {
		n.t.Fatalf("netns %s: gave netns %s the id %d, but RTM_GETNSID reports %d", n.Name, peer.Name, nsid, got)
	}
	return NSIDEvent{ID: got, Seq: rep.Seq, Pid: n.Ctl.Portid()}
}

// IDOf returns the id n has for peer, or rtnl.NotAssigned.
func (n *NS) IDOf(peer *NS) int32 {
	n.t.Helper()
	id, err := n.Ctl.PeerID(peer.FD())
	if err != nil {
		n.t.Fatalf("netns %s: id of %s: %v", n.Name, peer.Name, err)
	}
	return id
}

// RequireNoID stops the case unless n has no id for peer, as RTM_GETNSID
// reports it now: the premise of an "unmapped" expectation. Ids also
// appear implicitly (veth peers, device moves), so cases check right where
// it matters instead of trusting the setup.
func (n *NS) RequireNoID(peer *NS) {
	n.t.Helper()
	if id := n.IDOf(peer); id != rtnl.NotAssigned {
		n.t.Fatalf("netns %s has the id %d for netns %s, want none (RTM_GETNSID)", n.Name, id, peer.Name)
	}
}

// LinkIndex returns the ifindex of the interface called name in n
// (RTM_GETLINK), failing the case if there is no such interface.
func (n *NS) LinkIndex(name string) uint32 {
	n.t.Helper()
	rep := n.Do(rtnl.GetLink(name))
	if len(rep.Msgs) != 1 {
		n.t.Fatalf("netns %s: RTM_GETLINK %s: %d replies, want 1", n.Name, name, len(rep.Msgs))
	}
	i, err := rtnl.LinkIndex(rep.Msgs[0])
	if err != nil {
		n.t.Fatalf("netns %s: RTM_GETLINK %s: %v", n.Name, name, err)
	}
	return i
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
		Detail: rtnl.AddrDetail(a.Prefix, rtnl.LoopbackIndex)}
}

// NewRoute is the RTM_NEWROUTE of the event: the local route in table 255.
// The kernel adds it on its own (fib_add_ifaddr() -> fib_magic(), whose
// fc_nlinfo has no nlh and portid 0), so its header has seq 0 and pid 0,
// not the request's. Its flags are NLM_F_EXCL|NLM_F_CREATE: fib_table_insert()
// starts from nlflags = NLM_F_EXCL, adds NLM_F_CREATE for a new route and
// passes them to rtmsg_fib() (observed alike on 6.1, 6.12 and 6.18). The
// RTM_NEWADDR has flags 0 (rtmsg_ifa(): inet_fill_args.flags = 0).
func (a AddrEvent) NewRoute() Msg {
	return Msg{Type: unix.RTM_NEWROUTE, Flags: unix.NLM_F_EXCL | unix.NLM_F_CREATE, Group: unix.RTNLGRP_IPV4_ROUTE,
		Detail: rtnl.RouteDetail(unix.RTN_LOCAL, a.Prefix, unix.RT_TABLE_LOCAL, 0)}
}

// DelAddr is the RTM_DELADDR of an event that deletes the address (the
// AddrEvent NS.DelAddr returns): the request's seq and portid, as for
// RTM_NEWADDR (rtmsg_ifa() from __inet_del_ifa()).
func (a AddrEvent) DelAddr() Msg {
	m := a.NewAddr()
	m.Type = unix.RTM_DELADDR
	return m
}

// DelRoute is the RTM_DELROUTE of an event that deletes the address: its
// local route goes, deleted by the kernel on its own (fib_del_ifaddr() ->
// fib_magic(RTM_DELROUTE)), so seq 0, pid 0 and flags 0, after the
// RTM_DELADDR.
func (a AddrEvent) DelRoute() Msg {
	m := a.NewRoute()
	m.Type, m.Flags = unix.RTM_DELROUTE, 0
	return m
}

// AddAddr triggers E1 in n from its control socket.
func (n *NS) AddAddr() AddrEvent {
	n.t.Helper()
	return n.AddAddrFrom(n.Ctl, 0)
}

// AddAddrFrom triggers E1 from c (a control connection in n) with extra
// header flags (e.g. netlink.Echo).
func (n *NS) AddAddrFrom(c *rtnl.Conn, flags netlink.HeaderFlags) AddrEvent {
	n.t.Helper()
	p := n.nextPrefix()
	r := rtnl.NewAddr(rtnl.LoopbackIndex, p)
	r.Msg.Header.Flags |= flags
	rep, err := c.Do(r)
	if err != nil {
		n.t.Fatalf("netns %s: %v", n.Name, err)
	}
	return AddrEvent{Seq: rep.Seq, Pid: c.Portid(), Prefix: p}
}

// DelAddr deletes the address of e (an AddAddr event) from n's control
// socket and returns the deletion as an event of its own: its DelAddr and
// DelRoute are what it notifies, queued before the ACK.
func (n *NS) DelAddr(e AddrEvent) AddrEvent {
	n.t.Helper()
	rep := n.Do(rtnl.DelAddr(rtnl.LoopbackIndex, e.Prefix))
	return AddrEvent{Seq: rep.Seq, Pid: n.Ctl.Portid(), Prefix: e.Prefix}
}

// AddAddrAs triggers E1 with a request sent by the subscriber s itself
// (Sock.Request): the notifications and the ACK are then part of s's
// transcript.
func (n *NS) AddAddrAs(s *Sock, flags netlink.HeaderFlags) AddrEvent {
	n.t.Helper()
	p := n.nextPrefix()
	seq := s.Request(rtnl.NewAddr(rtnl.LoopbackIndex, p), flags)
	return AddrEvent{Seq: seq, Pid: s.Portid(), Prefix: p}
}

// nextPrefix hands out 198.51.100.1/32 onwards, then 203.0.113.0/24
// (documentation ranges: they can never clash with a real network).
func (n *NS) nextPrefix() netip.Prefix {
	i := n.addrs
	n.addrs++
	if i >= 2*254 {
		n.t.Fatalf("netns %s: out of test addresses", n.Name)
	}
	base := [4]byte{198, 51, 100, 0}
	if i >= 254 {
		base, i = [4]byte{203, 0, 113, 0}, i-254
	}
	base[3] = byte(i + 1)
	return netip.PrefixFrom(netip.AddrFrom4(base), 32)
}

// SetL3Stats switches lo's L3 offload statistics on or off (RTM_SETSTATS)
// and returns the one RTM_NEWSTATS each switch notifies on RTNLGRP_STATS
// (36, above the bind bitmask), a kernel-originated message
// (rtnl_offload_xstats_notify(): seq 0, pid 0). ok is false, with a log
// line, on a kernel without RTM_SETSTATS (EOPNOTSUPP, before Linux 5.19):
// the caller leaves the event out. Any other error fails the case.
func (n *NS) SetL3Stats(on bool) (_ Msg, ok bool) {
	n.t.Helper()
	_, err := n.Ctl.Do(rtnl.SetL3Stats(rtnl.LoopbackIndex, on))
	if errors.Is(err, unix.EOPNOTSUPP) {
		n.t.Logf("this kernel has no RTM_SETSTATS (Linux 5.19+): %v; the group %d (RTNLGRP_STATS) event is left out", err, unix.RTNLGRP_STATS)
		return Msg{}, false
	}
	if err != nil {
		n.t.Fatalf("netns %s: %v", n.Name, err)
	}
	return Notification(unix.RTM_NEWSTATS, unix.RTNLGRP_STATS, rtnl.StatsDetail(rtnl.LoopbackIndex)), true
}

// CreateTC sends a request that creates a tc object (qdisc, filter or
// action) from n's control socket. A kernel built without the qdisc,
// classifier or action kind makes the case SKIP, naming what it needs
// (SkipMissingTC). Any other error fails the case.
func (n *NS) CreateTC(r rtnl.Request, needs string) rtnl.Reply {
	n.t.Helper()
	rep, err := n.Ctl.Do(r)
	SkipMissingTC(n.t, err, needs)
	// tc actions are created only with CAP_NET_ADMIN over the initial
	// user namespace (tc_ctl_action() checks netlink_capable()), unlike
	// qdiscs and filters, which need it over the namespace's owner.
	skipWithout(n.t, err, unix.CAP_NET_ADMIN, r.Name)
	if err != nil {
		n.t.Fatalf("netns %s: %v", n.Name, err)
	}
	return rep
}

// SkipMissingTC ends the case as SKIP when err says that the kernel lacks
// the tc kind a request named: ENOENT ("Specified qdisc kind is unknown",
// "TC classifier not found", "Failed to load TC action module") or
// EOPNOTSUPP. needs says what is missing.
func SkipMissingTC(t T, err error, needs string) {
	t.Helper()
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("%s not available in this kernel (%v)", needs, err)
	}
}

// JoinIPv4Multicast opens a UDP socket in n that joins group on ifindex
// (IP_ADD_MEMBERSHIP), which notifies one RTM_NEWMULTICAST on
// RTNLGRP_IPV4_MCADDR. leave closes the socket, which leaves the group
// before close() returns (inet_release() -> ip_mc_drop_socket()): one
// RTM_DELMULTICAST. leave may be called more than once; the case's cleanup
// calls it too.
func (n *NS) JoinIPv4Multicast(group netip.Addr, ifindex int32) (leave func() error) {
	n.t.Helper()
	fd := -1
	err := n.NS.Do(func() error {
		var err error
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("UDP socket: %w", err)
		}
		mreq := &unix.IPMreqn{Multiaddr: group.As4(), Ifindex: ifindex}
		if err := unix.SetsockoptIPMreqn(fd, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq); err != nil {
			unix.Close(fd)
			return fmt.Errorf("IP_ADD_MEMBERSHIP %s ifindex %d: %w", group, ifindex, err)
		}
		return nil
	})
	if err != nil {
		n.t.Fatalf("netns %s: %v", n.Name, err)
	}
	leave = func() error {
		if fd < 0 {
			return nil
		}
		err := unix.Close(fd)
		fd = -1
		if err != nil {
			return fmt.Errorf("netns %s: close the UDP socket in %s: %w", n.Name, group, err)
		}
		return nil
	}
	n.t.Cleanup(func() { leave() })
	return leave
}

// Delete drops the handle on n. Nothing is mounted here, so this is what
// `ip netns del` does: n lives on while anything else refers to it (a
// socket in it, the harness's control and sentinel sockets), but n can no
// longer be entered: no new socket can be opened in it, nor a sentinel
// for a socket that had none yet.
func (n *NS) Delete() {
	n.t.Helper()
	if err := n.NS.Close(); err != nil {
		n.t.Errorf("netns %s: close handle: %v", n.Name, err)
	}
}

// Release drops every reference the harness holds on n: its sentinel
// sockets, its control socket and then the handle. n lives on while a
// socket the case opened in it stays open, and the kernel destroys it
// (asynchronously, in cleanup_net()) once the last one is closed. After
// Release, n can no longer send requests or check transcripts; the case's
// cleanup closing the same objects again is harmless.
func (n *NS) Release() {
	n.t.Helper()
	for proto, s := range n.sentinels {
		if err := s.Close(); err != nil {
			n.t.Errorf("netns %s: %v", n.Name, err)
		}
		delete(n.sentinels, proto)
	}
	if err := n.Ctl.Close(); err != nil {
		n.t.Errorf("netns %s: control socket: %v", n.Name, err)
	}
	n.Delete()
}
