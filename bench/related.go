// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// The headline measurements of three related series, in the same table
// format: targeted address dumps (IFA_TARGET_NETNSID) against setns + dump,
// tc filter add/delete with and without a listener or NLM_F_ECHO, and
// namespaces created per second with a moved veth end. They are run with
// -scene related (or by name), not by default.
const (
	addrTargeted unitKind = iota + 100
	addrSetns
	tcFilter
	netnsRate
)

const (
	tcNoListener = iota
	tcListener
	tcEcho
)

const targetNSID = 5 // the id the requester's namespace gives the dumped one

var related = []Scene{
	{Name: "A1-getifaddrs-target", Kind: addrTargeted, N: 200, CompatMode: -1,
		Desc: "per unit N getifaddrs-style retrievals (RTM_GETLINK + RTM_GETADDR dumps) of a namespace with 5 interfaces (lo + 4 veth, 5 IPv4 addresses) with IFLA/IFA_TARGET_NETNSID, strict checking on"},
	{Name: "A1-getifaddrs-setns", Kind: addrSetns, N: 200, CompatMode: -1,
		Desc: "the same retrievals by setns into the namespace, a new socket, both dumps, close, setns back"},
	{Name: "TC-filter-nolisten", Kind: tcFilter, N: 200, D: tcNoListener, CompatMode: -1,
		Desc: "per unit N u32+mirred filter adds and deletes on lo's ingress qdisc, each ACKed; no RTNLGRP_TC listener in the guest"},
	{Name: "TC-filter-listen1", Kind: tcFilter, N: 200, D: tcListener, CompatMode: -1,
		Desc: "the same with one RTNLGRP_TC listener in the namespace, drained and checked (2N filter notifications, chain 0 notifications beside them)"},
	{Name: "TC-filter-echo", Kind: tcFilter, N: 200, D: tcEcho, CompatMode: -1,
		Desc: "the same with NLM_F_ECHO on every request, each echo checked, no listener"},
	{Name: "NS-rate-t1", Kind: netnsRate, N: 48, D: 1, CompatMode: -1,
		Desc: "per unit N namespaces by 1 thread: lo up, veth pair, one end moved to a host namespace, address, link up, route"},
	{Name: "NS-rate-t4", Kind: netnsRate, N: 48, D: 4, CompatMode: -1, Desc: "the same by 4 threads"},
	{Name: "NS-rate-t16", Kind: netnsRate, N: 48, D: 16, CompatMode: -1, Desc: "the same by 16 threads"},
}

// relatedFixture is a related scene's work unit and its cleanup.
type relatedFixture struct {
	unit  func() error
	ops   int
	after func() // after each unit, outside the timing
	close func()
}

func buildRelated(sc Scene) (*relatedFixture, error) {
	switch sc.Kind {
	case addrTargeted, addrSetns:
		return buildAddrDump(sc)
	case tcFilter:
		return buildTCFilter(sc)
	case netnsRate:
		return buildNetnsRate(sc)
	}
	return nil, fmt.Errorf("scene %s: unknown kind", sc.Name)
}

// buildAddrDump makes X (lo up, two veth pairs, an IPv4 address on each
// veth end) and O, which gives X the id targetNSID and holds the
// requester. The expected counts come from a dump inside X.
func buildAddrDump(sc Scene) (*relatedFixture, error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (*relatedFixture, error) { closeAll(); return nil, err }
	x, err := netns.New("X")
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { x.Close() })
	o, err := netns.New("O")
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { o.Close() })
	xc, err := rtnl.Dial(x)
	if err != nil {
		return fail(err)
	}
	defer xc.Close()
	if _, err := xc.Do(rtnl.SetUp(rtnl.LoopbackIndex, true)); err != nil {
		return fail(err)
	}
	for p := 0; p < 2; p++ {
		a, b := fmt.Sprintf("va%d", p), fmt.Sprintf("vb%d", p)
		if _, err := xc.Do(rtnl.NewVeth(a, b, -1)); err != nil {
			return fail(err)
		}
		for k, name := range []string{a, b} {
			rep, err := xc.Do(rtnl.GetLink(name))
			if err != nil || len(rep.Msgs) != 1 {
				return fail(fmt.Errorf("netns X: RTM_GETLINK %s: %v", name, err))
			}
			idx, err := rtnl.LinkIndex(rep.Msgs[0])
			if err != nil {
				return fail(err)
			}
			pfx := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 9, byte(p), byte(1 + k)}), 24)
			if _, err := xc.Do(rtnl.NewAddr(idx, pfx)); err != nil {
				return fail(err)
			}
		}
	}
	oc, err := rtnl.Dial(o)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { oc.Close() })
	if _, err := oc.Do(rtnl.NewNSID(x.FD(), targetNSID)); err != nil {
		return fail(err)
	}
	if err := oc.Sock.SetOption(unix.NETLINK_GET_STRICT_CHK, true); err != nil {
		return fail(err)
	}
	links, err := xc.Dump(rtnl.DumpLinksIn(-1))
	if err != nil {
		return fail(err)
	}
	addrs, err := xc.Dump(rtnl.DumpAddrsIn(unix.AF_UNSPEC, -1))
	if err != nil {
		return fail(err)
	}
	wantLinks, wantAddrs := len(links), len(addrs)
	origin, err := netns.Origin()
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { origin.Close() })

	check := func(how string, links, addrs []netlink.Message, targeted bool) error {
		if len(links) != wantLinks || len(addrs) != wantAddrs {
			return fmt.Errorf("%s: %d links and %d addresses, want %d and %d (the dump inside X)", how, len(links), len(addrs), wantLinks, wantAddrs)
		}
		if targeted {
			for _, m := range addrs {
				if id, ok := int32Attr(m.Data[unix.SizeofIfAddrmsg:], unix.IFA_TARGET_NETNSID); !ok || id != targetNSID {
					return fmt.Errorf("%s: an RTM_NEWADDR without IFA_TARGET_NETNSID %d (got %d, present %v)", how, targetNSID, id, ok)
				}
			}
		}
		return nil
	}
	f := &relatedFixture{ops: sc.N, close: closeAll}
	if sc.Kind == addrTargeted {
		f.unit = func() error {
			for i := 0; i < sc.N; i++ {
				l, err := oc.Dump(rtnl.DumpLinksIn(targetNSID))
				if err != nil {
					return err
				}
				a, err := oc.Dump(rtnl.DumpAddrsIn(unix.AF_UNSPEC, targetNSID))
				if err != nil {
					return err
				}
				if err := check("targeted dump from O", l, a, true); err != nil {
					return err
				}
			}
			return nil
		}
		return f, nil
	}
	f.unit = func() error {
		for i := 0; i < sc.N; i++ {
			if err := setnsDump(x, origin, check); err != nil {
				return err
			}
		}
		return nil
	}
	return f, nil
}

// setnsDump is the retrieval without the attribute: the calling (locked
// sender) thread joins x, dumps from a fresh socket and returns to origin.
func setnsDump(x, origin *netns.NS, check func(string, []netlink.Message, []netlink.Message, bool) error) error {
	if err := unix.Setns(x.FD(), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns X: %w", err)
	}
	defer func() {
		if err := unix.Setns(origin.FD(), unix.CLONE_NEWNET); err != nil {
			panic(fmt.Sprintf("setns back to the origin namespace: %v", err)) // the thread would stay in X
		}
	}()
	s, err := nlsock.OpenHere(unix.NETLINK_ROUTE, "getifaddrs", "X")
	if err != nil {
		return err
	}
	c := &rtnl.Conn{Sock: s}
	defer c.Close()
	l, err := c.Dump(rtnl.DumpLinksIn(-1))
	if err != nil {
		return err
	}
	a, err := c.Dump(rtnl.DumpAddrsIn(unix.AF_UNSPEC, -1))
	if err != nil {
		return err
	}
	return check("setns + dump in X", l, a, false)
}

func int32Attr(b []byte, typ uint16) (int32, bool) {
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		if l < 4 || l > len(b) {
			return 0, false
		}
		if binary.NativeEndian.Uint16(b[2:])&nlaTypeMask == typ && l == 8 {
			return int32(binary.NativeEndian.Uint32(b[4:])), true
		}
		b = b[min(len(b), nlsock.Align(l)):]
	}
	return 0, false
}

// buildTCFilter makes T with lo up and an ingress qdisc on lo; the unit
// adds and deletes a u32 filter with a mirred action N times.
func buildTCFilter(sc Scene) (*relatedFixture, error) {
	t, err := netns.New("T")
	if err != nil {
		return nil, err
	}
	c, err := rtnl.Dial(t)
	if err != nil {
		t.Close()
		return nil, err
	}
	var listener *nlsock.Socket
	closeAll := func() {
		if listener != nil {
			listener.Close()
		}
		c.Close()
		t.Close()
	}
	for _, req := range []rtnl.Request{rtnl.SetUp(rtnl.LoopbackIndex, true), rtnl.NewIngress(rtnl.LoopbackIndex)} {
		if _, err := c.Do(req); err != nil {
			closeAll()
			return nil, err
		}
	}
	if sc.D == tcListener {
		if listener, err = nlsock.Open(t, unix.NETLINK_ROUTE, "tc-listener"); err == nil {
			if err = listener.Bind(0, nlsock.GroupMask(unix.RTNLGRP_TC)); err == nil {
				err = listener.ForceReceiveBuffer(receiveBuffer)
			}
		}
		if err != nil {
			closeAll()
			return nil, err
		}
	}
	add, del := rtnl.NewU32Mirred(rtnl.LoopbackIndex, 1, rtnl.LoopbackIndex), rtnl.DelU32(rtnl.LoopbackIndex, 1)
	if sc.D == tcEcho {
		add.Msg.Header.Flags |= netlink.Echo
		del.Msg.Header.Flags |= netlink.Echo
	}
	want := [2]netlink.HeaderType{unix.RTM_NEWTFILTER, unix.RTM_DELTFILTER}
	rxBuf := make([]byte, 1<<16)
	f := &relatedFixture{ops: 2 * sc.N, close: closeAll}
	f.unit = func() error {
		for i := 0; i < sc.N; i++ {
			for k, req := range []rtnl.Request{add, del} {
				rep, err := c.Do(req)
				if err != nil {
					return err
				}
				switch {
				case sc.D == tcEcho && (len(rep.Msgs) != 1 || rep.Msgs[0].Header.Type != want[k] || rep.Msgs[0].Header.Sequence != rep.Seq):
					return fmt.Errorf("%s with NLM_F_ECHO: %d replies before the ACK, want its one echo (type %d, seq %d)", req.Name, len(rep.Msgs), want[k], rep.Seq)
				case sc.D != tcEcho && len(rep.Msgs) != 0:
					return fmt.Errorf("%s without NLM_F_ECHO: %d replies before the ACK, want none", req.Name, len(rep.Msgs))
				}
			}
		}
		if listener == nil {
			return nil
		}
		got := 0
		for {
			n, err := unix.Read(listener.FD(), rxBuf)
			if err == unix.EAGAIN {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: %w", listener, err)
			}
			msgs, err := nlsock.ParseMessages(rxBuf[:n])
			if err != nil {
				return fmt.Errorf("%s: %w", listener, err)
			}
			for _, m := range msgs {
				// The first filter of a chain creates chain 0 and the
				// last one's deletion removes it: RTM_NEWCHAIN and
				// RTM_DELCHAIN come with them.
				if m.Header.Type == unix.RTM_NEWCHAIN || m.Header.Type == unix.RTM_DELCHAIN {
					continue
				}
				if m.Header.Type != want[got%2] {
					return fmt.Errorf("%s: notification %d has type %d, want %d", listener, got, m.Header.Type, want[got%2])
				}
				got++
			}
		}
		if got != 2*sc.N {
			return fmt.Errorf("%s: %d notifications, want %d", listener, got, 2*sc.N)
		}
		return nil
	}
	return f, nil
}

// buildNetnsRate makes the host namespace H that stands in for the
// initial one (the bench never changes the machine's own namespace); each
// unit creates N namespaces from D goroutines at once and closes them
// afterwards, outside the timing.
func buildNetnsRate(sc Scene) (*relatedFixture, error) {
	h, err := netns.New("H")
	if err != nil {
		return nil, err
	}
	var made []*netns.NS
	var mu sync.Mutex
	var serial atomic.Uint32
	closeMade := func() {
		for _, n := range made {
			n.Close()
		}
		made = made[:0]
	}
	threads := max(sc.D, 1)
	f := &relatedFixture{ops: sc.N, after: closeMade, close: func() { closeMade(); h.Close() }}
	f.unit = func() error {
		var wg sync.WaitGroup
		errs := make([]error, threads)
		for t := 0; t < threads; t++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := t; i < sc.N && errs[t] == nil; i += threads {
					n, err := oneNamespace(h, serial.Add(1))
					if n != nil {
						mu.Lock()
						made = append(made, n)
						mu.Unlock()
					}
					errs[t] = err
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	return f, nil
}

// oneNamespace is one container's network setup: a namespace with lo up, a
// veth pair whose other end moves to h, an address and a route on the end
// that stays.
func oneNamespace(h *netns.NS, id uint32) (*netns.NS, error) {
	n, err := netns.New(fmt.Sprintf("C%d", id))
	if err != nil {
		return nil, err
	}
	c, err := rtnl.Dial(n)
	if err != nil {
		return n, err
	}
	defer c.Close()
	host := fmt.Sprintf("h%d", id)
	index := func(name string) (uint32, error) {
		rep, err := c.Do(rtnl.GetLink(name))
		if err != nil {
			return 0, err
		}
		if len(rep.Msgs) != 1 {
			return 0, fmt.Errorf("RTM_GETLINK %s: %d replies", name, len(rep.Msgs))
		}
		return rtnl.LinkIndex(rep.Msgs[0])
	}
	if _, err := c.Do(rtnl.SetUp(rtnl.LoopbackIndex, true)); err != nil {
		return n, err
	}
	if _, err := c.Do(rtnl.NewVeth("eth0", host, -1)); err != nil {
		return n, err
	}
	hi, err := index(host)
	if err != nil {
		return n, err
	}
	if _, err := c.Do(rtnl.MoveLink(hi, h.FD())); err != nil {
		return n, err
	}
	ei, err := index("eth0")
	if err != nil {
		return n, err
	}
	addr := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(id >> 8), byte(id), 2}), 24)
	for _, req := range []rtnl.Request{
		rtnl.NewAddr(ei, addr),
		rtnl.SetUp(ei, true),
		rtnl.NewRoute(rtnl.Route{Dst: netip.MustParsePrefix("192.168.0.0/16"), OIF: ei}),
	} {
		if _, err := c.Do(req); err != nil {
			return n, fmt.Errorf("netns %s: %w", n.Name, err)
		}
	}
	return n, nil
}
