// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// The topology, made by the harness with rtnetlink (no `ip`):
//
//	r1 --to-r2/to-r1-- r2 --to-r3/to-r2-- r3      idle: 256 subscribers
//	 |stub              |stub              |stub   obs: ip monitor all-nsid
//	 +-------------- h1 (to-r1, to-r2, to-r3) ---+
//
// r1, r2 and r3 are FRR routers (AS 65001-65003, eBGP over IPv4 and over
// IPv6 on each link), each with IPv4 and IPv6 loopback addresses and a
// stub link whose far end is in h1, which only holds those ends (a veth's
// carrier needs both up): the addresses and routes that each sequence
// adds in every router live on its stub link, so that every router's
// zebra learns them from the kernel's notifications. idle is a namespace
// of NETLINK_ROUTE sockets subscribed to every group the routers' events
// go to, never read until the end: foreign to every router and without
// NETLINK_LISTEN_ALL_NSID, so they must receive nothing. With
// net.core.netlink_route_mc_index at 0 every notification of every router
// walks past them; at 1 the kernel skips them. obs is the observer: it
// has an id for every router and for h1, and iproute2's `ip monitor
// all-nsid` there (a NETLINK_LISTEN_ALL_NSID subscriber) sees every
// router's notifications for the whole sequence.

type linkSpec struct {
	A, B         int    // router indexes
	AName, BName string // interface names at each end
	A4, B4       netip.Prefix
	A6, B6       netip.Prefix
}

var links = []linkSpec{
	{0, 1, "to-r2", "to-r1", pfx("192.0.2.1/30"), pfx("192.0.2.2/30"), pfx("2001:db8:12::1/64"), pfx("2001:db8:12::2/64")},
	{1, 2, "to-r3", "to-r2", pfx("192.0.2.5/30"), pfx("192.0.2.6/30"), pfx("2001:db8:23::2/64"), pfx("2001:db8:23::3/64")},
}

// routers in the line; loopbacks 192.0.2.101-103/32 and 2001:db8:ff::1-3/128.
const routerCount = 3

const stubLink = "stub"

// stubBase is the permanent IPv4 address of router i's stub link. Without
// it the sequence's address would be the link's last one, and deleting
// the last IPv4 address of a device flushes every IPv4 route through it
// (fib_inetaddr_event() -> fib_disable_ip()) without an RTM_DELROUTE: the
// routes would vanish from the kernel behind zebra's back, which is not
// what withdraw_addr is about.
func stubBase(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(9 + 4*i)}), 30)
}

// stubPeer is the name, in h1, of the far end of router i's stub link.
func stubPeer(i int) string { return fmt.Sprintf("to-r%d", i+1) }

// idleSubscribers is how many idle foreign subscribers the idle namespace
// holds: enough that the mode-0 walk is visibly longer.
const idleSubscribers = 256

// idleGroups are the groups the routers' notifications go to.
var idleGroups = []uint32{unix.RTNLGRP_LINK, unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV4_ROUTE,
	unix.RTNLGRP_IPV6_IFADDR, unix.RTNLGRP_IPV6_ROUTE, unix.RTNLGRP_NEXTHOP}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func loopback4(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(101 + i)}), 32)
}

func loopback6(i int) netip.Prefix {
	return netip.PrefixFrom(netip.MustParseAddr(fmt.Sprintf("2001:db8:ff::%d", i+1)), 128)
}

func asOf(i int) int { return 65001 + i }

// lab is the topology with its daemons running.
type lab struct {
	Dir     string
	FRR     frrInstall
	Routers []*router
	stub    *netns.NS
	stubCtl *rtnl.Conn
	idleNS  *netns.NS
	idle    []*nlsock.Socket
	obs     *observer
}

// buildLab makes the topology, starts the observer (ip, iproute2's ip)
// and then the daemons; within bounds each daemon's start, and a close of
// stop ends the wait. On error everything made so far is released.
func buildLab(frr frrInstall, ip string, within time.Duration, stop <-chan struct{}) (l *lab, err error) {
	dir, err := os.MkdirTemp("/tmp", "netlink_mcast_frr-")
	if err != nil {
		return nil, err
	}
	l = &lab{Dir: dir, FRR: frr}
	defer func() {
		if err != nil {
			err = errors.Join(err, l.close())
			l = nil
		}
	}()
	// The daemons, as the frr user, must reach their directories.
	if err := os.Chmod(dir, 0o755); err != nil {
		return l, err
	}
	if err := l.makeIdle(); err != nil {
		return l, err
	}
	for i := range routerCount {
		r, err := newRouter(fmt.Sprintf("r%d", i+1), dir)
		if err != nil {
			return l, err
		}
		l.Routers = append(l.Routers, r)
		if err := os.MkdirAll(r.Dir, 0o755); err != nil {
			return l, err
		}
		for _, p := range []netip.Prefix{loopback4(i), loopback6(i)} {
			if err := r.do(rtnl.NewAddr(rtnl.LoopbackIndex, p)); err != nil {
				return l, err
			}
		}
	}
	for _, ls := range links {
		if err := l.connect(ls); err != nil {
			return l, err
		}
	}
	if l.stub, l.stubCtl, err = newNamespace("h1", nil); err != nil {
		return l, err
	}
	for i, r := range l.Routers {
		if err := l.makeStub(i, r); err != nil {
			return l, err
		}
	}
	if err := l.makeObserver(ip); err != nil {
		return l, err
	}
	for i, r := range l.Routers {
		if err := r.start(frr, bgpdConfig(asOf(i), loopback4(i).Addr(), l.neighbors(i)), within, stop); err != nil {
			return l, err
		}
	}
	return l, nil
}

// makeStub makes router i's stub link, its far end in h1, with its
// permanent address, both ends up.
func (l *lab) makeStub(i int, r *router) error {
	if err := r.do(rtnl.NewVeth(stubLink, stubPeer(i), l.stub.FD())); err != nil {
		return err
	}
	stub, err := r.link(stubLink)
	if err != nil {
		return err
	}
	r.StubIndex = stub
	if err := r.do(rtnl.NewAddr(stub, stubBase(i))); err != nil {
		return err
	}
	if err := setUp(l.stubCtl, "h1", stubPeer(i), true); err != nil {
		return err
	}
	return setUp(r.Ctl, r.Name, stubLink, true)
}

// connect makes the veth pair of ls, its addresses, and brings it up.
func (l *lab) connect(ls linkSpec) error {
	a, b := l.Routers[ls.A], l.Routers[ls.B]
	if err := a.do(rtnl.NewVeth(ls.AName, ls.BName, b.NS.FD())); err != nil {
		return err
	}
	for _, end := range []struct {
		r      *router
		name   string
		p4, p6 netip.Prefix
	}{{a, ls.AName, ls.A4, ls.A6}, {b, ls.BName, ls.B4, ls.B6}} {
		idx, err := end.r.link(end.name)
		if err != nil {
			return err
		}
		for _, p := range []netip.Prefix{end.p4, end.p6} {
			if err := end.r.do(rtnl.NewAddr(idx, p)); err != nil {
				return err
			}
		}
		if err := end.r.do(rtnl.SetUp(idx, true)); err != nil {
			return err
		}
	}
	return nil
}

// neighbors are router i's BGP peers: the far end of each of its links.
func (l *lab) neighbors(i int) []bgpNeighbor {
	var out []bgpNeighbor
	for _, ls := range links {
		switch i {
		case ls.A:
			out = append(out, bgpNeighbor{ls.B4.Addr(), asOf(ls.B)}, bgpNeighbor{ls.B6.Addr(), asOf(ls.B)})
		case ls.B:
			out = append(out, bgpNeighbor{ls.A4.Addr(), asOf(ls.A)}, bgpNeighbor{ls.A6.Addr(), asOf(ls.A)})
		}
	}
	return out
}

func setUp(c *rtnl.Conn, nsName, link string, up bool) error {
	rep, err := c.Do(rtnl.GetLink(link))
	if err != nil {
		return fmt.Errorf("netns %s: %w", nsName, err)
	}
	if len(rep.Msgs) != 1 {
		return fmt.Errorf("netns %s: RTM_GETLINK %s: %d replies", nsName, link, len(rep.Msgs))
	}
	idx, err := rtnl.LinkIndex(rep.Msgs[0])
	if err != nil {
		return err
	}
	if _, err := c.Do(rtnl.SetUp(idx, up)); err != nil {
		return fmt.Errorf("netns %s: %w", nsName, err)
	}
	return nil
}

func (l *lab) makeIdle() error {
	ns, err := netns.New("idle")
	if err != nil {
		return err
	}
	l.idleNS = ns
	mask := nlsock.GroupMask(idleGroups...)
	for i := range idleSubscribers {
		s, err := nlsock.Open(ns, unix.NETLINK_ROUTE, fmt.Sprintf("idle%d", i))
		if err != nil {
			return err
		}
		l.idle = append(l.idle, s)
		if err := s.Bind(0, mask); err != nil {
			return err
		}
	}
	return nil
}

// idleReceived returns what the idle subscribers hold: each must be empty.
func (l *lab) idleReceived() []string {
	var got []string
	for _, s := range l.idle {
		for {
			d, err := s.Recv()
			if errors.Is(err, nlsock.ErrEmpty) {
				break
			}
			if err != nil {
				got = append(got, fmt.Sprintf("%s: %v", s, err))
				break
			}
			for _, m := range d.Msgs {
				got = append(got, fmt.Sprintf("%s: %s %s", s, rtnl.TypeName(uint16(m.Header.Type)), rtnl.Describe(m)))
			}
		}
	}
	return got
}

// dead says which routers lost a daemon, or "".
func (l *lab) dead() string {
	for _, r := range l.Routers {
		if d := r.dead(); d != "" {
			return d
		}
	}
	return ""
}

// deadWithin is dead, polled until it says something or within has passed.
func (l *lab) deadWithin(within time.Duration) string {
	for end := time.Now().Add(within); ; time.Sleep(pollEvery) {
		if d := l.dead(); d != "" || time.Now().After(end) {
			return d
		}
	}
}

// close stops every daemon and releases everything; it may be called on
// a lab that is only partly built. Removing the directory is the one part
// that can fail: a lab left in /tmp is an error the caller reports.
func (l *lab) close() error {
	if l.obs != nil {
		l.obs.close()
	}
	for _, r := range l.Routers {
		r.close()
	}
	for _, s := range l.idle {
		s.Close()
	}
	if l.idleNS != nil {
		l.idleNS.Close()
	}
	if l.stubCtl != nil {
		l.stubCtl.Close()
	}
	if l.stub != nil {
		l.stub.Close()
	}
	if err := os.RemoveAll(l.Dir); err != nil {
		return fmt.Errorf("removing the lab directory: %w", err)
	}
	return nil
}
