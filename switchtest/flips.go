// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// Subscription changes made in one mode, checked after the flip to the
// other: changes_at_0_seen_at_1.<kind> and changes_at_1_seen_at_0.<kind>,
// one result per kind of change.
//
// Every kind runs the same way. With the switch at the value that checks,
// it builds its namespaces and members, makes its events and checks every
// member against the scenario's model of do_one_broadcast(); then, at the
// other value, it makes its changes and checks again; then it flips back
// and checks a third time. That last check is the point: each change
// updated a list (the protocol's mc_list, walked at 0; the namespace's
// subscriber list and the global ALL_NSID list, walked at 1) in the mode
// it was made in, and the flip must find every list already right.
//
// Kernel (the patch): netlink_update_subscriptions() (bind(),
// NETLINK_ADD/DROP_MEMBERSHIP) calls netlink_route_mc_update() in both
// modes: a NETLINK_ROUTE socket with any group (above 32 too: subscriptions
// counts them all) is on its namespace's list, and also on the ALL_NSID
// list while LISTEN_ALL_NSID is set; with no group it is on neither. The
// LISTEN_ALL_NSID setsockopt on a NETLINK_ROUTE socket calls it too, under
// netlink_table_grab(); netlink_remove() takes a closing socket off both;
// other protocols never reach the lists. At 1 netlink_broadcast() walks the
// sender's namespace list, then the ALL_NSID list skipping that namespace's
// sockets; do_one_broadcast() decides for each candidate as at 0.

// A flip is what a kind built: the changes to make in the other mode and
// the events (followed by a check of every member) that show the state.
type flip struct {
	change func()
	events func()
}

// flipKinds are the kinds of change, in run order.
var flipKinds = []struct {
	name  string
	build func(sc *scenario) flip
	about string // for -l -v
}{
	{"rebind", flipRebind, "bind() again with a new bitmask: members move groups, bound-empty ones get on the lists, emptied ones get off"},
	{"join", flipJoin, "NETLINK_ADD_MEMBERSHIP of a first and a second group puts plain and ALL_NSID members on the lists"},
	{"leave", flipLeave, "NETLINK_DROP_MEMBERSHIP of one of two groups, of the only group, and leave-then-rejoin"},
	{"all_nsid_set_and_cleared", flipAllNSID, "LISTEN_ALL_NSID set and cleared on subscribed sockets changes the ALL_NSID list only"},
	{"close", flipClose, "closed members leave every list; sockets opened in their place get exactly one copy"},
	{"groups_above_32_only", flipAbove32, "members whose only group is above 32 (RTNLGRP_STATS) get on and off the lists as the others do"},
	{"all_nsid_subscribed_by_bind", flipIPMonitor, "the ip monitor all-nsid pattern: groups by bind(), then LISTEN_ALL_NSID"},
	{"usersock_pair", flipUsersock, "the same changes on NETLINK_USERSOCK sockets, which stay off the NETLINK_ROUTE lists"},
	{"no_cap_net_broadcast", flipNoCap, "sockets opened without CAP_NET_BROADCAST are on the lists but get no foreign event"},
	{"device_moved_between_netns", flipDeviceMove, "a veth end moved between netns: its notifications start from its new netns's list"},
	{"netns_dies", flipNetnsDeath, "a netns dies: its members leave every list, a mapper gets RTM_DELNSID, nothing of it is visited"},
}

// flipCases returns one case per kind: the changes made with the switch at
// changeAt, checked after the flip to checkAt.
func flipCases(changeAt, checkAt string) []selftests.Case {
	var out []selftests.Case
	for _, k := range flipKinds {
		out = append(out, selftests.Case{
			Name:  fmt.Sprintf("changes_at_%s_seen_at_%s.%s", changeAt, checkAt, k.name),
			Run:   func(t selftests.T) { runFlip(t, k.build, changeAt, checkAt) },
			About: fmt.Sprintf("made with the switch at %s, checked after the flip to %s: %s", changeAt, checkAt, k.about),
		})
	}
	return out
}

// runFlip runs one kind: built and checked at checkAt, changed and checked
// at changeAt, checked again after the flip back to checkAt. The members
// are made at checkAt, so that the changes are all the last check sees
// made at changeAt. The switch gets its value back whichever way the case
// ends.
func runFlip(t selftests.T, build func(*scenario) flip, changeAt, checkAt string) {
	sw := requireSwitch(t)
	restoreAtEnd(t, sw)
	setSwitch(t, sw, checkAt)
	sc := emptyScenario(t)
	f := build(sc)
	f.events()
	if t.Failed() {
		t.Fatalf("before any change, switch at %s: delivery differs from the model (above)", checkAt)
	}
	setSwitch(t, sw, changeAt)
	f.change()
	f.events()
	if t.Failed() {
		t.Fatalf("after the changes made with the switch at %s: delivery differs from the model (above)", changeAt)
	}
	setSwitch(t, sw, checkAt)
	f.events()
	if t.Failed() {
		t.Errorf("after the flip from %s to %s: delivery differs from the model (above); the changes made at %s are not all in the lists mode %s walks",
			changeAt, checkAt, changeAt, checkAt)
	}
}

// addNS adds a fresh namespace called name to the scenario.
func (sc *scenario) addNS(name string) *selftests.NS {
	sc.t.Helper()
	n := selftests.NewNS(sc.t, name)
	sc.ns[name] = n
	return n
}

// flipPair makes S and O, which map each other (O: S=3, S: O=4), with a
// reference member in each that no change touches: sref (plain) and oref
// (LISTEN_ALL_NSID). Their transcripts show that each event went out.
func flipPair(sc *scenario) (s, o *selftests.NS) {
	sc.t.Helper()
	s, o = sc.addNS("S"), sc.addNS("O")
	sc.mapPeer(o, s, 3)
	sc.mapPeer(s, o, 4)
	sc.add(spec{ns: "S", name: "sref", groups: []uint32{gAddr, gRoute}})
	sc.add(spec{ns: "O", name: "oref", groups: []uint32{gAddr, gRoute}, opts: []int{allNSID}})
	return s, o
}

// e1In returns the events: E1 in each namespace, then a check of every
// member.
func (sc *scenario) e1In(ns ...*selftests.NS) func() {
	return func() {
		sc.t.Helper()
		for _, n := range ns {
			sc.addAddr(n)
		}
		sc.checkAll()
	}
}

// flipRebind: bind() again with a new bitmask. sp (S) moves from group 5
// to 7 and op (O, ALL_NSID) from 7 to 5, staying on their lists; sz (S)
// and oz (O, ALL_NSID), bound with no group, get group 5, which puts them
// on their namespace's list (and oz on the ALL_NSID list); sq (S) and oq
// (O, ALL_NSID) drop every group, which takes them off.
func flipRebind(sc *scenario) flip {
	s, o := flipPair(sc)
	sc.add(spec{ns: "S", name: "sp", groups: []uint32{gAddr}, bind: true})
	sc.add(spec{ns: "S", name: "sz", bind: true})
	sc.add(spec{ns: "S", name: "sq", groups: []uint32{gAddr}, bind: true})
	sc.add(spec{ns: "O", name: "op", groups: []uint32{gRoute}, bind: true, opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "oz", bind: true, opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "oq", groups: []uint32{gAddr, gRoute}, bind: true, opts: []int{allNSID}})
	return flip{
		change: func() {
			sc.rebind("sp", gRoute)
			sc.rebind("sz", gAddr)
			sc.rebind("sq")
			sc.rebind("op", gAddr)
			sc.rebind("oz", gAddr)
			sc.rebind("oq")
		},
		events: sc.e1In(s, o),
	}
}

// flipJoin: NETLINK_ADD_MEMBERSHIP. sj (S) and oj (O, ALL_NSID) join their
// first group, which puts them on the lists; sj2 and oj2 add a second one.
func flipJoin(sc *scenario) flip {
	s, o := flipPair(sc)
	sc.add(spec{ns: "S", name: "sj"})
	sc.add(spec{ns: "S", name: "sj2", groups: []uint32{gAddr}})
	sc.add(spec{ns: "O", name: "oj", opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "oj2", groups: []uint32{gRoute}, opts: []int{allNSID}})
	return flip{
		change: func() {
			sc.join("sj", gAddr)
			sc.join("sj2", gRoute)
			sc.join("oj", gAddr)
			sc.join("oj2", gAddr)
		},
		events: sc.e1In(s, o),
	}
}

// flipLeave: NETLINK_DROP_MEMBERSHIP. sl (S) and ol (O, ALL_NSID) keep
// one group; sl0 and ol0 leave their only group, which takes them off the
// lists; srj and orj leave their only group and join it again, off the
// lists and back on.
func flipLeave(sc *scenario) flip {
	s, o := flipPair(sc)
	sc.add(spec{ns: "S", name: "sl", groups: []uint32{gAddr, gRoute}})
	sc.add(spec{ns: "S", name: "sl0", groups: []uint32{gAddr}})
	sc.add(spec{ns: "S", name: "srj", groups: []uint32{gAddr}})
	sc.add(spec{ns: "O", name: "ol", groups: []uint32{gAddr, gRoute}, opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "ol0", groups: []uint32{gAddr}, opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "orj", groups: []uint32{gAddr}, opts: []int{allNSID}})
	return flip{
		change: func() {
			sc.leave("sl", gRoute)
			sc.leave("sl0", gAddr)
			sc.leave("srj", gAddr)
			sc.join("srj", gAddr)
			sc.leave("ol", gAddr)
			sc.leave("ol0", gAddr)
			sc.leave("orj", gAddr)
			sc.join("orj", gAddr)
		},
		events: sc.e1In(s, o),
	}
}

// flipAllNSID: NETLINK_LISTEN_ALL_NSID set and cleared on subscribed
// sockets, which changes the ALL_NSID list only. oset (O) starts hearing
// S with nsid 3, oclr (O) stops; otog (O) sets and clears it, ornd (O)
// clears and sets it. sset (S), now on the ALL_NSID list too, hears O with
// nsid 4 and still one copy of S's own events (the second walk at 1 skips
// S's sockets); sclr (S) stops hearing O.
func flipAllNSID(sc *scenario) flip {
	s, o := flipPair(sc)
	sc.add(spec{ns: "O", name: "oset", groups: []uint32{gAddr}})
	sc.add(spec{ns: "O", name: "oclr", groups: []uint32{gAddr}, opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "otog", groups: []uint32{gAddr}})
	sc.add(spec{ns: "O", name: "ornd", groups: []uint32{gAddr}, opts: []int{allNSID}})
	sc.add(spec{ns: "S", name: "sset", groups: []uint32{gAddr}})
	sc.add(spec{ns: "S", name: "sclr", groups: []uint32{gAddr}, opts: []int{allNSID}})
	return flip{
		change: func() {
			sc.setAllNSID("oset", true)
			sc.setAllNSID("oclr", false)
			sc.setAllNSID("otog", true)
			sc.setAllNSID("otog", false)
			sc.setAllNSID("ornd", false)
			sc.setAllNSID("ornd", true)
			sc.setAllNSID("sset", true)
			sc.setAllNSID("sclr", false)
		},
		events: sc.e1In(s, o),
	}
}

// flipClose: close(). sc1 (S, plain), sca (S, ALL_NSID), oc (O, ALL_NSID)
// and op (O, plain) are closed, which takes them off every list; then sn
// (S) and on (O, ALL_NSID) are opened in the same mode, and may reuse
// their memory: each must get exactly one copy.
func flipClose(sc *scenario) flip {
	s, o := flipPair(sc)
	sc.add(spec{ns: "S", name: "sc1", groups: []uint32{gAddr, gRoute}})
	sc.add(spec{ns: "S", name: "sca", groups: []uint32{gAddr}, opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "oc", groups: []uint32{gAddr, gRoute}, opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "op", groups: []uint32{gAddr}})
	return flip{
		change: func() {
			for _, name := range []string{"sc1", "sca", "oc", "op"} {
				sc.close(name)
			}
			sc.add(spec{ns: "S", name: "sn", groups: []uint32{gAddr, gRoute}})
			sc.add(spec{ns: "O", name: "on", groups: []uint32{gAddr, gRoute}, opts: []int{allNSID}})
		},
		events: sc.e1In(s, o),
	}
}

// flipAbove32: members whose only group is above 32 (RTNLGRP_STATS, 36,
// which bind() cannot reach). s36 (S) and o36 (O, ALL_NSID) join it as
// their only group; s36b (S) keeps it across a rebind that clears groups
// 1..32; o36l (O, ALL_NSID) leaves group 5 and keeps it; all four stay on
// (or go onto) the lists. s36x (S) leaves it, its only group, and goes off.
// The events are E1 and the two RTM_NEWSTATS of the L3 statistics switch,
// in S and in O.
func flipAbove32(sc *scenario) flip {
	s, o := flipPair(sc)
	if _, ok := s.SetL3Stats(true); !ok {
		sc.t.Skipf("no event above group 32: this kernel has no RTM_SETSTATS (Linux 5.19+)")
	}
	s.SetL3Stats(false)
	sc.add(spec{ns: "S", name: "s36"})
	sc.add(spec{ns: "O", name: "o36", opts: []int{allNSID}})
	sc.add(spec{ns: "S", name: "s36b", groups: []uint32{gAddr}, bind: true})
	sc.join("s36b", gStats)
	sc.add(spec{ns: "O", name: "o36l", groups: []uint32{gAddr, gStats}, opts: []int{allNSID}})
	sc.add(spec{ns: "S", name: "s36x", groups: []uint32{gStats}})
	return flip{
		change: func() {
			sc.join("s36", gStats)
			sc.join("o36", gStats)
			sc.rebind("s36b")
			sc.leave("o36l", gAddr)
			sc.leave("s36x", gStats)
		},
		events: func() {
			sc.t.Helper()
			for _, n := range []*selftests.NS{s, o} {
				sc.addAddr(n)
				sc.stats(n)
			}
			sc.checkAll()
		},
	}
}

// flipIPMonitor: the `ip monitor all-nsid` pattern, groups by bind() and
// then NETLINK_LISTEN_ALL_NSID: bind puts the socket on its namespace's
// list, the flag then adds it to the ALL_NSID list. om (O) was bound
// before and sets the flag; on (O) and sm (S) do both steps in the mode
// of the changes.
func flipIPMonitor(sc *scenario) flip {
	s, o := flipPair(sc)
	sc.add(spec{ns: "O", name: "om", groups: []uint32{gAddr, gRoute}, bind: true})
	return flip{
		change: func() {
			sc.setAllNSID("om", true)
			sc.add(spec{ns: "O", name: "on", groups: []uint32{gAddr, gRoute}, bind: true})
			sc.setAllNSID("on", true)
			sc.add(spec{ns: "S", name: "sm", groups: []uint32{gAddr, gRoute}, bind: true})
			sc.setAllNSID("sm", true)
		},
		events: sc.e1In(s, o),
	}
}

// userGroup is the NETLINK_USERSOCK group of flipUsersock: 5, the number
// of the RTNLGRP_IPV4_IFADDR group that E1 notifies, so that a
// NETLINK_USERSOCK socket wrongly on a NETLINK_ROUTE list would receive
// RTM_NEWADDR.
const userGroup = gAddr

// userSinkPortid is the explicit portid of the sendto() destination in
// flipUsersock. Autobind gives the first socket of a protocol in each
// namespace the process id, so two autobound sockets in S and O often
// share a portid, and the destination's portid is excluded in every
// namespace: a fixed one that autobind never picks keeps the others in.
const userSinkPortid = selftests.CollidingPortid + 1

// flipUsersock: the same changes on NETLINK_USERSOCK sockets, which the
// patch keeps off the NETLINK_ROUTE lists (netlink_route_mc_update() and
// the setsockopt path check the protocol): uj (S) joins userGroup, ub (S)
// rebinds to it, ul (S) leaves it, ua (O) sets LISTEN_ALL_NSID, uc (O,
// ALL_NSID) is closed; ux (O, ALL_NSID) is left alone. The events: us (S)
// multicasts on userGroup and to ud's portid, and E1 in S and in O, whose
// RTM_NEWADDR on group 5 must reach only the NETLINK_ROUTE members.
func flipUsersock(sc *scenario) flip {
	s, o := flipPair(sc)
	const user = unix.NETLINK_USERSOCK
	us := sc.add(spec{ns: "S", name: "us", proto: user})
	ud := sc.add(spec{ns: "S", name: "ud", proto: user, portid: userSinkPortid})
	sc.add(spec{ns: "S", name: "uj", proto: user})
	sc.add(spec{ns: "S", name: "ub", proto: user, bind: true})
	sc.add(spec{ns: "S", name: "ul", proto: user, groups: []uint32{userGroup}})
	sc.add(spec{ns: "O", name: "ua", proto: user, groups: []uint32{userGroup}})
	sc.add(spec{ns: "O", name: "uc", proto: user, groups: []uint32{userGroup}, opts: []int{allNSID}})
	sc.add(spec{ns: "O", name: "ux", proto: user, groups: []uint32{userGroup}, opts: []int{allNSID}})
	return flip{
		change: func() {
			sc.join("uj", userGroup)
			sc.rebind("ub", userGroup)
			sc.leave("ul", userGroup)
			sc.setAllNSID("ua", true)
			sc.close("uc")
		},
		events: func() {
			sc.t.Helper()
			sc.multicast(us, ud, userGroup)
			sc.addAddr(s)
			sc.addAddr(o)
			sc.checkAll()
		},
	}
}

// flipNoCap: sockets opened without CAP_NET_BROADCAST. They get on the
// lists like any other (the ALL_NSID list too: the flag is set from a
// thread that has the capability), and do_one_broadcast() turns them away
// for foreign events because their file credentials lack it. nj (O, flag,
// no group) joins group 5; nset (O, group 5) sets the flag; nl (S, flag,
// no group) joins group 5 and hears its own namespace. oref, with the
// capability, hears S.
func flipNoCap(sc *scenario) flip {
	s, o := flipPair(sc)
	sc.add(spec{ns: "O", name: "nj", opts: []int{allNSID}, noCap: true})
	sc.add(spec{ns: "O", name: "nset", groups: []uint32{gAddr}, noCap: true})
	sc.add(spec{ns: "S", name: "nl", opts: []int{allNSID}, noCap: true})
	return flip{
		change: func() {
			sc.join("nj", gAddr)
			sc.setAllNSID("nset", true)
			sc.join("nl", gAddr)
		},
		events: sc.e1In(s, o),
	}
}

// flipDeviceMove: the veth end vy moves from B to A. No socket list
// changes; what changes is the namespace the device's notifications come
// from, and so which namespace's list the walk at 1 starts from. b (B), a
// (A) and o (O, ALL_NSID, maps B as 11 and A as 12) are on group 5. The
// events: an address added to vy wherever it is, and E1 in B and in A.
// The move itself, with the address added before it, notifies
// RTM_DELADDR in B (inetdev_destroy() on NETDEV_UNREGISTER, seq 0, pid 0).
// vy stays down, so nothing else is asynchronous.
//
// Kernel: __dev_change_net_namespace(); rtmsg_ifa() notifies in
// dev_net(dev), the new namespace once the move is done.
func flipDeviceMove(sc *scenario) flip {
	nsB, nsA, nsO := sc.addNS("B"), sc.addNS("A"), sc.addNS("O")
	nsB.Do(rtnl.NewVeth("vx", "vy", -1))
	vy := nsB.LinkIndex("vy")
	sc.mapPeer(nsO, nsB, 11)
	sc.mapPeer(nsO, nsA, 12)
	sc.add(spec{ns: "B", name: "b", groups: []uint32{gAddr}})
	sc.add(spec{ns: "A", name: "a", groups: []uint32{gAddr}})
	sc.add(spec{ns: "O", name: "o", groups: []uint32{gAddr}, opts: []int{allNSID}})
	where, next := nsB, 0
	var onVY []netip.Prefix
	addrMsg := func(typ uint16, p netip.Prefix) selftests.Msg {
		return selftests.Notification(typ, gAddr, rtnl.AddrDetail(p, uint32(vy)))
	}
	return flip{
		change: func() {
			sc.t.Helper()
			nsB.Do(rtnl.MoveLink(vy, nsA.FD()))
			for _, p := range onVY {
				sc.deliver(delivery{from: nsB, msg: addrMsg(unix.RTM_DELADDR, p)})
			}
			onVY, where = nil, nsA
			vy = nsA.LinkIndex("vy")
		},
		events: func() {
			sc.t.Helper()
			next++
			p := netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(next)}), 32)
			rep := where.Do(rtnl.NewAddr(vy, p))
			msg := addrMsg(unix.RTM_NEWADDR, p)
			msg.Seq, msg.Pid = sc.seq(rep.Seq), where.Ctl.Portid()
			sc.deliver(delivery{from: where, msg: msg})
			onVY = append(onVY, p)
			sc.addAddr(nsB)
			sc.addAddr(nsA)
			sc.checkAll()
		},
	}
}

// flipNetnsDeath: D dies. Its subscribers dp (plain) and da (ALL_NSID; D
// maps S as 6) are closed, which takes them off every list, and D's last
// references go; O, which maps D as 5, gets RTM_DELNSID (asynchronous:
// cleanup_net() -> unhash_nsid()) on on (ALL_NSID, groups 5 and 28), a
// local event without nsid. After that nothing of D may be visited: the
// events are E1 in the namespaces still alive, S and O (O maps S as 3).
func flipNetnsDeath(sc *scenario) flip {
	nsS, nsO, nsD := sc.addNS("S"), sc.addNS("O"), sc.addNS("D")
	const idOfD = 5
	sc.mapPeer(nsO, nsS, 3)
	sc.mapPeer(nsO, nsD, idOfD)
	sc.mapPeer(nsD, nsS, 6)
	sc.add(spec{ns: "S", name: "sref", groups: []uint32{gAddr}})
	on := sc.add(spec{ns: "O", name: "on", groups: []uint32{gAddr, gNSID}, opts: []int{allNSID}})
	sc.add(spec{ns: "D", name: "dp", groups: []uint32{gAddr}})
	sc.add(spec{ns: "D", name: "da", groups: []uint32{gAddr}, opts: []int{allNSID}})
	alive := []*selftests.NS{nsS, nsO, nsD}
	return flip{
		change: func() {
			sc.t.Helper()
			sc.close("dp")
			sc.close("da")
			nsD.Release()
			on.ExpectEventually(selftests.NetnsDeathDeadline, selftests.NSIDNotification(unix.RTM_DELNSID, idOfD))
			delete(sc.ids, [2]*selftests.NS{nsO, nsD})
			alive = []*selftests.NS{nsS, nsO}
		},
		events: func() {
			sc.t.Helper()
			sc.e1In(alive...)()
		},
	}
}
