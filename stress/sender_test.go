// SPDX-License-Identifier: GPL-2.0

package main

import (
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"nlmcast/stress/internal/verify"
)

// The transcript a cycle promises, and what tells its sender apart.
func TestCycleAndSource(t *testing.T) {
	s := &sender{idx: 1, pid: 77, nhid: 1}
	plan := s.cycle()
	if len(plan) != 4 {
		t.Fatalf("%d requests per cycle, want 4", len(plan))
	}
	var got []verify.Msg
	for i, p := range plan {
		got = append(got, p.expect(uint32(2)<<seqShift|uint32(i+1))...)
	}
	want := []verify.Msg{
		{Type: unix.RTM_NEWADDR, Seq: 2<<seqShift | 1, Pid: 77, Group: groupAddr, Detail: "10.2.0.1/32 dev 1"},
		{Type: unix.RTM_NEWROUTE, Group: groupRoute, Detail: "local 10.2.0.1/32 table 255"},
		{Type: unix.RTM_NEWROUTE, Seq: 2<<seqShift | 2, Pid: 77, Group: groupRoute, Detail: "blackhole 172.16.2.0/24 table 254 nhid 2"},
		{Type: unix.RTM_NEWSTATS, Group: groupStats, Detail: "ifindex 1"},
		{Type: unix.RTM_DELADDR, Seq: 2<<seqShift | 4, Pid: 77, Group: groupAddr, Detail: "10.2.0.1/32 dev 1"},
		{Type: unix.RTM_DELROUTE, Group: groupRoute, Detail: "local 10.2.0.1/32 table 255"},
	}
	if len(got) != len(want) {
		t.Fatalf("cycle promises %d messages, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("#%d: %s, want %s", i, got[i], want[i])
		}
	}
	for i, m := range want {
		sender, ok := sourceOf(m)
		if m.Type == unix.RTM_NEWSTATS {
			if ok {
				t.Errorf("#%d: RTM_NEWSTATS on lo attributed to sender %d; it carries no sender mark", i, sender)
			}
			continue
		}
		if !ok || sender != 1 {
			t.Errorf("#%d %s: sourceOf = %d, %v; want 1, true", i, m, sender, ok)
		}
	}
	// The next cycle switches the nexthop back and the statistics off.
	next := s.cycle()
	if m := next[1].expect(1)[0]; m.Detail != "blackhole 172.16.2.0/24 table 254 nhid 1" {
		t.Errorf("second replace: %s", m)
	}
}

// faultySender is a sender under injected failures, for settle.
func faultySender() *sender {
	return &sender{idx: 0, pid: 77, nhid: 1, faults: true, unsure: map[verify.Msg]bool{}, addUnsure: map[netip.Prefix][]verify.Msg{}, echoes: map[verify.Msg]verify.Echo{}}
}

// What an unknown outcome leaves unknown, request by request.
func TestSettleUnderFaults(t *testing.T) {
	s := faultySender()
	plan := s.cycle() // add, replace, stats, del
	msgs := func(i int) []verify.Msg { return plan[i].expect(uint32(i + 1)) }
	record := func(i int, result error) (bool, bool) {
		t.Helper()
		owed, unsure, err := s.settle(plan[i], result, msgs(i))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if owed && unsure {
			for _, m := range msgs(i) {
				s.unsure[m] = true
			}
		}
		return owed, unsure
	}
	// The add's ACK is lost: its notifications may or may not come.
	if owed, unsure := record(0, ackLost); !owed || !unsure {
		t.Errorf("add with its ACK lost: owed %v unsure %v, want owed and unsure", owed, unsure)
	}
	// The delete succeeds: the address was there, so the add's
	// notifications are owed after all.
	if owed, unsure := record(3, nil); !owed || unsure {
		t.Errorf("delete done: owed %v unsure %v", owed, unsure)
	}
	for _, m := range msgs(0) {
		if s.unsure[m] {
			t.Errorf("%s still unsure after its address was deleted", m)
		}
	}
	// A replace whose ACK is lost leaves the route unknown: the next
	// replace may change nothing; after that, it is known again.
	if _, unsure := record(1, ackLost); !unsure {
		t.Error("replace with its ACK lost is not unsure")
	}
	if _, unsure := record(1, nil); !unsure {
		t.Error("the replace after an unknown one is not unsure")
	}
	if _, unsure := record(1, nil); unsure {
		t.Error("a replace after a known one is unsure")
	}
	// A request refused for want of memory is unsure as well.
	if _, unsure := record(2, unix.ENOBUFS); !unsure {
		t.Error("stats switch failed with ENOBUFS is not unsure")
	}
	if s.faultCounts.ACKsLost != 2 || s.faultCounts.Failed != 1 {
		t.Errorf("counts %+v", s.faultCounts)
	}
}

// An add that did fail shows at its delete (EADDRNOTAVAIL): nothing to
// delete, nothing owed. The same answer without an unknown add, or any
// error without faults, fails the sender.
func TestSettleDeleteOfAFailedAdd(t *testing.T) {
	s := faultySender()
	plan := s.cycle()
	if _, _, err := s.settle(plan[0], ackLost, plan[0].expect(1)); err != nil {
		t.Fatal(err)
	}
	if owed, _, err := s.settle(plan[3], unix.EADDRNOTAVAIL, plan[3].expect(4)); err != nil || owed {
		t.Errorf("delete of an add that failed: owed %v err %v, want nothing owed", owed, err)
	}
	if _, _, err := s.settle(plan[3], unix.EADDRNOTAVAIL, plan[3].expect(4)); err == nil {
		t.Error("EADDRNOTAVAIL for an address whose add was done was taken")
	}
	plain := &sender{idx: 0, pid: 77, nhid: 1}
	if _, _, err := plain.settle(plan[0], unix.ENOBUFS, nil); err == nil {
		t.Error("without faults, a failed request was taken")
	}
}

// What a churn socket read proves a sender sent: the sender its nsid
// names, the one its message names, or its namespace's own sender; not a
// message that could be any of several senders'.
func TestChurnReceiptsName(t *testing.T) {
	stats := verify.Msg{Type: unix.RTM_NEWSTATS, Group: groupStats, Detail: "ifindex 1"}
	addr := verify.Msg{Type: unix.RTM_NEWADDR, Seq: 2<<seqShift | 5, Pid: 9, Group: groupAddr, Detail: "10.2.0.5/32 dev 1"}
	inS1 := verify.Churn{LocalSender: 1, Mapped: map[int32]int{}, EverAllNSID: true}
	inF := verify.Churn{LocalSender: -1, Mapped: map[int32]int{20: 0, 21: 1}, EverAllNSID: true}
	inC := verify.Churn{LocalSender: -1, Mapped: map[int32]int{3: 1}, EverAllNSID: true}
	for _, c := range []struct {
		rules verify.Churn
		got   verify.Got
		want  int
		ok    bool
	}{
		{inS1, verify.Got{Msg: stats}, 1, true},
		{inF, verify.Got{Msg: stats, Tag: verify.NSID(20)}, 0, true},
		{inF, verify.Got{Msg: stats}, 0, false}, // queued before LISTEN_ALL_NSID was cleared: S0's or S1's
		{inF, verify.Got{Msg: addr}, 1, true},
		{inC, verify.Got{Msg: stats}, 1, true},
	} {
		s, ok := sentBy(c.rules, c.got)
		if s != c.want || ok != c.ok {
			t.Errorf("sentBy(%+v, %s %s) = %d, %v; want %d, %v", c.rules, c.got.Msg, c.got.Tag, s, ok, c.want, c.ok)
		}
	}
	// Receipts keep the most copies one socket read.
	var ch churn
	ch.keep(&churnSock{read: map[verify.FromSender]int{{Sender: 1, Msg: stats}: 2}})
	ch.keep(&churnSock{read: map[verify.FromSender]int{{Sender: 1, Msg: stats}: 1, {Sender: 0, Msg: addr}: 1}})
	if ch.receipts[verify.FromSender{Sender: 1, Msg: stats}] != 2 || ch.receipts[verify.FromSender{Sender: 0, Msg: addr}] != 1 {
		t.Errorf("receipts %v", ch.receipts)
	}
}

// The observer (foreign, LISTEN_ALL_NSID: netlink_set_err() does not reach
// it) misses a message that no stable receiver got, with no ENOBUFS. The
// old judge took it that its nlmsg_new() failed; but a churn socket got it
// (the walk's first socket gets the notification without a clone), so it
// was sent, and the observer is owed it or an ENOBUFS.
func TestChurnReceiptProvesSent(t *testing.T) {
	judge := func(receipt bool) outcome { return judgeMissedMiddle(receipt, nil) }
	if out := judge(false); len(out.problems) != 0 || out.report.Undelivered != 1 {
		t.Fatalf("without a receipt: problems %q, undelivered %d; want the loss excused as never sent", out.problems, out.report.Undelivered)
	}
	out := judge(true)
	if len(out.problems) == 0 || !strings.Contains(strings.Join(out.problems, "\n"), "observer, from sender S0 (nsid 10): lost without an ENOBUFS to account for it") {
		t.Fatalf("with a churn socket's receipt: problems %q; want the loss", out.problems)
	}
}

// judgeMissedMiddle judges a fault mode in which the foreign observer
// (LISTEN_ALL_NSID: netlink_set_err() does not reach it) got the first
// and the third of sender S0's three RTM_NEWADDR, and nothing else; a
// churn socket got the second when receipt is set. echoes, when not nil,
// gives the sender's echoes of the three.
func judgeMissedMiddle(receipt bool, echoes func(m []verify.Msg) map[verify.Msg]verify.Echo) outcome {
	m := []verify.Msg{
		{Type: unix.RTM_NEWADDR, Seq: 1<<seqShift | 1, Pid: 9, Group: groupAddr, Detail: "10.1.0.1/32 dev 1"},
		{Type: unix.RTM_NEWADDR, Seq: 1<<seqShift | 2, Pid: 9, Group: groupAddr, Detail: "10.1.0.2/32 dev 1"},
		{Type: unix.RTM_NEWADDR, Seq: 1<<seqShift | 3, Pid: 9, Group: groupAddr, Detail: "10.1.0.3/32 dev 1"},
	}
	done := make(chan struct{})
	close(done)
	obs := &stable{kind: "foreign-all-nsid-mapped", done: done,
		want: foreignRoute(routeGroups, map[int]verify.Tag{0: verify.NSID(10)}),
		got:  []verify.Got{{Msg: m[0], Tag: verify.NSID(10)}, {Msg: m[2], Tag: verify.NSID(10)}, {Event: verify.Drained}}}
	obs.want.Name = "observer"
	ch := &churn{}
	if receipt {
		ch.keep(&churnSock{read: map[verify.FromSender]int{{Sender: 0, Msg: m[1]}: 1}})
	}
	s := &sender{name: "S0", transcript: m, unsure: map[verify.Msg]bool{}}
	if echoes != nil {
		s.echoes = echoes(m)
	}
	top := &topology{faults: true, names: []string{"S0", "S0/usersock"}, stables: []*stable{obs}, churn: ch, senders: []*sender{s}}
	var out outcome
	top.judge(&out)
	return out
}
