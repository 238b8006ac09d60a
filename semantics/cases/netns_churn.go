// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"fmt"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// netnsChurn: namespaces with plain and ALL_NSID subscribers come and go
// while notifications flow, and every delivery stays exact: the source's
// subscriber and a foreign ALL_NSID observer get each event once, a new
// namespace's sockets get exactly what their mappings allow, and the
// sockets and namespaces that are gone leave nothing behind. Each of the 6
// namespaces the observer mapped announces its death with one RTM_DELNSID
// carrying the id the observer gave it.
//
// Sixteen rounds; round i creates N_i with np (plain, group 5) and na
// (ALL_NSID, group 5). O maps N_i as 200+i when i%3 == 0 (o sees the local
// RTM_NEWNSID of the request), then N_i maps S as 100+i when i is even
// (o, on RTNLGRP_NSID with ALL_NSID, also sees that one when it maps N_i).
// Then E1 in S and E1 in N_i:
//   - s: S's RTM_NEWADDR only.
//   - o: both RTM_NEWNSID it can see, S's RTM_NEWADDR with nsid 0, and
//     N_i's with nsid 200+i iff it maps N_i.
//   - np: N_i's RTM_NEWADDR only (a foreign plain socket gets nothing).
//   - na: S's with nsid 100+i iff N_i maps S, then N_i's without nsid (a
//     local ALL_NSID socket gets one copy, like a plain one).
//
// Then N_i's sockets are closed and its handle dropped, alternating "name
// first" and "sockets first". The 10 namespaces that O does not map die during the following
// rounds: nobody has an id for them, so their death is silent. The 6 that O
// maps would each send o an RTM_DELNSID at an unpredictable point of a
// later round, so their control socket and sentinel keep them alive until
// the end. There they are released together, and o must get exactly one
// RTM_DELNSID for each, in any order: cleanup_net() takes dying namespaces
// in batches whose order the test cannot fix (a socket's last netns
// reference even goes in an RCU callback), and waiting for each death in
// turn would cost a whole cleanup_net() (about 30 ms) per namespace.
//
// Kernel: do_one_broadcast() (netns, LISTEN_ALL_NSID, peernet_has_id()
// checks); netlink_release() -> netlink_remove() (leaves mc_list);
// cleanup_net() -> unhash_nsid() -> rtnl_net_notifyid(RTM_DELNSID).
func netnsChurn(t selftests.T) {
	c := churn{t: t, nsS: selftests.NewNS(t, "S"), nsO: selftests.NewNS(t, "O")}
	c.nsO.Map(c.nsS, idOfSInO)
	c.s = c.nsS.Socket("s", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	c.o = c.nsO.Socket("o", selftests.With(unix.NETLINK_LISTEN_ALL_NSID),
		selftests.Join(unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_NSID))

	for i := range churnRounds {
		c.round(i)
		if t.Failed() {
			t.Fatalf("stopping after round %d", i)
		}
	}

	e1 := c.nsS.AddAddr()
	c.s.Expect(e1.NewAddr())
	c.o.Expect(e1.NewAddr().NSID(idOfSInO))

	var deaths []selftests.Msg
	for _, m := range c.alive {
		m.ns.Release()
		deaths = append(deaths, selftests.NSIDNotification(unix.RTM_DELNSID, m.id))
	}
	c.o.ExpectEventuallyInAnyOrder(selftests.NetnsDeathDeadline, deaths...)
}

const (
	churnRounds = 16
	idOfSInO    = 0 // id 0 is a valid nsid and must show as such
)

// idInO is the id O gives N_i (i%3 == 0); idOfSIn is the id N_i gives S
// (i even).
func idInO(i int) int32    { return int32(200 + i) }
func idOfSIn(i int) int32  { return int32(100 + i) }
func mappedByO(i int) bool { return i%3 == 0 }
func mapsS(i int) bool     { return i%2 == 0 }

type churn struct {
	t        selftests.T
	nsS, nsO *selftests.NS
	s, o     *selftests.Sock
	alive    []mappedNS // the N_i that O maps, kept alive until the end
}

// mappedNS is a namespace and the id O gave it.
type mappedNS struct {
	ns *selftests.NS
	id int32
}

// round runs round i.
func (c *churn) round(i int) {
	n := selftests.NewNS(c.t, fmt.Sprintf("N%d", i))
	np := n.Socket("np", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	na := n.Socket("na", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(unix.RTNLGRP_IPV4_IFADDR))

	var wantO, wantNA []selftests.Msg
	if mappedByO(i) {
		wantO = append(wantO, c.nsO.Map(n, idInO(i)).NewNSID())
	}
	if mapsS(i) {
		newID := n.Map(c.nsS, idOfSIn(i)).NewNSID()
		if mappedByO(i) {
			wantO = append(wantO, newID.NSID(idInO(i)))
		}
	}

	inS, inN := c.nsS.AddAddr(), n.AddAddr()
	wantO = append(wantO, inS.NewAddr().NSID(idOfSInO))
	if mappedByO(i) {
		wantO = append(wantO, inN.NewAddr().NSID(idInO(i)))
	}
	if mapsS(i) {
		wantNA = append(wantNA, inS.NewAddr().NSID(idOfSIn(i)))
	}
	wantNA = append(wantNA, inN.NewAddr())

	c.s.Expect(inS.NewAddr())
	c.o.Expect(wantO...)
	np.Expect(inN.NewAddr())
	na.Expect(wantNA...)

	c.delete(i, n, np, na)
	if mappedByO(i) {
		c.alive = append(c.alive, mappedNS{n, idInO(i)})
	}
}

// delete closes N_i's sockets and drops its handle (`ip netns del`), in
// alternating order: even rounds drop the handle first, odd rounds close
// the sockets first. For a namespace O does not map, the harness's control
// and sentinel sockets go with the handle, so the last reference to go is
// the one that order says; a namespace O maps keeps them until the end.
func (c *churn) delete(i int, n *selftests.NS, socks ...*selftests.Sock) {
	c.t.Helper()
	dropName := n.Release
	if mappedByO(i) {
		dropName = n.Delete
	}
	if i%2 == 0 {
		dropName()
	}
	for _, s := range socks {
		if err := s.Close(); err != nil {
			c.t.Errorf("%v", err)
		}
	}
	if i%2 == 1 {
		dropName()
	}
}
