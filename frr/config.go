// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// bgpNeighbor is one eBGP session: IPv4 sessions carry IPv4 unicast,
// IPv6 sessions IPv6 unicast.
type bgpNeighbor struct {
	Addr netip.Addr
	AS   int
}

// bgpdConfig is a router's bgpd.conf: eBGP with every neighbour, connected
// and kernel routes redistributed (that is how the learnt address and
// route reach BGP), and timers short enough that a change crosses the line
// in a second or two: keepalive 1 s, hold 3 s, connect retry 1 s, and no
// advertisement interval (eBGP's default is 0 since FRR 7.x; said anyway).
func bgpdConfig(as int, routerID netip.Addr, neighbors []bgpNeighbor) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("router bgp %d", as)
	p(" bgp router-id %s", routerID)
	p(" no bgp ebgp-requires-policy")
	p(" no bgp default ipv4-unicast")
	p(" no bgp network import-check")
	p(" timers bgp 1 3")
	for _, n := range neighbors {
		p(" neighbor %s remote-as %d", n.Addr, n.AS)
		p(" neighbor %s timers connect 1", n.Addr)
		p(" neighbor %s advertisement-interval 0", n.Addr)
	}
	for _, af := range []struct {
		name string
		v6   bool
	}{{"ipv4", false}, {"ipv6", true}} {
		p(" address-family %s unicast", af.name)
		p("  redistribute connected")
		p("  redistribute kernel")
		for _, n := range neighbors {
			if n.Addr.Is6() == af.v6 {
				p("  neighbor %s activate", n.Addr)
			}
		}
		p(" exit-address-family")
	}
	return b.String()
}

// findFRR locates Debian's FRR: the daemons in /usr/lib/frr, vtysh on
// PATH (or /usr/bin), and the frr user they run as.
func findFRR() (frrInstall, error) {
	f := frrInstall{Dir: "/usr/lib/frr"}
	for _, d := range []string{"zebra", "bgpd"} {
		if st, err := os.Stat(filepath.Join(f.Dir, d)); err != nil || st.Mode()&0o111 == 0 {
			return f, errNoFRR
		}
	}
	if p, err := exec.LookPath("vtysh"); err == nil {
		f.Vtysh = p
	} else if _, err := os.Stat("/usr/bin/vtysh"); err == nil {
		f.Vtysh = "/usr/bin/vtysh"
	} else {
		return f, errNoFRR
	}
	u, err := user.Lookup("frr")
	if err != nil {
		return f, errNoFRR
	}
	f.UID, _ = strconv.Atoi(u.Uid)
	f.GID, _ = strconv.Atoi(u.Gid)
	return f, nil
}
