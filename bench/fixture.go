// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"net/netip"
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

const (
	groupIPv4Route = unix.RTNLGRP_IPV4_ROUTE
	groupLink      = unix.RTNLGRP_LINK
	nexthopA       = 1 // the two nexthop objects the routes alternate between
	nexthopB       = 2
	monitorNSID    = 7 // the id the monitor's namespace gives the source
)

// receiveBuffer is SO_RCVBUFFORCE for every recipient (-rcvbuf): a
// batch's notifications (one skb each, about 1 KiB of truesize) must all
// fit, or the socket overruns and the scene fails.
var receiveBuffer = defaultReceiveBuffer

const defaultReceiveBuffer = 32 << 20

// controlBuffer is the control socket's: a chunk's ACKs must fit.
const controlBuffer = 4 << 20

// fixture is everything a scene's work unit uses; close releases it.
type fixture struct {
	scene    Scene
	routes   int
	sources  []*source
	foreign  []*netns.NS
	pool     []*nlsock.Socket // foreign subscribers (C2: local candidates)
	monitorN *netns.NS
	closers  []func()
	stop     <-chan struct{}
}

// source is a namespace with two nexthops and the routes, the sender's
// control socket and the recipients.
type source struct {
	ns         *netns.NS
	ctl        *rtnl.Conn
	recipients []*recipient
	others     []*nlsock.Socket // subscribers that must receive nothing
	batch      *batch
}

func (f *fixture) close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
}

func (f *fixture) onClose(fn func()) { f.closers = append(f.closers, fn) }

// openMany opens n NETLINK_ROUTE sockets in ns from one thread.
func (f *fixture) openMany(ns *netns.NS, n int, name string) ([]*nlsock.Socket, error) {
	socks := make([]*nlsock.Socket, 0, n)
	err := ns.Do(func() error {
		for i := 0; i < n; i++ {
			s, err := nlsock.OpenHere(unix.NETLINK_ROUTE, fmt.Sprintf("%s%d", name, i), ns.Name)
			if err != nil {
				return fmt.Errorf("socket %d of %d: %w", i+1, n, err)
			}
			socks = append(socks, s)
		}
		return nil
	})
	f.onClose(func() {
		for _, s := range socks {
			s.Close()
		}
	})
	if err != nil {
		return nil, err
	}
	return socks, nil
}

func (f *fixture) newNS(name string) (*netns.NS, error) {
	ns, err := netns.New(name)
	if err != nil {
		return nil, err
	}
	f.onClose(func() { ns.Close() })
	return ns, nil
}

// subscribe binds s to group (bitmask for groups up to 32, membership
// above).
func subscribe(s *nlsock.Socket, group uint32) error {
	if group <= 32 {
		return s.Bind(0, nlsock.GroupMask(group))
	}
	if err := s.Bind(0, 0); err != nil {
		return err
	}
	return s.Join(group)
}

// build sets up scene sc with routes routes per source namespace; it gives
// up, with an error, once stop is closed (a large layout takes minutes
// under TCG).
func build(sc Scene, routes int, stop <-chan struct{}) (_ *fixture, err error) {
	f := &fixture{scene: sc, routes: routes, stop: stop}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	senders := 1
	if sc.Kind == parallelBatch {
		senders = 2
	}
	for i := 0; i < senders; i++ {
		src, err := f.newSource(fmt.Sprintf("S%d", i+1), sc, routes)
		if err == nil {
			src.batch, err = newBatch(src, i, routes)
		}
		if err != nil {
			return nil, err
		}
		f.sources = append(f.sources, src)
	}
	if sc.Local {
		// C2: the candidates share the source namespace and a group
		// that route notifications never match.
		if f.pool, err = f.openMany(f.sources[0].ns, sc.N, "local"); err != nil {
			return nil, err
		}
		for _, s := range f.pool {
			if err := subscribe(s, groupLink); err != nil {
				return nil, err
			}
		}
	} else if err := f.buildForeignPool(sc); err != nil {
		return nil, err
	}
	if sc.Monitor {
		if err := f.addMonitor(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// stopped says why the build gives up, or nil.
func (f *fixture) stopped() error {
	select {
	case <-f.stop:
		return errors.New("stopped while setting up the scene")
	default:
		return nil
	}
}

// newSource creates a source namespace: lo up, nexthops A and B
// (blackhole: no device needed), routes 10.x.y.0/24 through them, the
// control socket and the receivers.
func (f *fixture) newSource(name string, sc Scene, routes int) (*source, error) {
	ns, err := f.newNS(name)
	if err != nil {
		return nil, err
	}
	ctl, err := rtnl.Dial(ns)
	if err != nil {
		return nil, err
	}
	f.onClose(func() { ctl.Close() })
	src := &source{ns: ns, ctl: ctl}
	if err := ctl.Sock.ForceReceiveBuffer(controlBuffer); err != nil {
		return nil, err
	}
	if sc.CompatMode >= 0 {
		if err := setCompatMode(ns, sc.CompatMode); err != nil {
			return nil, err
		}
	}
	for _, req := range []rtnl.Request{
		rtnl.SetUp(rtnl.LoopbackIndex, true),
		rtnl.NewNexthop(rtnl.Nexthop{ID: nexthopA, Blackhole: true}),
		rtnl.NewNexthop(rtnl.Nexthop{ID: nexthopB, Blackhole: true}),
	} {
		if _, err := ctl.Do(req); err != nil {
			return nil, fmt.Errorf("netns %s: %w", name, err)
		}
	}
	// The routes are created with the same batched sender as the work
	// unit, before anyone subscribes, each with the nexthop that the
	// first batch (parity 0) replaces: a replace that changes nothing
	// sends no notification.
	create := make([]rtnl.Request, routes)
	for i := range create {
		create[i] = rtnl.NewRoute(rtnl.Route{Dst: routePrefix(i), NHID: nexthopFor(i, 1)})
	}
	if err := sendAll(ctl, create); err != nil {
		return nil, fmt.Errorf("netns %s: create %d routes: %w", name, routes, err)
	}
	socks, err := f.openMany(ns, sc.Receivers, name+"-rx")
	if err != nil {
		return nil, err
	}
	for _, s := range socks {
		if err := subscribe(s, groupIPv4Route); err != nil {
			return nil, err
		}
		if err := s.ForceReceiveBuffer(receiveBuffer); err != nil {
			return nil, err
		}
		src.recipients = append(src.recipients, &recipient{sock: s, nsid: -1})
	}
	if sc.Extra {
		extra, err := f.openMany(ns, len(extraGroups), name+"-extra")
		if err != nil {
			return nil, err
		}
		for i, s := range extra {
			if err := subscribe(s, extraGroups[i]); err != nil {
				return nil, err
			}
		}
		src.others = extra
	}
	return src, nil
}

// routePrefix is route i's destination: 10.(i/256).(i%256).0/24.
func routePrefix(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
}

// setCompatMode writes net.ipv4.nexthop_compat_mode in ns (a per-namespace
// sysctl).
func setCompatMode(ns *netns.NS, mode int) error {
	err := ns.WriteSysctl("net/ipv4/nexthop_compat_mode", fmt.Sprint(mode))
	if errors.Is(err, os.ErrNotExist) {
		return skipError{"net.ipv4.nexthop_compat_mode not supported by this kernel"}
	}
	if err != nil {
		return fmt.Errorf("netns %s: write %d: %w", ns.Name, mode, err)
	}
	return nil
}

// buildForeignPool spreads sc.N subscribers over the foreign namespaces,
// ALL_NSID on the first allNSIDCount of them.
func (f *fixture) buildForeignPool(sc Scene) error {
	count := sc.foreignNamespaces()
	per := sc.N
	if sc.D > 0 {
		per = sc.D
	}
	left := sc.N
	for i := 0; i < count; i++ {
		if err := f.stopped(); err != nil {
			return err
		}
		ns, err := f.newNS(fmt.Sprintf("F%d", i+1))
		if err != nil {
			return err
		}
		f.foreign = append(f.foreign, ns)
		socks, err := f.openMany(ns, min(per, left), "f")
		if err != nil {
			return err
		}
		left -= len(socks)
		f.pool = append(f.pool, socks...)
	}
	all := sc.allNSIDCount()
	for i, s := range f.pool {
		if err := subscribe(s, groupIPv4Route); err != nil {
			return err
		}
		if i < all {
			if err := s.SetOption(unix.NETLINK_LISTEN_ALL_NSID, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// addMonitor creates T3's monitor: a namespace M that gives the source the
// id monitorNSID, and one LISTEN_ALL_NSID subscriber in it.
func (f *fixture) addMonitor() error {
	m, err := f.newNS("M")
	if err != nil {
		return err
	}
	f.monitorN = m
	ctl, err := rtnl.Dial(m)
	if err != nil {
		return err
	}
	defer ctl.Close()
	src := f.sources[0]
	if _, err := ctl.Do(rtnl.NewNSID(src.ns.FD(), monitorNSID)); err != nil {
		return err
	}
	socks, err := f.openMany(m, 1, "monitor")
	if err != nil {
		return err
	}
	s := socks[0]
	if err := subscribe(s, groupIPv4Route); err != nil {
		return err
	}
	if err := s.SetOption(unix.NETLINK_LISTEN_ALL_NSID, true); err != nil {
		return err
	}
	if err := s.ForceReceiveBuffer(receiveBuffer); err != nil {
		return err
	}
	src.recipients = append(src.recipients, &recipient{sock: s, nsid: monitorNSID})
	return nil
}

// checkSilent proves that no socket that must not receive the batches got
// anything: the foreign pool (or the local candidates) and the extra
// subscribers. It runs after a round, outside the timed units.
func (f *fixture) checkSilent() error {
	var buf [8192]byte
	check := func(s *nlsock.Socket) error {
		n, _, err := unix.Recvfrom(s.FD(), buf[:], unix.MSG_DONTWAIT)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return nil
		case err != nil:
			return fmt.Errorf("%s, which must receive nothing: recv: %w", s, err)
		}
		return fmt.Errorf("%s, which must receive nothing, has a %d-byte datagram queued", s, n)
	}
	for _, s := range f.pool {
		if err := check(s); err != nil {
			return err
		}
	}
	for _, src := range f.sources {
		for _, s := range src.others {
			if err := check(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// injectStray is -inject-stray, the silence check's self-test: it sends
// one NLMSG_NOOP, from a socket of its own in the same namespace, to the
// first socket that must receive nothing, so that the check after the
// round must find it. It says what it did.
func (f *fixture) injectStray() (string, error) {
	var target *nlsock.Socket
	var ns *netns.NS
	switch {
	case len(f.pool) > 0 && f.scene.Local:
		target, ns = f.pool[0], f.sources[0].ns
	case len(f.pool) > 0:
		target, ns = f.pool[0], f.foreign[0]
	case len(f.sources[0].others) > 0:
		target, ns = f.sources[0].others[0], f.sources[0].ns
	default:
		return "nothing injected: no socket of this scene must stay silent", nil
	}
	from, err := nlsock.Open(ns, unix.NETLINK_ROUTE, "stray")
	if err != nil {
		return "", err
	}
	defer from.Close()
	if err := from.Bind(0, 0); err != nil {
		return "", err
	}
	m := netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(unix.NLMSG_NOOP), Sequence: 1}}
	if err := from.SendTo(m, target.Portid(), 0); err != nil {
		return "", err
	}
	return fmt.Sprintf("one NLMSG_NOOP sent to %s (portid %d)", target, target.Portid()), nil
}
