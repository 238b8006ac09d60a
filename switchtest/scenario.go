// SPDX-License-Identifier: GPL-2.0

package main

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// The scenario is the delivery matrix the switch cases run in each mode:
// four namespaces with subscribers of every kind, events that reach them
// through every rule of do_one_broadcast(), and a model of that function
// that says, for each event, which member receives what. The model is
// the unpatched kernel's behaviour, which the switch must not change;
// every transcript is checked against it in full.
//
// Namespaces and ids ("O: S=0" means O has the id 0 for S):
//
//	S  the main source. S: F=7 (later U=9, an event of the script)
//	O  an observer. O: S=0 (id 0 is valid), F=5
//	F  foreign to S, and a source itself. F: S=3
//	U  maps nobody: its ALL_NSID member gets nothing from elsewhere
//
// Nobody maps O, and nobody maps U until S does in the full script.

// The flood groups: the kernel never sends on these two unused groups,
// so user multicast there reaches only the member the flood is for.
const (
	floodA = unix.RTNLGRP_NOP2
	floodB = unix.RTNLGRP_NOP4
)

// spec describes a member.
type spec struct {
	ns     string
	name   string
	groups []uint32
	bind   bool  // groups (all ≤ 32) with the bind(2) bitmask, not NETLINK_ADD_MEMBERSHIP
	opts   []int // SOL_NETLINK flags, set before the groups are joined
	portid uint32
	tiny   bool   // minimal receive buffer: a flood on group flood overruns it
	flood  uint32 // the group its flood uses (tiny members only)
	proto  int    // the netlink protocol; 0 is NETLINK_ROUTE
	noCap  bool   // opened without CAP_NET_BROADCAST (selftests.NS.SocketWithout)
}

const (
	allNSID   = unix.NETLINK_LISTEN_ALL_NSID
	pktinfo   = unix.NETLINK_PKTINFO
	bcastErr  = unix.NETLINK_BROADCAST_ERROR
	gTC       = unix.RTNLGRP_TC
	gAddr     = unix.RTNLGRP_IPV4_IFADDR
	gRoute    = unix.RTNLGRP_IPV4_ROUTE
	gNSID     = unix.RTNLGRP_NSID
	gNexthop  = unix.RTNLGRP_NEXTHOP
	gStats    = unix.RTNLGRP_STATS // above 32: setsockopt only, nl_groups 0 in msg_name
	loopback  = rtnl.LoopbackIndex
	firstTCID = 1
)

// matrix is the members of the scenario. The first letter is the namespace (s: S), the
// second the role: p plain, a LISTEN_ALL_NSID, x special; w* are
// NETLINK_BROADCAST_ERROR listeners with a minimal buffer.
//
//	sp  local plain, groups 5 and 7 by bind bitmask
//	sa  local ALL_NSID: one copy, no nsid; hears F (S: F=7) and later U
//	sx  PKTINFO; NSID (28), NEXTHOP (32) and STATS (36, msg_name groups 0)
//	us  sends user multicast on group 5, and is subscribed to it
//	ud  the sendto() destination of one of them: the unicast only
//	r   NLM_F_ECHO requester with the explicit portid selftests.CollidingPortid
//	oa  ALL_NSID and PKTINFO in O (O: S=0), every kernel group of S
//	op  plain in O: hears only O
//	ox  ALL_NSID in O with r's portid: skipped by r's echoed event
//	fp  plain in F although F maps S: hears only F
//	fa  ALL_NSID in F (F: S=3)
//	ua  ALL_NSID in U, which maps nobody: hears only U
//	w, wo, wf, wu  local, mapped ALL_NSID, plain foreign and unmapped
//	    ALL_NSID listeners of RTNLGRP_TC
var matrix = []spec{
	{ns: "S", name: "sp", groups: []uint32{gAddr, gRoute}, bind: true},
	{ns: "S", name: "sa", groups: []uint32{gAddr, gRoute}, opts: []int{allNSID}},
	{ns: "S", name: "sx", groups: []uint32{gAddr, gNSID, gNexthop, gStats}, opts: []int{pktinfo}},
	{ns: "S", name: "us", groups: []uint32{gAddr}},
	{ns: "S", name: "ud", groups: []uint32{gAddr}},
	{ns: "S", name: "r", groups: []uint32{gAddr}, portid: selftests.CollidingPortid},
	{ns: "S", name: "w", groups: []uint32{gTC, floodA}, opts: []int{bcastErr}, tiny: true, flood: floodA},
	{ns: "O", name: "oa", groups: []uint32{gAddr, gRoute, gNSID, gNexthop, gStats}, opts: []int{allNSID, pktinfo}},
	{ns: "O", name: "op", groups: []uint32{gAddr, gRoute}},
	{ns: "O", name: "ox", groups: []uint32{gAddr}, opts: []int{allNSID}, portid: selftests.CollidingPortid},
	{ns: "O", name: "wo", groups: []uint32{gTC, floodB}, opts: []int{allNSID, bcastErr}, tiny: true, flood: floodB},
	{ns: "F", name: "fp", groups: []uint32{gAddr, gRoute, gStats}},
	{ns: "F", name: "fa", groups: []uint32{gAddr}, opts: []int{allNSID}},
	{ns: "F", name: "wf", groups: []uint32{gTC, floodA}, opts: []int{bcastErr}, tiny: true, flood: floodA},
	{ns: "U", name: "ua", groups: []uint32{gAddr, gRoute, gStats}, opts: []int{allNSID}},
	{ns: "U", name: "wu", groups: []uint32{gTC, floodB}, opts: []int{allNSID, bcastErr}, tiny: true, flood: floodB},
}

// member is a subscriber of the scenario and the model's view of it.
type member struct {
	*selftests.Sock
	portid uint32
	groups map[uint32]bool
	flood  uint32
	bcast  bool // NETLINK_BROADCAST_ERROR
	noCap  bool // its file credentials lack CAP_NET_BROADCAST

	want      []selftests.Msg // expected since the last check
	congested bool            // overrun: the kernel drops everything until it is drained
	burst     []selftests.Msg // the flood that overran it
	closed    bool
}

// scenario is one instance of the matrix.
type scenario struct {
	t          selftests.T
	S, O, F, U *selftests.NS
	ns         map[string]*selftests.NS
	ids        map[[2]*selftests.NS]int32 // {listener, peer}: the id listener has for peer
	members    []*member
	byName     map[string]*member
	flooders   map[*selftests.NS]*member
	tcIndex    uint32

	seqs []uint32                    // every request and message sequence number, in order
	log  map[string][]selftests.Line // every transcript read, per member
}

// newScenario builds the matrix in fresh namespaces whose names end in
// suffix (to tell two instances apart in diagnostics).
func newScenario(t selftests.T, suffix string) *scenario {
	t.Helper()
	sc := emptyScenario(t)
	for _, name := range []string{"S", "O", "F", "U"} {
		sc.ns[name] = selftests.NewNS(t, name+suffix)
	}
	sc.S, sc.O, sc.F, sc.U = sc.ns["S"], sc.ns["O"], sc.ns["F"], sc.ns["U"]
	sc.mapPeer(sc.O, sc.S, 0)
	sc.mapPeer(sc.O, sc.F, 5)
	sc.mapPeer(sc.F, sc.S, 3)
	sc.mapPeer(sc.S, sc.F, 7)
	for _, peer := range []*selftests.NS{sc.S, sc.O, sc.F} {
		sc.U.RequireNoID(peer)
	}
	for _, sp := range matrix {
		sc.add(sp)
	}
	return sc
}

// emptyScenario is a scenario without namespaces or members, for cases
// that build their own.
func emptyScenario(t selftests.T) *scenario {
	return &scenario{t: t, ns: map[string]*selftests.NS{}, ids: map[[2]*selftests.NS]int32{},
		byName: map[string]*member{}, flooders: map[*selftests.NS]*member{}, tcIndex: firstTCID,
		log: map[string][]selftests.Line{}}
}

// add creates a member.
func (sc *scenario) add(sp spec) *member {
	sc.t.Helper()
	if _, dup := sc.byName[sp.name]; dup {
		sc.t.Fatalf("scenario: two members called %s", sp.name)
	}
	var opts []selftests.Option
	if sp.bind {
		opts = append(opts, selftests.BindGroups(nlsock.GroupMask(sp.groups...)))
	} else {
		opts = append(opts, selftests.Join(sp.groups...))
	}
	if len(sp.opts) > 0 {
		opts = append(opts, selftests.With(sp.opts...))
	}
	if sp.portid != 0 {
		opts = append(opts, selftests.Portid(sp.portid))
	}
	if sp.tiny {
		opts = append(opts, selftests.RcvBuf(1))
	}
	if sp.proto != 0 {
		opts = append(opts, selftests.Proto(sp.proto))
	}
	var s *selftests.Sock
	if sp.noCap {
		s = sc.ns[sp.ns].SocketWithout(unix.CAP_NET_BROADCAST, sp.name, opts...)
	} else {
		s = sc.ns[sp.ns].Socket(sp.name, opts...)
	}
	m := &member{Sock: s, portid: s.Portid(), groups: map[uint32]bool{}, flood: sp.flood, noCap: sp.noCap}
	for _, g := range sp.groups {
		m.groups[g] = true
	}
	for _, o := range sp.opts {
		m.bcast = m.bcast || o == bcastErr
	}
	sc.members = append(sc.members, m)
	sc.byName[sp.name] = m
	return m
}

// m returns the member called name.
func (sc *scenario) m(name string) *member {
	m, ok := sc.byName[name]
	if !ok {
		sc.t.Fatalf("scenario: no member %s", name)
	}
	return m
}

// A delivery is one netlink_broadcast() from a namespace, as the model
// sees it.
type delivery struct {
	msg     selftests.Msg
	from    *selftests.NS // the namespace of the sending socket (the kernel's, for notifications)
	sender  *member       // exclude_sk: the user socket that multicast it
	portid  uint32        // the excluded portid: the ECHO requester or the sendto() destination
	unicast *member       // then gets msg by unicast (the echo, or the sendto() destination)
}

// proto is the protocol of the multicast: the sender's, or NETLINK_ROUTE
// for a kernel notification.
func (d delivery) proto() int {
	if d.sender != nil {
		return d.sender.Proto
	}
	return unix.NETLINK_ROUTE
}

// recipient is do_one_broadcast()'s decision for m, with the message as
// m would see it. Only sockets of the sender's protocol are candidates
// (each protocol has its own mc_list); a foreign socket needs
// LISTEN_ALL_NSID, an id for the source and CAP_NET_BROADCAST in its file
// credentials.
func (sc *scenario) recipient(m *member, d delivery) (selftests.Msg, bool) {
	switch {
	case m.closed, m.Proto != d.proto(), m == d.sender, m.portid == d.portid, !m.groups[d.msg.Group]:
		return selftests.Msg{}, false
	case m.NS() == d.from:
		return d.msg, true
	case !m.AllNSID(), m.noCap:
		return selftests.Msg{}, false
	}
	id, mapped := sc.ids[[2]*selftests.NS{m.NS(), d.from}]
	return d.msg.NSID(id), mapped
}

// deliver adds d to the expectations of its recipients. A congested
// recipient drops it; if it has NETLINK_BROADCAST_ERROR, deliver returns
// true: netlink_broadcast() then fails with ENOBUFS.
func (sc *scenario) deliver(d delivery) (enobufs bool) {
	for _, m := range sc.members {
		msg, ok := sc.recipient(m, d)
		switch {
		case !ok:
		case m.congested:
			enobufs = enobufs || m.bcast
		default:
			m.want = append(m.want, msg)
		}
	}
	if d.unicast != nil {
		d.unicast.want = append(d.unicast.want, d.msg)
	}
	return enobufs
}

// check reads m's transcript and compares it with the model: what was
// delivered since the last check, or, after an overrun, ENOBUFS and then
// the part of the burst that fitted (the kernel decides how much: skb
// truesize against sk_rcvbuf), and nothing of what came while it was
// congested. Reading m empty ends its congestion (netlink_rcv_wake()).
func (sc *scenario) check(m *member) {
	sc.t.Helper()
	got, err := m.Transcript()
	want := m.want
	if m.burst != nil {
		want, _ = selftests.Overrun(got, []selftests.Msg{selftests.RecvError(unix.ENOBUFS)}, m.burst)
	}
	m.ExpectLines(got, err, want...)
	sc.log[m.Name] = append(sc.log[m.Name], got...)
	m.want, m.burst, m.congested = nil, nil, false
}

// checkAll checks every open member.
func (sc *scenario) checkAll() {
	sc.t.Helper()
	for _, m := range sc.members {
		if !m.closed {
			sc.check(m)
		}
	}
}

// Changes to members, for the live switching case.

func (sc *scenario) leave(name string, g uint32) {
	sc.t.Helper()
	m := sc.m(name)
	if err := m.Leave(g); err != nil {
		sc.t.Fatalf("%v", err)
	}
	delete(m.groups, g)
}

// rebind binds the member again, with its own portid and the groups
// (≤ 32) as bitmask: netlink_bind() replaces groups 1..32 and keeps the
// ones above.
func (sc *scenario) rebind(name string, groups ...uint32) {
	sc.t.Helper()
	m := sc.m(name)
	if err := m.Bind(m.portid, nlsock.GroupMask(groups...)); err != nil {
		sc.t.Fatalf("%v", err)
	}
	for g := range m.groups {
		if g <= 32 {
			delete(m.groups, g)
		}
	}
	for _, g := range groups {
		m.groups[g] = true
	}
}

func (sc *scenario) join(name string, g uint32) {
	sc.t.Helper()
	m := sc.m(name)
	if err := m.Join(g); err != nil {
		sc.t.Fatalf("%v", err)
	}
	m.groups[g] = true
}

func (sc *scenario) setAllNSID(name string, on bool) {
	sc.t.Helper()
	sc.m(name).SetFlag(allNSID, on)
}

func (sc *scenario) close(name string) {
	sc.t.Helper()
	m := sc.m(name)
	sc.check(m)
	if err := m.Close(); err != nil {
		sc.t.Fatalf("%v", err)
	}
	m.closed = true
}

// Scripts.

// basic is the mini matrix: E1 in S and in F, and the group-36 event in
// S.
func (sc *scenario) basic() {
	sc.addAddr(sc.S)
	sc.addAddr(sc.F)
	sc.stats(sc.S)
	sc.checkAll()
}

// everySource makes each namespace in turn the source of E1 and of the
// group-36 event.
func (sc *scenario) everySource() {
	for _, n := range []*selftests.NS{sc.S, sc.O, sc.F, sc.U} {
		sc.addAddr(n)
		sc.stats(n)
		sc.checkAll()
	}
}

// full is the whole matrix: kernel notifications on groups 5, 7, 28, 32
// and 36, user multicast with sender and destination exclusion, ECHO with
// a portid that collides across namespaces, local and foreign sources,
// and NETLINK_BROADCAST_ERROR propagation.
func (sc *scenario) full() {
	sc.basic()
	sc.nexthop(sc.S, 1)
	sc.mapPeer(sc.S, sc.U, 9)
	sc.checkAll()
	sc.multicast(sc.m("us"), nil, gAddr)
	sc.multicast(sc.m("us"), sc.m("ud"), gAddr)
	sc.checkAll()
	sc.echoAddAddr(sc.m("r"))
	sc.checkAll()
	sc.addAddr(sc.U) // S now maps U: sa hears it
	sc.addAddr(sc.O)
	sc.checkAll()
	sc.broadcastErrors()
}

// broadcastErrors congests each NETLINK_BROADCAST_ERROR member in turn and
// adds a tc action in S: a local one and a foreign ALL_NSID one that maps
// S make the request fail; a foreign plain one and an unmapped ALL_NSID
// one, which are no recipients, do not. Then all are healthy again.
func (sc *scenario) broadcastErrors() {
	for _, name := range []string{"w", "wo", "wf", "wu"} {
		sc.congest(sc.m(name))
		sc.tcAction()
		sc.checkAll()
	}
	sc.tcAction()
	sc.checkAll()
}

// transcripts returns every member's transcripts with the numbers that
// differ between two runs replaced: sequence numbers by their position in
// the run, member portids (autobind picks them at random) by the member's
// position. Whatever else differs is a difference in what the kernel
// delivered.
func (sc *scenario) transcripts() map[string][]selftests.Line {
	seqNo := map[uint32]uint32{}
	for i, s := range sc.seqs {
		seqNo[s] = uint32(i + 1)
	}
	pidNo := map[uint32]uint32{}
	for i, m := range sc.members {
		pidNo[m.portid] = uint32(i + 1)
	}
	renumber := func(v uint32, by map[uint32]uint32) uint32 {
		if n, ok := by[v]; ok {
			return n
		}
		return v
	}
	out := map[string][]selftests.Line{}
	for name, lines := range sc.log {
		ls := make([]selftests.Line, len(lines))
		for i, l := range lines {
			l.Seq = renumber(l.Seq, seqNo)
			l.Pid = renumber(l.Pid, pidNo)
			l.FromPid = renumber(l.FromPid, pidNo)
			ls[i] = l
		}
		out[name] = ls
	}
	return out
}
