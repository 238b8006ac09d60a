// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// unitKind is what a scene's work unit does.
type unitKind int

const (
	routeBatch    unitKind = iota // one sender replaces the routes
	parallelBatch                 // two senders at once, each its own source namespace
	optionChanges                 // ROUTE socket-option changes on the foreign pool
)

// allNSID says how many foreign sockets set NETLINK_LISTEN_ALL_NSID.
type allNSID int

const (
	allNSIDNone allNSID = iota
	allNSIDHalf         // the first half of the foreign pool
	allNSIDAll
)

// Scene is one entry of the table. N and D can be overridden from the
// command line; everything else is the scene's fixed layout.
type Scene struct {
	Name string
	Desc string
	Kind unitKind

	N int // foreign subscribers of RTNLGRP_IPV4_ROUTE (C2: local candidates)
	D int // foreign sockets per namespace; 0: all in one namespace

	AllNSID    allNSID
	Receivers  int  // sockets in the source namespace on RTNLGRP_IPV4_ROUTE
	Local      bool // N counts local non-matching candidates (C2) instead of foreign ones
	Extra      bool // the seven extra subscribers of T2 in the source namespace
	Monitor    bool // a mapped LISTEN_ALL_NSID monitor in its own namespace
	CompatMode int  // net.ipv4.nexthop_compat_mode in the source namespace; -1: left as is

	overridden bool // -n or -d changed N or D
	routes     int  // -routes, when it is not the letter's (defaultRoutes) and the unit replaces routes
}

// defaultRoutes is the letter's work unit: 2640 routes replaced per batch.
const defaultRoutes = 2640

// withRoutes records the routes per batch in the scene's label when they
// are not the letter's and its unit replaces routes.
func (s Scene) withRoutes(routes int) Scene {
	if routes != defaultRoutes && (s.Kind == routeBatch || s.Kind == parallelBatch) {
		s.routes = routes
	}
	return s
}

// extraGroups are the seven groups T2's extra subscribers join in the
// source namespace, one each: candidates of the walk that never match a
// route notification (group RTNLGRP_IPV4_ROUTE).
var extraGroups = []uint32{1, 3, 5, 8, 9, 11, 32} // LINK NEIGH IPV4_IFADDR IPV4_RULE IPV6_IFADDR IPV6_ROUTE NEXTHOP

// scenes is the cover letter's table, in its order.
var scenes = []Scene{
	{Name: "T1-n900-d0", Kind: routeBatch, N: 900, D: 0, Receivers: 2, CompatMode: -1,
		Desc: "900 ordinary foreign subscribers in one namespace; 2 receivers in the source"},
	{Name: "T1-n900-d2", Kind: routeBatch, N: 900, D: 2, Receivers: 2, CompatMode: -1,
		Desc: "900 ordinary foreign subscribers, 2 per namespace (450 namespaces); 2 receivers"},
	{Name: "T2-field-c0", Kind: routeBatch, N: 900, D: 2, Receivers: 1, Extra: true, CompatMode: 0,
		Desc: "450 two-socket foreign namespaces, 7 extra source subscribers on other groups (LINK NEIGH IPV4_IFADDR IPV4_RULE IPV6_IFADDR IPV6_ROUTE NEXTHOP), 1 receiver; nexthop_compat_mode 0"},
	{Name: "T2-field-c1", Kind: routeBatch, N: 900, D: 2, Receivers: 1, Extra: true, CompatMode: 1,
		Desc: "as T2-field-c0 with nexthop_compat_mode 1"},
	{Name: "T3-monitor1", Kind: routeBatch, N: 900, D: 0, Receivers: 2, Monitor: true, CompatMode: -1,
		Desc: "T1-n900-d0 plus a LISTEN_ALL_NSID monitor in its own namespace that maps the source (nsid 7): 3 recipients"},
	{Name: "C1-n0", Kind: routeBatch, N: 0, D: 0, Receivers: 2, CompatMode: -1,
		Desc: "no foreign subscribers; 2 receivers"},
	{Name: "C2-candidate900", Kind: routeBatch, N: 900, D: 0, Receivers: 2, Local: true, CompatMode: -1,
		Desc: "900 local candidates in the source namespace on RTNLGRP_LINK, 2 matching receivers"},
	{Name: "C4-all450", Kind: routeBatch, N: 900, D: 0, Receivers: 2, AllNSID: allNSIDHalf, CompatMode: -1,
		Desc: "900 foreign subscribers in one namespace, ALL_NSID on 450 of them, no nsid mappings"},
	{Name: "C4-all900", Kind: routeBatch, N: 900, D: 0, Receivers: 2, AllNSID: allNSIDAll, CompatMode: -1,
		Desc: "900 foreign subscribers in one namespace, ALL_NSID on all, no nsid mappings"},
	{Name: "E1-n1800-d0", Kind: routeBatch, N: 1800, D: 0, Receivers: 2, AllNSID: allNSIDAll, CompatMode: -1,
		Desc: "1800 ALL_NSID foreign subscribers in one namespace, no nsid mappings"},
	{Name: "C7-option-route", Kind: optionChanges, N: 900, D: 0, CompatMode: -1,
		Desc: "per foreign socket (900, one namespace, subscribed): leave, join, ALL_NSID on, off; then check memberships"},
	{Name: "PAR-n900", Kind: parallelBatch, N: 900, D: 0, Receivers: 2, CompatMode: -1,
		Desc: "two senders at once, each in its own source namespace with 2 receivers, sharing 900 foreign subscribers in one namespace"},
}

// findScenes returns the scenes named in a comma-separated list ("" or
// "all": the letter's twelve; "related": the related series' scenes), in
// the order named, each once however often it is named (as -t does): a
// scene run twice in one boot would give two sets of rounds with the same
// numbers, which the analysis would take for one.
func findScenes(list string) ([]Scene, error) {
	if list == "" || list == "all" {
		return scenes, nil
	}
	var out []Scene
	seen := map[string]bool{}
	add := func(s Scene) {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	for _, name := range strings.Split(list, ",") {
		switch name = strings.TrimSpace(name); name {
		case "all":
			for _, s := range scenes {
				add(s)
			}
			continue
		case "related":
			for _, s := range related {
				add(s)
			}
			continue
		case "memory":
			for _, s := range memoryScenes {
				add(s)
			}
			continue
		}
		found := false
		for _, s := range slices.Concat(scenes, related, memoryScenes) {
			if s.Name == name {
				add(s)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no scene %q (-l lists them)", name)
		}
	}
	return out, nil
}

// override sets N and/or D (negative: keep).
func (s Scene) override(n, d int) Scene {
	if n >= 0 && n != s.N {
		s.N, s.overridden = n, true
	}
	if d >= 0 && d != s.D {
		s.D, s.overridden = d, true
	}
	return s
}

// Label is the scene's table entry: its name, with the parameters when
// -n, -d or -routes changed them, so that an overridden run is never
// mistaken for the letter's.
func (s Scene) Label() string {
	var params []string
	if s.overridden {
		params = append(params, fmt.Sprintf("n=%d,d=%d", s.N, s.D))
	}
	if s.routes != 0 {
		params = append(params, fmt.Sprintf("routes=%d", s.routes))
	}
	if len(params) == 0 {
		return s.Name
	}
	return s.Name + "[" + strings.Join(params, ",") + "]"
}

// allNSIDCount is how many foreign sockets set ALL_NSID.
func (s Scene) allNSIDCount() int {
	switch s.AllNSID {
	case allNSIDHalf:
		return s.N / 2
	case allNSIDAll:
		return s.N
	}
	return 0
}

// needsAllNSID says the scene sets NETLINK_LISTEN_ALL_NSID, which needs
// CAP_NET_BROADCAST: an ALL_NSID pool, T3's monitor, C7's option changes.
func (s Scene) needsAllNSID() bool {
	return s.allNSIDCount() > 0 || s.Monitor || s.Kind == optionChanges
}

// foreignNamespaces is how many foreign namespaces the pool spreads over.
func (s Scene) foreignNamespaces() int {
	switch {
	case s.Local || s.N == 0:
		return 0
	case s.D <= 0:
		return 1
	}
	return (s.N + s.D - 1) / s.D
}

// sweepScenes builds the sweep's scenes from "n=0,100,300": for each n, n
// ordinary foreign subscribers (SW-ord-nN) and n ALL_NSID ones (SW-all-nN),
// all in one namespace, 2 receivers.
func sweepScenes(spec string) ([]Scene, error) {
	v, ok := strings.CutPrefix(spec, "n=")
	if !ok {
		return nil, fmt.Errorf("-sweep %q: want n=N1,N2,...", spec)
	}
	var ord, all []Scene
	seen := map[int]bool{}
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-sweep: %q is not a count", f)
		}
		if seen[n] {
			continue // each point once, as a scene named twice
		}
		seen[n] = true
		ord = append(ord, Scene{Name: fmt.Sprintf("SW-ord-n%d", n), Kind: routeBatch, N: n, Receivers: 2, CompatMode: -1,
			Desc: fmt.Sprintf("sweep: %d ordinary foreign subscribers in one namespace", n)})
		all = append(all, Scene{Name: fmt.Sprintf("SW-all-n%d", n), Kind: routeBatch, N: n, Receivers: 2, AllNSID: allNSIDAll, CompatMode: -1,
			Desc: fmt.Sprintf("sweep: %d ALL_NSID foreign subscribers in one namespace, no nsid mappings", n)})
	}
	return append(ord, all...), nil
}
