// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// The events of the scenario. Each one makes its request, then tells the
// model (deliver) what the kernel multicast, from which namespace,
// excluding whom.

// seq records a sequence number the scenario used (see transcripts) and
// returns it.
func (sc *scenario) seq(s uint32) uint32 {
	sc.seqs = append(sc.seqs, s)
	return s
}

// mapPeer gives peer the id id in listener (RTM_NEWNSID from listener's
// control socket), which notifies RTNLGRP_NSID in listener.
func (sc *scenario) mapPeer(listener, peer *selftests.NS, id int32) {
	sc.t.Helper()
	e := listener.Map(peer, id)
	sc.seq(e.Seq)
	sc.deliver(delivery{from: listener, msg: e.NewNSID()})
	sc.ids[[2]*selftests.NS{listener, peer}] = id
}

// addAddr is event E1 in n: RTM_NEWADDR (the request's seq and portid),
// then RTM_NEWROUTE (fib_magic(): seq 0, portid 0).
func (sc *scenario) addAddr(n *selftests.NS) {
	sc.t.Helper()
	e := n.AddAddr()
	sc.seq(e.Seq)
	sc.deliver(delivery{from: n, msg: e.NewAddr()})
	sc.deliver(delivery{from: n, msg: e.NewRoute()})
}

// echoAddAddr is E1 requested by the member r itself with NLM_F_ECHO:
// nlmsg_notify() multicasts RTM_NEWADDR excluding r's portid, in every
// namespace, then unicasts it to r; RTM_NEWROUTE has no requester and
// excludes nobody; the ACK follows.
func (sc *scenario) echoAddAddr(r *member) {
	sc.t.Helper()
	e := r.NS().AddAddrAs(r.Sock, netlink.Echo)
	sc.seq(e.Seq)
	sc.deliver(delivery{from: r.NS(), msg: e.NewAddr(), portid: r.portid, unicast: r})
	sc.deliver(delivery{from: r.NS(), msg: e.NewRoute()})
	r.want = append(r.want, selftests.Ack(e.Seq, r.portid))
}

// nexthop adds blackhole nexthop id in n: one RTM_NEWNEXTHOP on
// RTNLGRP_NEXTHOP (32, the last group a bind bitmask reaches).
func (sc *scenario) nexthop(n *selftests.NS, id uint32) {
	sc.t.Helper()
	rep := n.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: id, Blackhole: true}))
	sc.deliver(delivery{from: n, msg: selftests.Msg{Type: unix.RTM_NEWNEXTHOP, Flags: rep.Flags, Seq: sc.seq(rep.Seq),
		Pid: n.Ctl.Portid(), Group: gNexthop, Detail: fmt.Sprintf("id %d", id)}})
}

// stats switches lo's L3 statistics on and off in n: each switch notifies
// one RTM_NEWSTATS on RTNLGRP_STATS (36) without a requester. A kernel
// without RTM_SETSTATS has no such event: it is left out, with a log line.
func (sc *scenario) stats(n *selftests.NS) {
	sc.t.Helper()
	for _, on := range []bool{true, false} {
		msg, ok := n.SetL3Stats(on)
		if !ok {
			return
		}
		sc.deliver(delivery{from: n, msg: msg})
	}
}

// multicast sends an NLMSG_NOOP from the member from to group and, unless
// to is nil, to to's portid (netlink_sendmsg(): broadcast excluding the
// sender and that portid, then the unicast). Without NLM_F_REQUEST, the
// copy for portid 0 (the kernel's rtnl socket) is ignored there.
func (sc *scenario) multicast(from, to *member, group uint32) {
	sc.t.Helper()
	var dst uint32
	if to != nil {
		dst = to.portid
	}
	msg := sc.send(from, dst, group)
	sc.deliver(delivery{from: from.NS(), msg: msg, sender: from, portid: dst, unicast: to})
}

func (sc *scenario) send(from *member, dst, group uint32) selftests.Msg {
	sc.t.Helper()
	m, err := from.Multicast(dst, group)
	if err != nil {
		sc.t.Fatalf("%v", err)
	}
	sc.seq(m.Seq)
	return m
}

// flooder returns the sender of floods in n, a member in no group.
func (sc *scenario) flooder(n *selftests.NS) *member {
	sc.t.Helper()
	if f, ok := sc.flooders[n]; ok {
		return f
	}
	name := sc.nameOf(n)
	f := sc.add(spec{ns: name, name: "flood-" + name})
	sc.flooders[n] = f
	return f
}

func (sc *scenario) nameOf(n *selftests.NS) string {
	for name, x := range sc.ns {
		if x == n {
			return name
		}
	}
	sc.t.Fatalf("scenario: netns %s is not one of its namespaces", n.Name)
	return ""
}

// congest overruns the tiny member m with a burst of user multicast on
// its flood group, from its own namespace. The burst is for m alone: the
// model must find no other recipient.
func (sc *scenario) congest(m *member) {
	sc.t.Helper()
	sc.check(m)
	f := sc.flooder(m.NS())
	burst := f.Burst(m.flood)
	for _, msg := range burst {
		sc.seq(msg.Seq)
		for _, o := range sc.members {
			if _, ok := sc.recipient(o, delivery{from: f.NS(), msg: msg, sender: f}); ok && o != m {
				sc.t.Fatalf("scenario: the flood for %s also reaches %s", m.Name, o.Name)
			}
		}
	}
	m.congested, m.burst = true, burst
}

// tcAction adds a mirred action in S. tcf_add_notify() returns what
// nlmsg_notify() returns, so the request fails with ENOBUFS, although
// the action was added, when a congested NETLINK_BROADCAST_ERROR socket
// was a recipient of its RTM_NEWACTION (do_one_broadcast():
// p->delivery_failure); a congested socket that is no recipient changes
// nothing.
func (sc *scenario) tcAction() {
	sc.t.Helper()
	index := sc.tcIndex
	sc.tcIndex++
	rep, err := sc.S.Ctl.Do(rtnl.NewMirredAction(index, loopback))
	if index == firstTCID {
		selftests.SkipMissingTC(sc.t, err, "the mirred tc action (act_mirred)")
	}
	enobufs := sc.deliver(delivery{from: sc.S, msg: selftests.Msg{Type: unix.RTM_NEWACTION, Flags: rep.Flags, Seq: sc.seq(rep.Seq),
		Pid: sc.S.Ctl.Portid(), Group: gTC, Detail: fmt.Sprintf("mirred index %d", index)}})
	switch {
	case enobufs && !errors.Is(err, unix.ENOBUFS):
		sc.t.Errorf("netns %s: adding action %d with a congested NETLINK_BROADCAST_ERROR recipient: got %v, want ENOBUFS", sc.S.Name, index, err)
	case !enobufs && err != nil:
		sc.t.Errorf("netns %s: adding action %d, no congested NETLINK_BROADCAST_ERROR recipient: %v", sc.S.Name, index, err)
	}
	get, err := sc.S.Ctl.Do(rtnl.GetMirredAction(index))
	if err != nil || len(get.Msgs) != 1 {
		sc.t.Errorf("netns %s: action %d after adding it: %d replies, %v; want the action to exist", sc.S.Name, index, len(get.Msgs), err)
	}
}
