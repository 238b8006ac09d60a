// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"
)

// zebra's side of the comparison: its RIB and interfaces as vtysh prints
// them in JSON (FRR 8.4: `show ip route json`, `show ipv6 route json`,
// `show interface json`).

type zroute struct {
	Prefix    string     `json:"prefix"`
	Protocol  string     `json:"protocol"`
	Selected  bool       `json:"selected"`
	Installed bool       `json:"installed"`
	Nexthops  []znexthop `json:"nexthops"`
	NHGroup   uint32     `json:"nexthopGroupId"`
}

type znexthop struct {
	IP                string `json:"ip"`
	InterfaceIndex    uint32 `json:"interfaceIndex"`
	InterfaceName     string `json:"interfaceName"`
	DirectlyConnected bool   `json:"directlyConnected"`
	Unreachable       bool   `json:"unreachable"`
	Blackhole         bool   `json:"blackhole"`
	Active            bool   `json:"active"`
}

type zinterface struct {
	Index       uint32 `json:"index"`
	IPAddresses []struct {
		Address string `json:"address"`
	} `json:"ipAddresses"`
}

// zview is one reading of a router's zebra.
type zview struct {
	Routes     map[netip.Prefix][]zroute // the selected or installed entries of each prefix (fe80::/64 has one per interface)
	Interfaces map[string]zinterface
}

// vtyshWithin bounds one vtysh run: its three commands take seconds under
// QEMU's emulation on a loaded host.
const vtyshWithin = 60 * time.Second

// zebraView asks the router's zebra for its RIB and interfaces, in one
// vtysh run (three would triple the time a poll takes on a loaded or
// emulated CPU): vtysh prints the three JSON objects one after another.
func (r *router) zebraView(frr frrInstall) (zview, error) {
	v := zview{Routes: map[netip.Prefix][]zroute{}}
	cmds := []string{"show ip route json", "show ipv6 route json", "show interface json"}
	out, err := r.vtysh(frr, "zebra", cmds, vtyshWithin)
	if err != nil {
		return v, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for _, cmd := range cmds[:2] {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return v, fmt.Errorf("router %s: %s: %w", r.Name, cmd, err)
		}
		if err := parseZebraRoutes(raw, v.Routes); err != nil {
			return v, fmt.Errorf("router %s: %s: %w", r.Name, cmd, err)
		}
	}
	if err := dec.Decode(&v.Interfaces); err != nil {
		return v, fmt.Errorf("router %s: %s: %w", r.Name, cmds[2], err)
	}
	return v, nil
}

// parseZebraRoutes adds the selected and installed entries of every prefix in out (a
// `show ip[v6] route json` object: prefix -> entries) to into.
func parseZebraRoutes(out []byte, into map[netip.Prefix][]zroute) error {
	var all map[string][]zroute
	if err := json.Unmarshal(out, &all); err != nil {
		return err
	}
	for key, entries := range all {
		p, err := netip.ParsePrefix(key)
		if err != nil {
			return fmt.Errorf("prefix %q: %w", key, err)
		}
		for _, e := range entries {
			// "C>*" and "C *": of the connected routes to fe80::/64
			// (one per interface) one is selected, all are in the FIB.
			if e.Selected || e.Installed {
				into[p] = append(into[p], e)
			}
		}
	}
	return nil
}

// zebraHops are the nexthops of zebra entries in the kernel's terms.
func zebraHops(zs []zroute) []hop {
	var out []hop
	for _, n := range nexthopsOf(zs) {
		h := hop{OIF: n.InterfaceIndex, Blackhole: n.Unreachable || n.Blackhole}
		if a, err := netip.ParseAddr(n.IP); err == nil && !n.DirectlyConnected {
			h.Gateway = a
		}
		if h.Blackhole {
			h.OIF = 0
		}
		out = append(out, h)
	}
	return out
}

func nexthopsOf(zs []zroute) []znexthop {
	var out []znexthop
	for _, z := range zs {
		out = append(out, z.Nexthops...)
	}
	return out
}

// protocols names the protocols of zebra entries.
func protocols(zs []zroute) string {
	var out []string
	for _, z := range zs {
		if !slices.Contains(out, z.Protocol) {
			out = append(out, z.Protocol)
		}
	}
	return strings.Join(out, ",")
}

func hopSet(hs []hop) string {
	var s []string
	for _, h := range hs {
		s = append(s, h.String())
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// linkLocal is left out of the RIB comparison: zebra keeps a connected
// fe80::/64 per interface and marks as selected or installed only some of
// them, not the ones the kernel has (a stub link taken down leaves its
// entry marked, another link's unmarked). The link-local addresses
// themselves are compared, per interface, with the addresses.
var linkLocal = netip.MustParsePrefix("fe80::/64")

// compareRIB lists where zebra's RIB and the kernel's main table
// disagree: a kernel route zebra does not know, or knows with other
// nexthops (a missed or misread RTM_NEWROUTE or RTM_NEWNEXTHOP); a kernel
// route zebra still has that the kernel has not (a missed RTM_DELROUTE);
// a route zebra says it installed that the kernel lacks. zebra's
// connected entries for host prefixes of addresses (192.0.2.101/32 on lo)
// have no main-table route; they are checked with the addresses.
func compareRIB(k kstate, z zview) []string {
	var diffs []string
	for _, p := range k.prefixes() {
		if p == linkLocal {
			continue
		}
		rs := k.routesTo(p)
		var kh []hop
		var kd []string
		for _, r := range rs {
			kh = append(kh, k.hops(r)...)
			kd = append(kd, k.describe(r))
		}
		e, ok := z.Routes[p]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("kernel: %s | zebra: nothing selected", strings.Join(kd, "; ")))
			continue
		}
		if zh := hopSet(zebraHops(e)); hopSet(kh) != zh {
			diffs = append(diffs, fmt.Sprintf("kernel: %s | zebra: %s %s (%s)", strings.Join(kd, "; "), p, zh, protocols(e)))
		}
	}
	for p, es := range z.Routes {
		if p == linkLocal || len(k.routesTo(p)) > 0 {
			continue
		}
		for _, e := range es {
			switch {
			case e.Protocol == "kernel":
				diffs = append(diffs, fmt.Sprintf("kernel: no %s | zebra: %s %s (kernel): a deletion zebra missed", p, p, hopSet(zebraHops([]zroute{e}))))
			case e.Protocol != "connected" && e.Installed:
				diffs = append(diffs, fmt.Sprintf("kernel: no %s | zebra: %s %s (%s, installed)", p, p, hopSet(zebraHops([]zroute{e})), e.Protocol))
			}
		}
	}
	sort.Strings(diffs)
	return diffs
}

// compareAddrs lists the interfaces whose addresses zebra and the kernel
// see differently. zebra does not list lo's 127.0.0.1/8 and ::1/128.
func compareAddrs(k kstate, z zview) []string {
	var diffs []string
	for name, zi := range z.Interfaces {
		var zs []string
		for _, a := range zi.IPAddresses {
			zs = append(zs, a.Address)
		}
		sort.Strings(zs)
		var ks []string
		for _, a := range k.addrsOf(zi.Index) {
			if a != "127.0.0.1/8" && a != "::1/128" {
				ks = append(ks, a)
			}
		}
		if strings.Join(ks, " ") != strings.Join(zs, " ") {
			diffs = append(diffs, fmt.Sprintf("%s (ifindex %d): kernel [%s] | zebra [%s]", name, zi.Index, strings.Join(ks, " "), strings.Join(zs, " ")))
		}
	}
	sort.Strings(diffs)
	return diffs
}
