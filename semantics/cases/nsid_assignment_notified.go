// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// nsidAssignmentNotified: the ids a namespace gives its peers are the ids
// its LISTEN_ALL_NSID subscribers see in their control messages, so which
// id a peer gets is part of delivery. An id the kernel chooses
// (NETNSA_NSID -1) is the lowest one free, 0 first. A requested id is given
// exactly, or refused with EEXIST when another peer has it, 0 included;
// a peer that has an id already is refused with EEXIST whatever it asks
// for. Each id given is announced once, as RTM_NEWNSID on RTNLGRP_NSID in
// the namespace that gave it, with the request's seq and portid; a refused
// request announces nothing.
//
// O gives A an id of the kernel's choice (0), B the id 5; C asks for 0 and
// for 5 and is refused twice, A asks for 7 and is refused; then C and D get
// ids of the kernel's choice: 1 and 2, the lowest free. w, on RTNLGRP_NSID
// in O, gets the four RTM_NEWNSID in that order and nothing else.
//
// Kernel: rtnl_net_newid(): __peernet2id() >= 0 -> EEXIST;
// alloc_netid(net, peer, nsid): idr_alloc(&net->netns_ids, peer, min, max)
// with [0, no limit) for nsid < 0, [nsid, nsid + 1) otherwise; -ENOSPC for
// a requested id becomes EEXIST; on success rtnl_net_notifyid(net,
// RTM_NEWNSID, id, NETLINK_CB(skb).portid, nlh).
func nsidAssignmentNotified(t selftests.T) {
	o := selftests.NewNS(t, "O")
	a, b, c, d := selftests.NewNS(t, "A"), selftests.NewNS(t, "B"), selftests.NewNS(t, "C"), selftests.NewNS(t, "D")
	w := o.Socket("w", selftests.Join(unix.RTNLGRP_NSID))
	w.Expect()

	chosenA := mapChosen(t, o, a, 0)
	givenB := o.Map(b, 5)
	refuseNSID(t, o, c, 0, "0 is A's")
	refuseNSID(t, o, c, 5, "5 is B's")
	refuseNSID(t, o, a, 7, "A has the id 0 already")
	chosenC := mapChosen(t, o, c, 1)
	chosenD := mapChosen(t, o, d, 2)

	w.Expect(chosenA.NewNSID(), givenB.NewNSID(), chosenC.NewNSID(), chosenD.NewNSID())
	for _, p := range []struct {
		peer *selftests.NS
		want int32
	}{{a, 0}, {b, 5}, {c, 1}, {d, 2}} {
		if got := o.IDOf(p.peer); got != p.want {
			t.Errorf("netns O has the id %d for netns %s after the requests, want %d", got, p.peer.Name, p.want)
		}
	}
}

// mapChosen lets the kernel choose the id o gives peer, and checks that it
// chose want, the lowest id free in o.
func mapChosen(t selftests.T, o, peer *selftests.NS, want int32) selftests.NSIDEvent {
	t.Helper()
	e := o.Map(peer, -1)
	if e.ID != want {
		t.Errorf("netns O gave netns %s the id %d of its own choice, want %d: the lowest id free in O", peer.Name, e.ID, want)
	}
	return e
}

// refuseNSID asks o to give peer the id nsid and checks that the kernel
// refuses with EEXIST (why says whose the id is) and that peer's id in o
// did not change.
func refuseNSID(t selftests.T, o, peer *selftests.NS, nsid int32, why string) {
	t.Helper()
	before := o.IDOf(peer)
	_, err := o.Ctl.Do(rtnl.NewNSID(peer.FD(), nsid))
	if !errors.Is(err, unix.EEXIST) {
		t.Errorf("netns O: RTM_NEWNSID for netns %s with nsid %d: %v, want EEXIST (%s)", peer.Name, nsid, errOrACK(err), why)
	}
	if after := o.IDOf(peer); after != before {
		t.Errorf("netns O: the refused RTM_NEWNSID for netns %s with nsid %d changed its id from %d to %d", peer.Name, nsid, before, after)
	}
}

// errOrACK describes a request's outcome: its error, or an ACK.
func errOrACK(err error) string {
	if err == nil {
		return "an ACK (errno 0)"
	}
	return err.Error()
}
