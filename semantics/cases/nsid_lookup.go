// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// nsidLookupMatchesDelivery: a LISTEN_ALL_NSID subscriber learns where a
// notification came from only as an nsid, and RTM_GETNSID is how it turns
// that id back into a namespace, or asks what a peer calls a third one. So
// every way of asking must report the id the delivery carries.
//
// O gives A the id 3, naming A by the id of a thread in it (NETNSA_PID),
// and B the id 5 by an nsfs fd; A gives B the id 7 and C the id 8; O has
// no id for C. l (O, ALL_NSID) gets A's address notification tagged 3.
// From O's control socket:
//   - RTM_GETNSID naming A by thread id, by fd or by the id 3 itself is one
//     RTM_NEWNSID with the request's seq and portid, flags 0, family
//     AF_UNSPEC and exactly NETNSA_NSID 3; C, which O has no id for, is
//     -1 (NETNSA_NSID_NOT_ASSIGNED).
//   - With NETNSA_TARGET_NSID 3 the lookup is made in A: B (named by fd or
//     by O's id 5) is NETNSA_NSID 7 with NETNSA_CURRENT_NSID 5, O's own id
//     for it; C is 8 with NETNSA_CURRENT_NSID -1.
//   - The dump lists O's ids, 3 and 5, each NLM_F_MULTI with the dump's seq
//     and exactly NETNSA_NSID; a strict (NETLINK_GET_STRICT_CHK) dump with
//     NETNSA_TARGET_NSID 3 lists A's, 7 and 8, each with its
//     NETNSA_CURRENT_NSID, 5 and -1; a lax one ignores the target and lists
//     O's.
//   - None of these lookups takes a reference it keeps: when the harness
//     lets A go, A dies, and w (O, RTNLGRP_NSID) gets RTM_DELNSID 3 after
//     the two RTM_NEWNSID of O's assignments.
//
// Kernel: rtnl_net_getid(): peer from get_net_ns_by_pid(),
// get_net_ns_by_fd() or get_net_ns_by_id(); with NETNSA_TARGET_NSID,
// target = rtnl_get_net_ns_capable(), fillargs.add_ref, ref_nsid =
// peernet2id(net, peer); fillargs.nsid = peernet2id(target, peer);
// rtnl_net_fill(); put_net(target), put_net(peer). rtnl_net_dumpid(): with
// cb->strict_check, rtnl_valid_dump_net_req() swaps tgt_net and ref_net;
// rtnl_net_dumpid_one() fills ref_nsid = __peernet2id(ref_net, peer).
func nsidLookupMatchesDelivery(t selftests.T) {
	o, a, b, c := selftests.NewNS(t, "O"), selftests.NewNS(t, "A"), selftests.NewNS(t, "B"), selftests.NewNS(t, "C")
	const idOfA, idOfB, bInA, cInA = 3, 5, 7, 8
	w := o.Socket("w", selftests.Join(unix.RTNLGRP_NSID))
	l := o.Socket("l", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	w.Expect()

	var givenA rtnl.Reply
	onThreadIn(t, a, func(tid int) error {
		var err error
		givenA, err = o.Ctl.Do(rtnl.NSIDRequest(unix.RTM_NEWNSID, rtnl.WithNSID(idOfA), rtnl.ByPID(tid)))
		return err
	})
	givenB := o.Map(b, idOfB)
	a.Map(b, bInA)
	a.Map(c, cInA)
	w.Expect(selftests.NSIDEvent{ID: idOfA, Seq: givenA.Seq, Pid: o.Ctl.Portid()}.NewNSID(), givenB.NewNSID())

	e := a.AddAddr()
	l.Expect(e.NewAddr().NSID(idOfA))

	byA := []rtnl.NSIDAttr{rtnl.ByFD(a.FD()), rtnl.WithNSID(idOfA)}
	for _, name := range byA {
		expectLookup(t, o, []rtnl.NSIDAttr{name}, idOfA, nil)
	}
	onThreadIn(t, a, func(tid int) error {
		expectLookup(t, o, []rtnl.NSIDAttr{rtnl.ByPID(tid)}, idOfA, nil)
		return nil
	})
	expectLookup(t, o, []rtnl.NSIDAttr{rtnl.ByFD(c.FD())}, rtnl.NotAssigned, nil)
	expectLookup(t, o, []rtnl.NSIDAttr{rtnl.ByFD(b.FD()), rtnl.InTarget(idOfA)}, bInA, nsidPtr(idOfB))
	expectLookup(t, o, []rtnl.NSIDAttr{rtnl.WithNSID(idOfB), rtnl.InTarget(idOfA)}, bInA, nsidPtr(idOfB))
	expectLookup(t, o, []rtnl.NSIDAttr{rtnl.ByFD(c.FD()), rtnl.InTarget(idOfA)}, cInA, nsidPtr(rtnl.NotAssigned))

	ownIDs := []rtnl.NSIDReply{{NSID: idOfA}, {NSID: idOfB}}
	lax, strict := dumpConn(t, o, false), dumpConn(t, o, true)
	expectNSIDDump(t, "lax dump from O", lax, nil, ownIDs)
	expectNSIDDump(t, "lax dump from O with target_nsid 3 (ignored)", lax, []rtnl.NSIDAttr{rtnl.InTarget(idOfA)}, ownIDs)
	expectNSIDDump(t, "strict dump from O", strict, nil, ownIDs)
	expectNSIDDump(t, "strict dump from O with target_nsid 3", strict, []rtnl.NSIDAttr{rtnl.InTarget(idOfA)},
		[]rtnl.NSIDReply{{NSID: bInA, Current: nsidPtr(idOfB)}, {NSID: cInA, Current: nsidPtr(rtnl.NotAssigned)}})

	l.Expect()
	a.Release()
	w.ExpectEventually(selftests.NetnsDeathDeadline, selftests.NSIDNotification(unix.RTM_DELNSID, idOfA))
}

// nsidRequestsRefused: an RTM_NEWNSID or RTM_GETNSID the kernel cannot
// carry out is refused with an errno, an extended ACK text and, where one
// attribute is to blame, that attribute's offset; it announces nothing
// and changes no id. This is how `ip netns set` and monitors learn why.
// O has given A the id 3 and nothing else; B has no id in O.
//
// RTM_NEWNSID: no NETNSA_NSID is EINVAL "nsid is missing"; no peer is
// EINVAL "Peer netns reference is missing"; a pid no task has is ESRCH
// and an fd that is not a network namespace EINVAL, both "Peer netns
// reference is invalid" blaming the reference; A again, by fd or by a
// thread's id, is EEXIST "Peer netns already has a nsid assigned" blaming
// the reference; B with the id 3 is EEXIST "The specified nsid is already
// used" blaming NETNSA_NSID.
// RTM_GETNSID: no peer is EINVAL "Peer netns reference is missing"; a bad
// pid, fd or an unassigned id is ESRCH, EINVAL or ENOENT "Peer netns
// reference is invalid" blaming it; an unassigned NETNSA_TARGET_NSID is
// EINVAL "Target netns reference is invalid" blaming it.
// A strict RTM_GETNSID dump with NETNSA_FD or NETNSA_CURRENT_NSID is
// EINVAL "Unsupported attribute in dump request", with an unassigned
// NETNSA_TARGET_NSID EINVAL "Invalid target network namespace id", each
// in the NLMSG_DONE, with no entry before it (the offset, where a kernel
// reports one there, blames the attribute).
//
// Kernel: rtnl_net_newid(), rtnl_net_getid(), rtnl_valid_dump_net_req();
// get_net_ns_by_pid() -> -ESRCH, get_net_ns_by_fd() -> -EINVAL for a file
// that is not a netns; alloc_netid() -ENOSPC for a requested id -> -EEXIST;
// rtnl_get_net_ns_capable() -> -EINVAL for an id it has not given;
// netlink_ack() puts NLMSGERR_ATTR_MSG and NLMSGERR_ATTR_OFFS (bad_attr
// minus the request's nlmsghdr).
func nsidRequestsRefused(t selftests.T) {
	o, a, b := selftests.NewNS(t, "O"), selftests.NewNS(t, "A"), selftests.NewNS(t, "B")
	const idOfA, unassigned = 3, 9
	o.Map(a, idOfA)
	w := o.Socket("w", selftests.Join(unix.RTNLGRP_NSID))
	wa := a.Socket("wa", selftests.Join(unix.RTNLGRP_NSID))

	notNS := pipeFD(t)
	const noTask = 0x7fffffff // above PID_MAX_LIMIT: no task has it
	const (
		invalidPeer = "Peer netns reference is invalid"
		missingPeer = "Peer netns reference is missing"
	)
	type refusal struct {
		typ    uint16
		attrs  []rtnl.NSIDAttr
		errno  unix.Errno
		msg    string
		blamed int // index of the attribute blamed, -1: none
	}
	refusals := []refusal{
		{unix.RTM_NEWNSID, []rtnl.NSIDAttr{rtnl.ByFD(b.FD())}, unix.EINVAL, "nsid is missing", -1},
		{unix.RTM_NEWNSID, []rtnl.NSIDAttr{rtnl.WithNSID(4)}, unix.EINVAL, missingPeer, -1},
		{unix.RTM_NEWNSID, []rtnl.NSIDAttr{rtnl.WithNSID(4), rtnl.ByPID(noTask)}, unix.ESRCH, invalidPeer, 1},
		{unix.RTM_NEWNSID, []rtnl.NSIDAttr{rtnl.WithNSID(4), rtnl.ByFD(notNS)}, unix.EINVAL, invalidPeer, 1},
		{unix.RTM_NEWNSID, []rtnl.NSIDAttr{rtnl.WithNSID(4), rtnl.ByFD(a.FD())}, unix.EEXIST, "Peer netns already has a nsid assigned", 1},
		{unix.RTM_NEWNSID, []rtnl.NSIDAttr{rtnl.WithNSID(idOfA), rtnl.ByFD(b.FD())}, unix.EEXIST, "The specified nsid is already used", 0},
		{unix.RTM_GETNSID, nil, unix.EINVAL, missingPeer, -1},
		{unix.RTM_GETNSID, []rtnl.NSIDAttr{rtnl.ByPID(noTask)}, unix.ESRCH, invalidPeer, 0},
		{unix.RTM_GETNSID, []rtnl.NSIDAttr{rtnl.ByFD(notNS)}, unix.EINVAL, invalidPeer, 0},
		{unix.RTM_GETNSID, []rtnl.NSIDAttr{rtnl.WithNSID(unassigned)}, unix.ENOENT, invalidPeer, 0},
		{unix.RTM_GETNSID, []rtnl.NSIDAttr{rtnl.ByFD(a.FD()), rtnl.InTarget(unassigned)}, unix.EINVAL, "Target netns reference is invalid", 1},
	}
	for _, r := range refusals {
		req := rtnl.NSIDRequest(r.typ, r.attrs...)
		_, err := o.Ctl.Do(req)
		expectRefusal(t, "netns O: "+req.Name, err, r.errno, r.msg, r.blamed, true)
	}
	onThreadIn(t, a, func(tid int) error {
		attrs := []rtnl.NSIDAttr{rtnl.WithNSID(4), rtnl.ByPID(tid)}
		_, err := o.Ctl.Do(rtnl.NSIDRequest(unix.RTM_NEWNSID, attrs...))
		expectRefusal(t, "netns O: RTM_NEWNSID for netns A by a thread's id", err, unix.EEXIST, "Peer netns already has a nsid assigned", 1, true)
		return nil
	})

	strict := dumpConn(t, o, true)
	const unsupported = "Unsupported attribute in dump request"
	for _, r := range []refusal{
		{attrs: []rtnl.NSIDAttr{rtnl.ByFD(a.FD())}, errno: unix.EINVAL, msg: unsupported},
		{attrs: []rtnl.NSIDAttr{{Type: unix.NETNSA_CURRENT_NSID, Value: idOfA}}, errno: unix.EINVAL, msg: unsupported},
		{attrs: []rtnl.NSIDAttr{rtnl.InTarget(unassigned)}, errno: unix.EINVAL, msg: "Invalid target network namespace id"},
	} {
		req := rtnl.NSIDRequest(unix.RTM_GETNSID, r.attrs...)
		msgs, err := strict.Dump(req)
		if err == nil {
			t.Errorf("netns O: strict %s dump: %d entries and no error, want %v (%q)", req.Name, len(msgs), r.errno, r.msg)
			continue
		}
		expectRefusal(t, "netns O: strict "+req.Name+" dump", err, r.errno, r.msg, 0, false)
	}

	if ids, err := o.Ctl.NSIDs(); err != nil || !slices.Equal(ids, []int32{idOfA}) {
		t.Errorf("netns O: ids %v (%v) after the refused requests, want exactly [%d]", ids, err, idOfA)
	}
	if id := a.IDOf(b); id != rtnl.NotAssigned {
		t.Errorf("netns A: id %d for netns B, want none", id)
	}
	w.Expect()
	wa.Expect()
}

// expectRefusal checks a refused request: errno, extended ACK text, and
// the attribute blamed (index into the request's attributes, -1: none).
// Where offsetRequired is false (a dump's NLMSG_DONE, which 6.1 sends
// without an offset) a missing offset is accepted, a wrong one is not.
func expectRefusal(t selftests.T, what string, err error, errno unix.Errno, msg string, blamed int, offsetRequired bool) {
	t.Helper()
	var e *rtnl.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %v, want %v (%q)", what, errOrACK(err), errno, msg)
		return
	}
	var want uint32
	if blamed >= 0 {
		want = rtnl.NSIDAttrOffset(blamed)
	}
	offsetOK := e.Offset == want || (!offsetRequired && e.Offset == 0)
	if e.Errno != errno || e.Message != msg || !offsetOK {
		t.Errorf("%s:\n  want %v (%q) bad attribute at offset %d\n  got  %v (%q) bad attribute at offset %d",
			what, errno, msg, want, e.Errno, e.Message, e.Offset)
	}
}

// expectLookup sends RTM_GETNSID with attrs from o and checks the one
// reply: header (type, flags 0, seq, portid), family and attributes.
func expectLookup(t selftests.T, o *selftests.NS, attrs []rtnl.NSIDAttr, nsid int32, current *int32) {
	t.Helper()
	req := rtnl.NSIDRequest(unix.RTM_GETNSID, attrs...)
	rep, err := o.Ctl.Do(req)
	if err != nil {
		t.Errorf("netns %s: %v", o.Name, err)
		return
	}
	want := rtnl.NSIDReply{NSID: nsid, Current: current}
	if len(rep.Msgs) != 1 {
		t.Errorf("netns %s: %s: %d replies, want 1: %s", o.Name, req.Name, len(rep.Msgs), want)
		return
	}
	m := rep.Msgs[0]
	if h := m.Header; h.Flags != 0 || h.Sequence != rep.Seq || h.PID != o.Ctl.Portid() {
		t.Errorf("netns %s: %s: reply flags %#x seq %d pid %d, want flags 0 seq %d pid %d",
			o.Name, req.Name, uint16(h.Flags), h.Sequence, h.PID, rep.Seq, o.Ctl.Portid())
	}
	compareNSIDReplies(t, fmt.Sprintf("netns %s: %s", o.Name, req.Name), []netlink.Message{m}, []rtnl.NSIDReply{want})
}

// expectNSIDDump dumps the ids through c with attrs and compares the
// entries, in the kernel's order (ascending id), to want. Every entry is
// NLM_F_MULTI with the dump request's seq and c's portid.
func expectNSIDDump(t selftests.T, what string, c *rtnl.Conn, attrs []rtnl.NSIDAttr, want []rtnl.NSIDReply) {
	t.Helper()
	msgs, err := c.Dump(rtnl.NSIDRequest(unix.RTM_GETNSID, attrs...))
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	for _, m := range msgs {
		if m.Header.Flags != netlink.Multi || m.Header.PID != c.Portid() {
			t.Errorf("%s: entry flags %#x pid %d, want NLM_F_MULTI pid %d", what, uint16(m.Header.Flags), m.Header.PID, c.Portid())
		}
	}
	compareNSIDReplies(t, what, msgs, want)
}

// compareNSIDReplies takes msgs apart and compares them, in order, with
// want: family AF_UNSPEC, NETNSA_NSID, and NETNSA_CURRENT_NSID exactly
// where want has it, no other attribute.
func compareNSIDReplies(t selftests.T, what string, msgs []netlink.Message, want []rtnl.NSIDReply) {
	t.Helper()
	var got, wantText []string
	for _, w := range want {
		w.Attrs = []uint16{unix.NETNSA_NSID}
		if w.Current != nil {
			w.Attrs = append(w.Attrs, unix.NETNSA_CURRENT_NSID)
		}
		wantText = append(wantText, w.String())
	}
	for _, m := range msgs {
		r, err := rtnl.ParseNSIDReply(m)
		if err != nil {
			got = append(got, err.Error())
			continue
		}
		got = append(got, r.String())
	}
	if !slices.Equal(got, wantText) {
		t.Errorf("%s:\n  want %s\n  got  %s", what, strings.Join(wantText, "; "), strings.Join(got, "; "))
	}
}

// onThreadIn runs fn on a thread that has joined n, with the thread's id,
// which names n to NETNSA_PID while fn runs. fn must not stop the case
// (it runs on a thread of its own); its error fails the case.
func onThreadIn(t selftests.T, n *selftests.NS, fn func(tid int) error) {
	t.Helper()
	if err := n.NS.Do(func() error { return fn(unix.Gettid()) }); err != nil {
		t.Fatalf("netns %s: %v", n.Name, err)
	}
}

// pipeFD returns a file descriptor that is not a namespace (a pipe's read
// end), closed when the case ends.
func pipeFD(t selftests.T) int {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatalf("pipe2: %v", err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0]
}
