// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// The objects a sequence adds in every router i, on its stub link: an
// address per family, and two routes per family: the "deleted" routes,
// which withdraw_route deletes with RTM_DELROUTE while the link is up,
// and the "link" routes, which go with the link in withdraw_link. Each
// sequence (K) and router has its own.
func (s *sequence) addr4(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 51, 100, byte(64*s.K + 16*i + 1)}), 28)
}
func (s *sequence) addr6(i int) netip.Prefix {
	return netip.MustParsePrefix(fmt.Sprintf("2001:db8:100:%x::1/64", 16*s.K+i))
}
func (s *sequence) delRoutes(i int) []netip.Prefix {
	return []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(64*s.K + 16*i)}), 29),
		netip.MustParsePrefix(fmt.Sprintf("2001:db8:200:%x::/64", 16*s.K+i))}
}
func (s *sequence) linkRoutes(i int) []netip.Prefix {
	return []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(64*s.K + 16*i + 8)}), 29),
		netip.MustParsePrefix(fmt.Sprintf("2001:db8:201:%x::/64", 16*s.K+i))}
}
func (s *sequence) addrs(i int) []netip.Prefix { return []netip.Prefix{s.addr4(i), s.addr6(i)} }

// addrPrefixes are the prefixes router i's addresses make (their subnets).
func (s *sequence) addrPrefixes(i int) []netip.Prefix {
	return []netip.Prefix{s.addr4(i).Masked(), s.addr6(i).Masked()}
}
func (s *sequence) routes(i int) []netip.Prefix { return append(s.delRoutes(i), s.linkRoutes(i)...) }
func (s *sequence) everything(i int) []netip.Prefix {
	return append(s.addrPrefixes(i), s.routes(i)...)
}

// state says which of every router's objects are there after a step.
type state struct{ Addrs, DelRoutes, LinkRoutes bool }

var (
	learnt     = state{true, true, true}
	noAddrs    = state{false, true, true}
	linkRoutes = state{false, false, true}
	nothing    = state{}
)

// split sorts router i's prefixes into those there and those gone in st.
func (s *sequence) split(st state, i int) (present, absent []netip.Prefix) {
	for _, g := range []struct {
		there bool
		ps    []netip.Prefix
	}{{st.Addrs, s.addrPrefixes(i)}, {st.DelRoutes, s.delRoutes(i)}, {st.LinkRoutes, s.linkRoutes(i)}} {
		if g.there {
			present = append(present, g.ps...)
		} else {
			absent = append(absent, g.ps...)
		}
	}
	return present, absent
}

func (s *sequence) r(i int) *router { return s.lab.Routers[i] }

// mustDo sends a request from router r's control socket.
func (s *sequence) mustDo(t selftests.T, r *router, req rtnl.Request) {
	t.Helper()
	if err := r.do(req); err != nil {
		t.Fatalf("%v", err)
	}
}

func (s *sequence) stubIndex(t selftests.T, i int) uint32 {
	t.Helper()
	idx, err := s.r(i).link(stubLink)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return idx
}

// addLearnt adds the sequence's addresses and routes (dev stub) in every
// router.
func (s *sequence) addLearnt(t selftests.T) {
	t.Helper()
	for i := range routerCount {
		stub := s.stubIndex(t, i)
		for _, p := range s.addrs(i) {
			s.mustDo(t, s.r(i), rtnl.NewAddr(stub, p))
		}
		for _, p := range s.routes(i) {
			s.mustDo(t, s.r(i), rtnl.NewRoute(rtnl.Route{Dst: p, OIF: stub}))
		}
	}
}

// learn: an address and routes added with rtnetlink in every router
// appear in that router's zebra, and every zebra agrees with its kernel's
// dump on every route and every address.
func (s *sequence) learn(t selftests.T) {
	s.changed = time.Now()
	s.addLearnt(t)
	s.converge(t, "learn", "every router's zebra has its new addresses and routes, every zebra's RIB and addresses equal its kernel's dump, DAD done on every stub",
		s.deadline(), all(s.ownState(learnt), s.zebrasAgree(learnt), s.dadDone(false)), s.changed)
	want := s.ownEvents(nothing, learnt)
	want.Early = s.farEvents(nothing, learnt)
	came := s.observed(t, want)
	s.carried = slices.DeleteFunc(slices.Clone(want.Early), func(e event) bool { return slices.Contains(came, e) })
}

// dadDone: no IPv6 address on any router's stub link still tentative
// (DAD ends asynchronously, and with it come the address's second
// RTM_NEWADDR and its local and anycast routes), and with linkLocal, the
// stub's link-local address there.
func (s *sequence) dadDone(linkLocal bool) func() (bool, string, error) {
	return func() (bool, string, error) {
		var bad []string
		for i, r := range s.lab.Routers {
			k, err := r.kernel()
			if err != nil {
				return false, "", err
			}
			hasLL := false
			for _, a := range k.Addrs {
				if a.Index != r.StubIndex {
					continue
				}
				if a.Tentative {
					bad = append(bad, fmt.Sprintf("%s: %s on %s still tentative", r.Name, a.Prefix, stubLink))
				}
				hasLL = hasLL || (linkLocal && a.Prefix == s.linkLocal(i))
			}
			if linkLocal && !hasLL {
				bad = append(bad, fmt.Sprintf("%s: no link-local %s on %s", r.Name, s.linkLocal(i), stubLink))
			}
		}
		return len(bad) == 0, "  " + strings.Join(bad, "\n  "), nil
	}
}

// zebrasAgree checks every router's zebra against its kernel: the same
// routes with the same nexthops, the same addresses, and the router's own
// objects there or gone as st says.
func (s *sequence) zebrasAgree(st state) func() (bool, string, error) {
	return func() (bool, string, error) {
		// The routers are read at once: a zebra's view takes three vtysh
		// runs, slow on a loaded or emulated CPU.
		diffs := make([][]string, len(s.lab.Routers))
		errs := make([]error, len(s.lab.Routers))
		var wg sync.WaitGroup
		for i, r := range s.lab.Routers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				diffs[i], errs[i] = s.zebraDiffs(st, i, r)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return false, "", err
		}
		all := slices.Concat(diffs...)
		return len(all) == 0, "  " + strings.Join(all, "\n  "), nil
	}
}

// zebraDiffs lists where router i's zebra and kernel disagree, and its
// own objects that are not as st says.
func (s *sequence) zebraDiffs(st state, i int, r *router) ([]string, error) {
	k, err := r.kernel()
	if err != nil {
		return nil, err
	}
	z, err := r.zebraView(prog.frr)
	if err != nil {
		return nil, err
	}
	d := append(compareRIB(k, z), compareAddrs(k, z)...)
	if len(d) > 0 {
		// zebra's view takes three vtysh runs, seconds on a loaded or
		// emulated CPU, and routes its zebra installed meanwhile are in
		// its view but not in the dump before it. It agrees with the
		// kernel as well if it equals a dump taken right after it; a
		// notification zebra missed leaves it unequal to both.
		later, err := r.kernel()
		if err != nil {
			return nil, err
		}
		if d = append(compareRIB(later, z), compareAddrs(later, z)...); len(d) > 0 {
			d = append(d, "(against the kernel's dump after zebra's view; the one before it differed too)")
		}
	}
	stub := z.Interfaces[stubLink]
	for _, p := range s.addrs(i) {
		has := slices.ContainsFunc(stub.IPAddresses, func(a struct {
			Address string `json:"address"`
		}) bool {
			return a.Address == p.String()
		})
		if has != st.Addrs {
			d = append(d, fmt.Sprintf("zebra: address %s on %s: %v, want %v", p, stubLink, has, st.Addrs))
		}
	}
	present, absent := s.split(st, i)
	for _, p := range s.routes(i) {
		e, has := z.Routes[p]
		switch {
		case slices.Contains(present, p) && (len(e) != 1 || e[0].Protocol != "kernel"):
			d = append(d, fmt.Sprintf("zebra: %s: %s, want a kernel route", p, describeZebra(e, has)))
		case slices.Contains(absent, p) && has:
			d = append(d, fmt.Sprintf("zebra: %s: %s, want it gone", p, describeZebra(e, has)))
		}
	}
	var diffs []string
	for _, x := range d {
		diffs = append(diffs, r.Name+": "+x)
	}
	return diffs, nil
}

func describeZebra(e []zroute, has bool) string {
	if !has {
		return "absent"
	}
	return fmt.Sprintf("%s %s", protocols(e), hopSet(zebraHops(e)))
}

// toward says, for router r and another router j, which neighbour of r
// leads to j, r's end of the link to it and the neighbour's end.
func toward(r, j int) (peer int, localName, peerName string) {
	if j < r {
		ls := links[r-1]
		return ls.A, ls.BName, ls.AName
	}
	ls := links[r]
	return ls.B, ls.AName, ls.BName
}

// farState checks every router's prefixes in every other router: those
// st says are there present (via BGP, through the neighbour towards their
// owner's address on the link, out of the local end of that link), the
// others absent.
func (s *sequence) farState(st state) func() (bool, string, error) {
	return func() (bool, string, error) {
		var bad []string
		for ri, r := range s.lab.Routers {
			k, err := r.kernel()
			if err != nil {
				return false, "", err
			}
			for j := range routerCount {
				if j == ri {
					continue
				}
				peer, localName, peerName := toward(ri, j)
				up := s.r(peer)
				uk, err := up.kernel()
				if err != nil {
					return false, "", err
				}
				oif, err := r.link(localName)
				if err != nil {
					return false, "", err
				}
				upIdx, err := up.link(peerName)
				if err != nil {
					return false, "", err
				}
				gws := uk.addrsOf(upIdx)
				present, absent := s.split(st, j)
				for _, p := range present {
					rt, ok := k.route(p)
					if !ok {
						bad = append(bad, fmt.Sprintf("%s: r%d's %s absent, want it via %s (%s %v) dev %s", r.Name, j+1, p, up.Name, peerName, gws, localName))
						continue
					}
					if !rightHop(k, rt, gws, oif) {
						bad = append(bad, fmt.Sprintf("%s: r%d's %s, want proto bgp via one of %s's %s addresses %v dev %s (%d)", r.Name, j+1, k.describe(rt), up.Name, peerName, gws, localName, oif))
					}
				}
				for _, p := range absent {
					if rt, ok := k.route(p); ok {
						bad = append(bad, fmt.Sprintf("%s: r%d's %s still there, want it withdrawn", r.Name, j+1, k.describe(rt)))
					}
				}
			}
		}
		return len(bad) == 0, "  " + strings.Join(bad, "\n  "), nil
	}
}

// rightHop: a BGP route with one nexthop through one of gws (the upstream
// router's addresses on the link, link-local included: FRR uses the
// peer's link-local address for IPv6) out of oif.
func rightHop(k kstate, r kroute, gws []string, oif uint32) bool {
	hs := k.hops(r)
	if r.Protocol != unix.RTPROT_BGP || len(hs) != 1 || hs[0].OIF != oif || !hs[0].Gateway.IsValid() {
		return false
	}
	for _, g := range gws {
		if p, err := netip.ParsePrefix(g); err == nil && p.Addr() == hs[0].Gateway {
			return true
		}
	}
	return false
}

// ownState checks every router's kernel for its own prefixes: present or
// absent as st says.
func (s *sequence) ownState(st state) func() (bool, string, error) {
	return func() (bool, string, error) {
		var bad []string
		for i, r := range s.lab.Routers {
			k, err := r.kernel()
			if err != nil {
				return false, "", err
			}
			present, absent := s.split(st, i)
			for _, p := range present {
				if _, ok := k.route(p); !ok {
					bad = append(bad, fmt.Sprintf("%s: its own %s absent", r.Name, p))
				}
			}
			for _, p := range absent {
				if rt, ok := k.route(p); ok {
					bad = append(bad, fmt.Sprintf("%s: its own %s still there", r.Name, k.describe(rt)))
				}
			}
		}
		return len(bad) == 0, "  " + strings.Join(bad, "\n  "), nil
	}
}

// all combines checks: each must hold.
func all(checks ...func() (bool, string, error)) func() (bool, string, error) {
	return func() (bool, string, error) {
		ok, states := true, []string{}
		for _, c := range checks {
			good, state, err := c()
			if err != nil {
				return false, "", err
			}
			if !good {
				ok = false
				states = append(states, state)
			}
		}
		return ok, strings.Join(states, "\n"), nil
	}
}

// settled is a step's whole condition once its change is made: every
// kernel as st says, and every zebra equal to its kernel.
func (s *sequence) settled(st state) func() (bool, string, error) {
	return all(s.ownState(st), s.farState(st), s.zebrasAgree(st))
}

// install: every router's prefixes reach every other router's kernel
// from BGP with the right nexthop (timed from learn's change: the routes
// travel meanwhile), and every zebra agrees with its kernel.
func (s *sequence) install(t selftests.T) {
	s.converge(t, "install", "every router's prefixes in every other router via BGP through the neighbour towards it, every zebra equal to its kernel",
		s.deadline(), s.settled(learnt), s.changed)
	s.observed(t, stepEvents{Zebra: s.carried, Rules: []allowance{zebraNexthops}})
}

// sessionsUp: every router has every other router's loopbacks.
func (s *sequence) sessionsUp() (bool, string, error) {
	var bad []string
	for i, r := range s.lab.Routers {
		k, err := r.kernel()
		if err != nil {
			return false, "", err
		}
		for j := range routerCount {
			if j == i {
				continue
			}
			for _, p := range []netip.Prefix{loopback4(j), loopback6(j)} {
				if rt, ok := k.route(p); !ok || rt.Protocol != unix.RTPROT_BGP {
					bad = append(bad, fmt.Sprintf("%s: no BGP route to r%d's loopback %s", r.Name, j+1, p))
				}
			}
		}
	}
	return len(bad) == 0, "  " + strings.Join(bad, "\n  "), nil
}

// ping: r3 reaches r1's new addresses and r1 reaches r3's, IPv4 and IPv6,
// from their loopback addresses (the replies need the loopbacks routed
// back: BGP both ways); every zebra still agrees with its kernel.
func (s *sequence) ping(t selftests.T) {
	bin := findPing()
	if bin == "" {
		t.Fatalf("no ping (Debian package iputils-ping): it was there when the program started")
	}
	start := time.Now()
	s.converge(t, "ping", "one echo reply from each of r1's addresses to r3 and from each of r3's to r1", s.deadline(), func() (bool, string, error) {
		for _, c := range []struct {
			from, to int
		}{{2, 0}, {0, 2}} {
			for _, a := range []struct{ src, dst netip.Addr }{
				{loopback4(c.from).Addr(), s.addr4(c.to).Addr()}, {loopback6(c.from).Addr(), s.addr6(c.to).Addr()},
			} {
				r := s.r(c.from)
				out, err := runIn(r, bin, "-n", "-c", "1", "-W", "1", "-I", a.src.String(), a.dst.String())
				if err != nil {
					return false, fmt.Sprintf("  ping -I %s %s in %s: %v\n  %s", a.src, a.dst, r.Name, err, strings.ReplaceAll(strings.TrimSpace(out), "\n", "\n  ")), nil
				}
			}
		}
		return true, "", nil
	}, start)
	s.converge(t, "ping_zebra", "every zebra equal to its kernel", s.deadline(), s.zebrasAgree(learnt), start)
	s.observed(t, stepEvents{Rules: []allowance{zebraNexthops}})
}

// pingDirs are where ping is looked for when PATH lacks it (a variable:
// the tests hide ping).
var pingDirs = []string{"/usr/bin", "/bin"}

func findPing() string {
	if p, err := exec.LookPath("ping"); err == nil {
		return p
	}
	for _, d := range pingDirs {
		p := filepath.Join(d, "ping")
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// runIn runs a short client in router r's namespace and returns its
// output.
func runIn(r *router, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := startIn(r.NS, cmd, 0)
	if err != nil {
		return "", err
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.Kill(unix.SIGKILL)
		<-p.done
	}
	return out.String(), p.err
}

// withdrawAddr: deleting every router's addresses, the link up, removes
// their prefixes from every kernel and zebra, and nothing else.
func (s *sequence) withdrawAddr(t selftests.T) {
	start := time.Now()
	for i := range routerCount {
		stub := s.stubIndex(t, i)
		for _, p := range s.addrs(i) {
			s.mustDo(t, s.r(i), rtnl.DelAddr(stub, p))
		}
	}
	s.converge(t, "withdraw_addr", "the address prefixes gone from every kernel and zebra, the routes still there", s.deadline(),
		s.settled(noAddrs), start)
	want := s.ownEvents(learnt, noAddrs)
	want.Zebra = s.farEvents(learnt, noAddrs)
	s.observed(t, want)
}

// withdrawRoute: deleting the "deleted" routes with RTM_DELROUTE, their
// link up, removes them from every kernel; a zebra hears of it only
// through the notification (nothing else about the link changes).
func (s *sequence) withdrawRoute(t selftests.T) {
	start := time.Now()
	for i := range routerCount {
		stub := s.stubIndex(t, i)
		for _, p := range s.delRoutes(i) {
			s.mustDo(t, s.r(i), rtnl.DelRoute(rtnl.Route{Dst: p, OIF: stub}))
		}
	}
	s.converge(t, "withdraw_route", "the deleted routes gone from every kernel and zebra, the other routes still there", s.deadline(),
		s.settled(linkRoutes), start)
	want := s.ownEvents(noAddrs, linkRoutes)
	want.Zebra = s.farEvents(noAddrs, linkRoutes)
	s.observed(t, want)
}

// withdrawLink: taking every stub link down removes the routes through
// it from every kernel and zebra.
func (s *sequence) withdrawLink(t selftests.T) {
	s.readLinkLocals(t)
	start := time.Now()
	for i := range routerCount {
		s.mustDo(t, s.r(i), rtnl.SetUp(s.stubIndex(t, i), false))
	}
	s.converge(t, "withdraw_link", "the routes through the stub links gone from every kernel and zebra", s.deadline(),
		s.settled(nothing), start)
	want := stepEvents{Ordered: s.linkEvents(false), Rules: []allowance{zebraNexthops, h1Carrier}}
	for i := range routerCount {
		// IPv4 forgets the routes of a link that goes down without a
		// notification (fib_sync_down_dev()); IPv6 deletes its routes
		// and its link-local address with one each (addrconf_ifdown(),
		// rt6_sync_down_dev()).
		want.Required = append(want.Required, routeEvent(i, s.linkRoutes(i)[1], true))
		want.Required = append(want.Required, s.linkLocalEvents(i, true)...)
	}
	want.Zebra = append(s.farEvents(linkRoutes, nothing), stubSubnetEvents(true)...)
	s.observed(t, want)
}

// reinstall: the links up again and the addresses and routes added
// again: everything comes back everywhere, and every zebra agrees with its
// kernel.
func (s *sequence) reinstall(t selftests.T) {
	start := time.Now()
	for i := range routerCount {
		s.mustDo(t, s.r(i), rtnl.SetUp(s.stubIndex(t, i), true))
	}
	s.addLearnt(t)
	s.converge(t, "reinstall", "every prefix back in every router via BGP, every zebra equal to its kernel, DAD done on every stub", s.deadline(),
		all(s.settled(learnt), s.dadDone(true)), start)
	want := s.ownEvents(nothing, learnt)
	want.Ordered = append(s.linkEvents(true), want.Ordered...)
	want.Rules = append(want.Rules, stubLinkWatch, h1Carrier)
	for i := range routerCount {
		// The link up: IPv4 adds the prefix and broadcast routes of the
		// stub's own address again (fib_add_ifaddr(); its local route
		// stayed), IPv6 its multicast and link-local routes and, after
		// DAD, the link-local address.
		base := stubBase(i)
		want.Required = append(want.Required, routeEvent(i, base.Masked(), false),
			kernelRoute(i, "broadcast", lastAddr(base), "local", false))
		want.Required = append(want.Required, s.linkLocalEvents(i, false)...)
	}
	want.Zebra = append(s.farEvents(nothing, learnt), stubSubnetEvents(false)...)
	s.observed(t, want)
}

// The events each step's changes make the observer print, each with the
// id (in obs) of the router it happens in.

func routeEvent(i int, p netip.Prefix, deleted bool) event {
	return event{NSID: routerNSID(i), Label: "ROUTE", Deleted: deleted, Key: fmt.Sprintf("unicast %s table main", p)}
}

// ownEvents are the notifications of the harness's own requests in every
// router, from before to after, in the order it makes them (each address
// and route added or deleted), and what the kernel itself adds or
// deletes for each address.
func (s *sequence) ownEvents(before, after state) stepEvents {
	out := stepEvents{Rules: []allowance{zebraNexthops}}
	for i := range routerCount {
		if before.Addrs != after.Addrs {
			for _, a := range s.addrs(i) {
				e := event{NSID: routerNSID(i), Label: "ADDR", Deleted: !after.Addrs, Key: addrKey(a, s.r(i).StubIndex)}
				if a.Addr().Is6() && after.Addrs {
					e.Key += " tentative"
				}
				out.Ordered = append(out.Ordered, e)
				out.Required = append(out.Required, s.addrConsequences(i, a, !after.Addrs)...)
			}
		}
		for _, g := range []struct {
			b, a bool
			ps   []netip.Prefix
		}{{before.DelRoutes, after.DelRoutes, s.delRoutes(i)}, {before.LinkRoutes, after.LinkRoutes, s.linkRoutes(i)}} {
			if g.b != g.a {
				for _, p := range g.ps {
					out.Ordered = append(out.Ordered, routeEvent(i, p, !g.a))
				}
			}
		}
	}
	return out
}

// addrConsequences are the kernel's own notifications for address a of
// router i added or deleted. IPv4 (fib_add_ifaddr(), fib_del_ifaddr()):
// the local route, the prefix route and the network's broadcast route.
// IPv6: the prefix route with the address (addrconf_prefix_route()), and
// when DAD ends the address again without "tentative" and its local and
// subnet-router anycast routes (__ipv6_ifa_notify()); a deletion deletes
// the three routes.
func (s *sequence) addrConsequences(i int, a netip.Prefix, deleted bool) []event {
	if a.Addr().Is4() {
		return []event{kernelRoute(i, "local", a.Addr(), "local", deleted), routeEvent(i, a.Masked(), deleted),
			kernelRoute(i, "broadcast", lastAddr(a), "local", deleted)}
	}
	out := []event{routeEvent(i, a.Masked(), deleted), kernelRoute(i, "local", a.Addr(), "local", deleted),
		kernelRoute(i, "anycast", a.Masked().Addr(), "local", deleted)}
	if !deleted {
		out = append(out, event{NSID: routerNSID(i), Label: "ADDR", Key: addrKey(a, s.r(i).StubIndex)})
	}
	return out
}

// linkLocal is router i's stub link's link-local address, as
// withdraw_link found it before taking the link down: the kernel makes
// the same again when the link comes up (from the same MAC address).
func (s *sequence) linkLocal(i int) netip.Prefix { return s.linkLocals[i] }

// readLinkLocals reads every router's stub link's link-local address.
func (s *sequence) readLinkLocals(t selftests.T) {
	t.Helper()
	s.linkLocals = make([]netip.Prefix, routerCount)
	for i, r := range s.lab.Routers {
		k, err := r.kernel()
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, a := range k.Addrs {
			if a.Index == r.StubIndex && a.Prefix.Addr().Is6() && a.Prefix.Addr().IsLinkLocalUnicast() {
				s.linkLocals[i] = a.Prefix
			}
		}
		if !s.linkLocals[i].IsValid() {
			t.Fatalf("%s: no link-local address on %s (dev %d) before withdraw_link", r.Name, stubLink, r.StubIndex)
		}
	}
}

// linkLocalEvents are what IPv6 notifies for router i's stub link when it
// goes down (deleted) or comes up: its link-local address, that
// address's local route, the fe80:: anycast route, the fe80::/64 route
// and the ff00::/8 multicast route.
func (s *sequence) linkLocalEvents(i int, deleted bool) []event {
	ll := s.linkLocal(i)
	return []event{
		{NSID: routerNSID(i), Label: "ADDR", Deleted: deleted, Key: addrKey(ll, s.r(i).StubIndex)},
		kernelRoute(i, "local", ll.Addr(), "local", deleted), kernelRoute(i, "anycast", ll.Masked().Addr(), "local", deleted),
		routeEvent(i, ll.Masked(), deleted), {NSID: routerNSID(i), Label: "ROUTE", Deleted: deleted, Key: "multicast ff00::/8 table local"},
	}
}

// kernelRoute is a route of type typ to the address a in table table of
// router i, as ip prints it.
func kernelRoute(i int, typ string, a netip.Addr, table string, deleted bool) event {
	return event{NSID: routerNSID(i), Label: "ROUTE", Deleted: deleted, Key: fmt.Sprintf("%s %s table %s", typ, a, table)}
}

// lastAddr is the last address of p (IPv4: its broadcast address).
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	for k := range 4 {
		b[3-k] |= byte(host >> (8 * k))
	}
	return netip.AddrFrom4(b)
}

// stubSubnetEvents are the BGP routes every router's zebra deletes or
// installs for the other routers' stub link subnets (FRR redistributes
// connected routes) when the stub links go down or come up.
func stubSubnetEvents(deleted bool) []event {
	var out []event
	for i := range routerCount {
		for j := range routerCount {
			if j != i {
				out = append(out, routeEvent(i, stubBase(j).Masked(), deleted))
			}
		}
	}
	return out
}

// The rules for what the lab cannot predict one by one.
var (
	zebraNexthops = allowance{"a nexthop object in a router (zebra's own: the harness makes none there)",
		func(e printed) bool { return e.Label == "NEXTHOP" && e.NSID != fmt.Sprint(markerNSID) }}
	stubLinkWatch = allowance{"the link watch's report of a router's stub link, up, in its new operstate",
		func(e printed) bool {
			return e.Label == "LINK" && !e.Deleted && e.NSID != fmt.Sprint(markerNSID) && strings.HasPrefix(e.Key, linkKeyPrefix(stubLink, true)+" ")
		}}
	h1Carrier = allowance{"the link watch's report of an end in h1 of a stub link, up, whose carrier changed",
		func(e printed) bool {
			if e.Label != "LINK" || e.Deleted || e.NSID != fmt.Sprint(markerNSID) {
				return false
			}
			for i := range routerCount {
				if strings.HasPrefix(e.Key, linkKeyPrefix(stubPeer(i), true)+" ") {
					return true
				}
			}
			return false
		}}
)

// zebraRoutes explains a zebra's own route changes: a BGP route (proto
// bgp, table main) in a router, added or deleted, to a prefix another
// router redistributes and this one does not (announced). While the
// sessions come back one by one a zebra installs such a route, deletes
// it and installs it again, or replaces it as the best path or its
// nexthop changes, in any step. What a step must leave is checked
// otherwise: by convergence against every kernel's and zebra's dumps,
// and in the observer by stepEvents.Zebra, each the last event for its
// route.
func (s *sequence) zebraRoutes() allowance {
	return allowance{"a BGP route a zebra installs or deletes, to a prefix another router announces (zebra's own route changes)",
		func(e printed) bool {
			f := strings.Fields(e.Key)
			if !isBGP(e) || !isRouter(e.NSID) || len(f) != 4 || f[0] != "unicast" || f[3] != "main" {
				return false
			}
			p, err := netip.ParsePrefix(f[1])
			if a, aerr := netip.ParseAddr(f[1]); aerr == nil {
				p, err = netip.PrefixFrom(a, a.BitLen()), nil
			}
			if err != nil {
				return false
			}
			other := false
			for j := range routerCount {
				has := slices.Contains(s.announced(j), p)
				if routerNSID(j) == e.NSID && has {
					return false // its own: never a BGP route there (eBGP drops its own AS)
				}
				other = other || has
			}
			return other
		}}
}

// announced are the prefixes router j's bgpd announces (it redistributes
// its connected and kernel routes): its loopbacks, the subnets of its
// links, its stub link's, and the sequence's addresses and routes.
func (s *sequence) announced(j int) []netip.Prefix {
	out := []netip.Prefix{loopback4(j), loopback6(j), stubBase(j).Masked()}
	for _, l := range links {
		if l.A == j || l.B == j {
			out = append(out, l.A4.Masked(), l.A6.Masked())
		}
	}
	return append(out, s.everything(j)...)
}

// farEvents are the BGP routes every router's zebra installs or deletes
// for the other routers' prefixes that came or went from before to after.
func (s *sequence) farEvents(before, after state) []event {
	var out []event
	for j := range routerCount {
		bp, _ := s.split(before, j)
		ap, _ := s.split(after, j)
		for i := range routerCount {
			if i == j {
				continue
			}
			for _, p := range s.everything(j) {
				if was, is := slices.Contains(bp, p), slices.Contains(ap, p); was != is {
					out = append(out, routeEvent(i, p, !is))
				}
			}
		}
	}
	return out
}

// linkEvents are the RTM_NEWLINKs of every router's stub link set down
// or up: the one dev_change_flags() sends carries the new IFF_UP; its
// operstate is whatever the link watch has reached by then (a link set up
// may say UNKNOWN, LOWERLAYERDOWN or UP), so a link event is wanted by
// name and admin state (linkWanted).
func (s *sequence) linkEvents(up bool) []event {
	var out []event
	for i := range routerCount {
		out = append(out, event{NSID: routerNSID(i), Label: "LINK", Key: linkKeyPrefix(stubLink, up)})
	}
	return out
}

// observed makes a marker, waits for the observer to print it, and judges
// what it printed since the last marker against want; it returns the
// Early events that came. The next step's lines start after the marker.
func (s *sequence) observed(t selftests.T, want stepEvents) []event {
	t.Helper()
	from := s.obsFrom
	to, id, err := s.lab.obs.mark(observerWithin)
	if err != nil {
		t.Fatalf("the observer: %v", err)
	}
	s.obsFrom = to
	want.Marker = markerEvent(id)
	want.Rules = append(slices.Clone(want.Rules), s.zebraRoutes())
	lines := s.lab.obs.since(from)[:to-from]
	problems, early := judgeObserved(lines, want)
	if len(problems) > 0 {
		t.Errorf("%s (a NETLINK_LISTEN_ALL_NSID subscriber with an id for every router) did not print exactly what the step changed: %d problem(s):\n  %s\nit printed (%d lines since the step's change):\n%s",
			s.lab.obs, len(problems), strings.Join(problems, "\n  "), len(lines), describeObserved(lines))
		return early
	}
	t.Logf("%s: %d ordered and %d required events each once, %d zebra routes and %d early ones each the last for its route, none doubled, among its %d lines",
		s.lab.obs, len(want.Ordered), len(want.Required), len(want.Zebra), len(early), len(lines))
	return early
}
