// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// The conditional tc notification cases. Since Linux 6.8 tc builds a
// filter, chain or action notification only if the request has
// NLM_F_ECHO or some socket, in any namespace, listens to RTNLGRP_TC
// (rtnl_notify_needed() -> netlink_has_listeners(), a protocol-wide
// bitmap); 6.1 always builds it. Whether anybody listens is not something
// a case can know or control (another copy of the suite may listen), so
// the cases assert only what holds either way: every request takes effect,
// an ECHO requester gets its own notification, and the delivery rules
// decide everything else.

// tcStep is one request of the tc script, what it notifies on RTNLGRP_TC
// as a subscriber in S sees it, and how to see that it took effect.
type tcStep struct {
	req rtnl.Request
	// notes are the notifications of the request with sequence seq from
	// the socket with portid pid, in the order the kernel sends them. The
	// ones with the request's seq are the request's own: an ECHO
	// requester gets them back. The others (chains) the kernel notifies
	// on its own, with seq 0 and pid 0, and never echoes.
	notes  func(seq, pid uint32) []selftests.Msg
	effect func(t selftests.T, s *selftests.NS)
}

const (
	tcDev        = rtnl.LoopbackIndex
	tcPrio       = 1
	tcChain      = 7
	tcAction     = 7
	tcClassID    = 0x10001 // 1:1
	tcFilterKind = "u32 chain 0"
)

// chainNotification is the kernel's own notification of chain index on lo
// (tc_chain_notify() with seq 0 and portid 0): NLM_F_CREATE|NLM_F_EXCL for
// a new chain, no flags for a deleted one.
func chainNotification(typ uint16, index int) selftests.Msg {
	m := selftests.Notification(typ, unix.RTNLGRP_TC, rtnl.TCDetail(tcDev, rtnl.TCChain(uint32(index))))
	if typ == unix.RTM_NEWCHAIN {
		m.Flags = unix.NLM_F_CREATE | unix.NLM_F_EXCL
	}
	return m
}

// tcScript is the filter, chain and action life cycle on lo's ingress
// qdisc, which must exist: add a u32 filter (the first one creates chain
// 0), replace its key, delete the key (the last one: the filter and chain
// 0 go with it), add it again and delete the whole filter by priority;
// create and delete the empty chain 7; create and delete the standalone
// mirred action 7.
func tcScript() []tcStep {
	own := func(typ uint16, detail string) func(seq, pid uint32) selftests.Msg {
		return func(seq, pid uint32) selftests.Msg {
			return selftests.Msg{Type: typ, Seq: seq, Pid: pid, Group: unix.RTNLGRP_TC, Detail: detail}
		}
	}
	filterDetail := rtnl.TCDetail(tcDev, tcFilterKind)
	newFilter, delFilter := own(unix.RTM_NEWTFILTER, filterDetail), own(unix.RTM_DELTFILTER, filterDetail)
	actionDetail := fmt.Sprintf("mirred index %d", tcAction)
	newAction, delAction := own(unix.RTM_NEWACTION, actionDetail), own(unix.RTM_DELACTION, actionDetail)

	add := tcStep{
		req: rtnl.NewU32Mirred(tcDev, tcPrio, tcDev),
		notes: func(seq, pid uint32) []selftests.Msg {
			return []selftests.Msg{chainNotification(unix.RTM_NEWCHAIN, 0), newFilter(seq, pid)}
		},
		effect: func(t selftests.T, s *selftests.NS) { expectU32Key(t, s, true, 0) },
	}
	return []tcStep{
		add,
		{
			req:    rtnl.ReplaceU32(tcDev, tcPrio, rtnl.U32FirstKey, tcClassID),
			notes:  func(seq, pid uint32) []selftests.Msg { return []selftests.Msg{newFilter(seq, pid)} },
			effect: func(t selftests.T, s *selftests.NS) { expectU32Key(t, s, true, tcClassID) },
		},
		{
			req: rtnl.DelU32Key(tcDev, tcPrio, rtnl.U32FirstKey),
			notes: func(seq, pid uint32) []selftests.Msg {
				return []selftests.Msg{delFilter(seq, pid), chainNotification(unix.RTM_DELCHAIN, 0)}
			},
			effect: func(t selftests.T, s *selftests.NS) { expectU32Key(t, s, false, 0) },
		},
		add,
		{
			req: rtnl.DelU32(tcDev, tcPrio),
			notes: func(seq, pid uint32) []selftests.Msg {
				return []selftests.Msg{delFilter(seq, pid), chainNotification(unix.RTM_DELCHAIN, 0)}
			},
			effect: func(t selftests.T, s *selftests.NS) { expectU32Key(t, s, false, 0) },
		},
		{
			req: rtnl.NewChain(tcDev, tcChain),
			notes: func(uint32, uint32) []selftests.Msg {
				return []selftests.Msg{chainNotification(unix.RTM_NEWCHAIN, tcChain)}
			},
			effect: func(t selftests.T, s *selftests.NS) { expectChains(t, s, tcChain) },
		},
		{
			req: rtnl.DelChain(tcDev, tcChain),
			notes: func(uint32, uint32) []selftests.Msg {
				return []selftests.Msg{chainNotification(unix.RTM_DELCHAIN, tcChain)}
			},
			effect: func(t selftests.T, s *selftests.NS) { expectChains(t, s) },
		},
		{
			req:    rtnl.NewMirredAction(tcAction, tcDev),
			notes:  func(seq, pid uint32) []selftests.Msg { return []selftests.Msg{newAction(seq, pid)} },
			effect: func(t selftests.T, s *selftests.NS) { expectMirredAction(t, s, true) },
		},
		{
			req:    rtnl.DelMirredAction(tcAction),
			notes:  func(seq, pid uint32) []selftests.Msg { return []selftests.Msg{delAction(seq, pid)} },
			effect: func(t selftests.T, s *selftests.NS) { expectMirredAction(t, s, false) },
		},
	}
}

// echoed returns the notes that belong to the request with sequence seq:
// what NLM_F_ECHO sends back.
func echoed(notes []selftests.Msg, seq uint32) []selftests.Msg {
	var out []selftests.Msg
	for _, m := range notes {
		if m.Seq == seq {
			out = append(out, m)
		}
	}
	return out
}

// prepareTC gives lo in s an ingress qdisc and checks, before any socket
// of the case exists, that the kernel has everything the script uses
// (the case SKIPs, naming what is missing, if not); it leaves no filter,
// chain or action behind.
func prepareTC(t selftests.T, s *selftests.NS) {
	t.Helper()
	s.CreateTC(rtnl.NewIngress(tcDev), "the ingress qdisc (sch_ingress)")
	s.CreateTC(rtnl.NewU32Mirred(tcDev, tcPrio, tcDev), "the u32 classifier or the mirred action")
	s.Do(rtnl.DelU32(tcDev, tcPrio))
	s.CreateTC(rtnl.NewMirredAction(tcAction, tcDev), "the mirred action")
	s.Do(rtnl.DelMirredAction(tcAction))
}

// runTCScript sends every request of the script from the subscriber from
// (with extra header flags), then calls check with the step's
// notifications and the request's sequence number, and checks that the
// request took effect.
func runTCScript(t selftests.T, s *selftests.NS, from *selftests.Sock, flags netlink.HeaderFlags,
	check func(notes []selftests.Msg, seq uint32)) {
	t.Helper()
	for _, step := range tcScript() {
		seq := from.Request(step.req, flags)
		// The request's own notifications carry its nlmsg_flags
		// (tfilter_notify() and tcf_add_notify() copy n->nlmsg_flags),
		// except an action's deletion: tcf_del_notify() sends 0.
		sent := uint16(step.req.Msg.Header.Flags | netlink.Request | netlink.Acknowledge | flags)
		notes := step.notes(seq, from.Portid())
		for i := range notes {
			if notes[i].Seq == seq && notes[i].Type != unix.RTM_DELACTION {
				notes[i].Flags = sent
			}
		}
		check(notes, seq)
		step.effect(t, s)
	}
}

// runTCScriptCtl sends every request of the script from s's control
// socket without NLM_F_ECHO and checks that each was answered with the
// ACK alone and took effect.
func runTCScriptCtl(t selftests.T, s *selftests.NS) {
	t.Helper()
	for _, step := range tcScript() {
		if rep := s.Do(step.req); len(rep.Msgs) != 0 {
			t.Errorf("netns %s: %s without NLM_F_ECHO: %d messages before the ACK, want none", s.Name, step.req.Name, len(rep.Msgs))
		}
		step.effect(t, s)
	}
}

// expectU32Key checks, with a filter dump, whether lo's ingress qdisc has
// the u32 key rtnl.U32FirstKey (with the given classid), and no other
// key.
func expectU32Key(t selftests.T, s *selftests.NS, present bool, classid uint32) {
	t.Helper()
	objs := dumpTC(t, s, rtnl.GetFilters(tcDev))
	var keys []string
	for _, o := range objs {
		if o.Kind == "u32" && o.Handle&0xfff != 0 { // a key, not the filter or a hash table
			keys = append(keys, fmt.Sprintf("handle %#x classid %#x", o.Handle, o.U32ClassID()))
		}
	}
	var want []string
	if present {
		want = []string{fmt.Sprintf("handle %#x classid %#x", uint32(rtnl.U32FirstKey), classid)}
	}
	if !slices.Equal(keys, want) {
		t.Errorf("netns %s: u32 keys on lo ingress %v, want %v (dump: %v)", s.Name, keys, want, objs)
	}
	if !present && len(objs) != 0 {
		t.Errorf("netns %s: filters on lo ingress %v, want none", s.Name, objs)
	}
}

// expectChains checks, with a chain dump, that lo's ingress qdisc has
// exactly the chains want.
func expectChains(t selftests.T, s *selftests.NS, want ...uint32) {
	t.Helper()
	var got []uint32
	for _, o := range dumpTC(t, s, rtnl.GetChains(tcDev)) {
		if o.Chain == nil {
			t.Errorf("netns %s: chain dump entry without TCA_CHAIN: %v", s.Name, o)
			continue
		}
		got = append(got, *o.Chain)
	}
	if !slices.Equal(got, want) {
		t.Errorf("netns %s: chains on lo ingress %v, want %v", s.Name, got, want)
	}
}

// expectMirredAction checks with RTM_GETACTION whether the mirred action
// tcAction exists (ENOENT if not).
func expectMirredAction(t selftests.T, s *selftests.NS, present bool) {
	t.Helper()
	rep, err := s.Ctl.Do(rtnl.GetMirredAction(tcAction))
	switch {
	case present && (err != nil || len(rep.Msgs) != 1):
		t.Errorf("netns %s: mirred action %d: %d replies, %v; want it to exist", s.Name, tcAction, len(rep.Msgs), err)
	case !present && !errors.Is(err, unix.ENOENT):
		t.Errorf("netns %s: mirred action %d: %d replies, %v; want ENOENT", s.Name, tcAction, len(rep.Msgs), err)
	}
}

func dumpTC(t selftests.T, s *selftests.NS, r rtnl.Request) []rtnl.TCObject {
	t.Helper()
	msgs, err := s.Ctl.Dump(r)
	if err != nil {
		t.Fatalf("netns %s: %v", s.Name, err)
	}
	out := make([]rtnl.TCObject, len(msgs))
	for i, m := range msgs {
		if out[i], err = rtnl.ParseTC(m); err != nil {
			t.Fatalf("netns %s: %s: %v", s.Name, r.Name, err)
		}
	}
	return out
}
