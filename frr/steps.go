// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// The objects a sequence adds in r1, on its stub link: an address and a
// route per family, each sequence its own.
func (s *sequence) addr4() netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 51, 100, byte(64*s.K + 1)}), 26)
}
func (s *sequence) addr6() netip.Prefix {
	return netip.PrefixFrom(netip.MustParseAddr(fmt.Sprintf("2001:db8:100:%d::1", s.K)), 64)
}
func (s *sequence) route4() netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(64 * s.K)}), 26)
}
func (s *sequence) route6() netip.Prefix {
	return netip.MustParsePrefix(fmt.Sprintf("2001:db8:200:%d::/64", s.K))
}

// addrPrefixes are the prefixes the addresses make (their subnets).
func (s *sequence) addrPrefixes() []netip.Prefix {
	return []netip.Prefix{s.addr4().Masked(), s.addr6().Masked()}
}
func (s *sequence) routePrefixes() []netip.Prefix { return []netip.Prefix{s.route4(), s.route6()} }

func (s *sequence) r(i int) *router { return s.lab.Routers[i] }

// mustDo sends a request from router r's control socket.
func (s *sequence) mustDo(t selftests.T, r *router, req rtnl.Request) {
	t.Helper()
	if err := r.do(req); err != nil {
		t.Fatalf("%v", err)
	}
}

func (s *sequence) stubIndex(t selftests.T) uint32 {
	t.Helper()
	idx, err := s.r(0).link(stubLink)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return idx
}

// addLearnt adds the sequence's addresses and routes (dev stub) in r1.
func (s *sequence) addLearnt(t selftests.T) {
	t.Helper()
	stub := s.stubIndex(t)
	for _, p := range []netip.Prefix{s.addr4(), s.addr6()} {
		s.mustDo(t, s.r(0), rtnl.NewAddr(stub, p))
	}
	for _, p := range s.routePrefixes() {
		s.mustDo(t, s.r(0), rtnl.NewRoute(rtnl.Route{Dst: p, OIF: stub}))
	}
}

// learn: an address and a route added with rtnetlink in r1 appear in
// r1's zebra, which agrees with the kernel's dump on every route and
// every address.
func (s *sequence) learn(t selftests.T) {
	s.changed = time.Now()
	s.addLearnt(t)
	s.converge(t, "learn", "r1's zebra has the new addresses and routes, and its RIB and addresses equal the kernel's dump",
		s.deadline(), s.zebraAgrees(true), s.changed)
}

// zebraAgrees checks r1's zebra against r1's kernel. learnt says whether
// the sequence's objects must be there (true) or gone (false); the routes
// are checked only while the stub link is up.
func (s *sequence) zebraAgrees(learnt bool) func() (bool, string, error) {
	return func() (bool, string, error) {
		r1 := s.r(0)
		k, err := r1.kernel()
		if err != nil {
			return false, "", err
		}
		z, err := r1.zebraView(prog.frr)
		if err != nil {
			return false, "", err
		}
		diffs := append(compareRIB(k, z), compareAddrs(k, z)...)
		stub := z.Interfaces[stubLink]
		for _, p := range []netip.Prefix{s.addr4(), s.addr6()} {
			has := slices.ContainsFunc(stub.IPAddresses, func(a struct {
				Address string `json:"address"`
			}) bool {
				return a.Address == p.String()
			})
			if has != learnt {
				diffs = append(diffs, fmt.Sprintf("zebra: address %s on %s: %v, want %v", p, stubLink, has, learnt))
			}
		}
		for _, p := range s.routePrefixes() {
			e, has := z.Routes[p]
			if learnt && (len(e) != 1 || e[0].Protocol != "kernel") {
				diffs = append(diffs, fmt.Sprintf("zebra: %s: %s, want a kernel route", p, describeZebra(e, has)))
			}
		}
		return len(diffs) == 0, "  " + strings.Join(diffs, "\n  "), nil
	}
}

func describeZebra(e []zroute, has bool) string {
	if !has {
		return "absent"
	}
	return fmt.Sprintf("%s %s", protocols(e), hopSet(zebraHops(e)))
}

// upstream says, for routers 1 and 2 (r2, r3), which link leads towards
// r1 and the router at its other end.
func upstream(i int) (ls linkSpec, local, peer int, localName, peerName string) {
	ls = links[i-1]
	return ls, ls.B, ls.A, ls.BName, ls.AName
}

// farState checks every prefix in every router but r1: present (via BGP,
// through the upstream router's address on the link, out of the local end
// of that link) or absent.
func (s *sequence) farState(present, absent []netip.Prefix) func() (bool, string, error) {
	return func() (bool, string, error) {
		var bad []string
		for i := 1; i < routerCount; i++ {
			_, local, peer, localName, peerName := upstream(i)
			r, up := s.r(local), s.r(peer)
			k, err := r.kernel()
			if err != nil {
				return false, "", err
			}
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
			for _, p := range present {
				rt, ok := k.route(p)
				if !ok {
					bad = append(bad, fmt.Sprintf("%s: %s absent, want it via %s (%s %v) dev %s", r.Name, p, up.Name, peerName, gws, localName))
					continue
				}
				if !rightHop(k, rt, gws, oif) {
					bad = append(bad, fmt.Sprintf("%s: %s, want proto bgp via one of %s's %s addresses %v dev %s (%d)", r.Name, k.describe(rt), up.Name, peerName, gws, localName, oif))
				}
			}
			for _, p := range absent {
				if rt, ok := k.route(p); ok {
					bad = append(bad, fmt.Sprintf("%s: %s still there, want it withdrawn", r.Name, k.describe(rt)))
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

// r1State checks r1's own kernel: the prefixes present (its own routes)
// or absent.
func (s *sequence) r1State(present, absent []netip.Prefix) func() (bool, string, error) {
	return func() (bool, string, error) {
		k, err := s.r(0).kernel()
		if err != nil {
			return false, "", err
		}
		var bad []string
		for _, p := range present {
			if _, ok := k.route(p); !ok {
				bad = append(bad, fmt.Sprintf("r1: %s absent", p))
			}
		}
		for _, p := range absent {
			if rt, ok := k.route(p); ok {
				bad = append(bad, fmt.Sprintf("r1: %s still there", k.describe(rt)))
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

func (s *sequence) everything() []netip.Prefix {
	return append(s.addrPrefixes(), s.routePrefixes()...)
}

// install: the far routers' kernels get the prefixes from BGP with the
// right nexthop (timed from learn's change: the routes travel meanwhile).
func (s *sequence) install(t selftests.T) {
	s.converge(t, "install", "every prefix in r2 and r3 via BGP through the upstream router", s.deadline(),
		s.farState(s.everything(), nil), s.changed)
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

// ping: r3 reaches r1's new addresses, IPv4 and IPv6, from its loopback
// addresses (the replies need r3's loopbacks in r1: BGP both ways).
func (s *sequence) ping(t selftests.T) {
	bin := findPing()
	if bin == "" {
		t.Skipf("no ping (Debian package iputils-ping)")
	}
	r3 := s.r(2)
	start := time.Now()
	var last string
	s.converge(t, "ping", "one echo reply from each of r1's addresses to r3", s.deadline(), func() (bool, string, error) {
		for _, c := range []struct{ src, dst netip.Addr }{
			{loopback4(2).Addr(), s.addr4().Addr()}, {loopback6(2).Addr(), s.addr6().Addr()},
		} {
			out, err := runIn(r3, bin, "-n", "-c", "1", "-W", "1", "-I", c.src.String(), c.dst.String())
			if err != nil {
				last = fmt.Sprintf("  ping -I %s %s in r3: %v\n  %s", c.src, c.dst, err, strings.ReplaceAll(strings.TrimSpace(out), "\n", "\n  "))
				return false, last, nil
			}
		}
		return true, "", nil
	}, start)
}

func findPing() string {
	if p, err := exec.LookPath("ping"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/ping", "/bin/ping"} {
		if _, err := os.Stat(p); err == nil {
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

// withdrawAddr: deleting r1's addresses removes their prefixes from every
// kernel, and nothing else (the routes stay).
func (s *sequence) withdrawAddr(t selftests.T) {
	start := time.Now()
	stub := s.stubIndex(t)
	for _, p := range []netip.Prefix{s.addr4(), s.addr6()} {
		s.mustDo(t, s.r(0), rtnl.DelAddr(stub, p))
	}
	s.converge(t, "withdraw_addr", "the address prefixes gone from every kernel, the routes still there", s.deadline(),
		all(s.r1State(s.routePrefixes(), s.addrPrefixes()), s.farState(s.routePrefixes(), s.addrPrefixes())), start)
}

// withdrawLink: taking the stub link down removes the routes through it
// from every kernel.
func (s *sequence) withdrawLink(t selftests.T) {
	start := time.Now()
	s.mustDo(t, s.r(0), rtnl.SetUp(s.stubIndex(t), false))
	s.converge(t, "withdraw_link", "the routes through the stub link gone from every kernel", s.deadline(),
		all(s.r1State(nil, s.everything()), s.farState(nil, s.everything())), start)
}

// reinstall: the link up again and the addresses and routes added again:
// everything comes back everywhere, and r1's zebra agrees with its kernel.
func (s *sequence) reinstall(t selftests.T) {
	start := time.Now()
	s.mustDo(t, s.r(0), rtnl.SetUp(s.stubIndex(t), true))
	s.addLearnt(t)
	s.converge(t, "reinstall", "every prefix back in r2 and r3 via BGP, and r1's zebra equal to its kernel", s.deadline(),
		all(s.farState(s.everything(), nil), s.zebraAgrees(true)), start)
}
