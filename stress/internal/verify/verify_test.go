// SPDX-License-Identifier: GPL-2.0

package verify

import (
	"strings"
	"testing"
)

const (
	gAddr  = 5
	gRoute = 7
	gStats = 36
)

func addr(seq uint32, a string) Msg {
	return Msg{Type: 20, Seq: seq, Pid: 100, Group: gAddr, Detail: a + "/32 dev 1"}
}
func local(a string) Msg {
	return Msg{Type: 24, Group: gRoute, Detail: "local " + a + "/32 table 255"}
}
func stats() Msg { return Msg{Type: 92, Group: gStats, Detail: "ifindex 1"} }

var names = []string{"S0", "S1"}

func transcripts() [][]Msg {
	return [][]Msg{
		{addr(1, "10.1.0.1"), local("10.1.0.1"), stats(), addr(2, "10.1.0.2"), local("10.1.0.2"), stats()},
		{addr(1<<24|1, "10.2.0.1"), local("10.2.0.1"), stats()},
	}
}

func tagged(tag Tag, msgs ...Msg) []Got {
	out := make([]Got, len(msgs))
	for i, m := range msgs {
		out[i] = Got{Msg: m, Tag: tag}
	}
	return out
}

var all = []uint32{gAddr, gRoute, gStats}

func mustFail(t *testing.T, rep Report, want ...string) {
	t.Helper()
	if len(rep.Problems) == 0 {
		t.Fatalf("no problem found, want %q", want)
	}
	text := Join(rep.Problems)
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("diagnosis lacks %q:\n%s", w, text)
		}
	}
}

func TestExactLocalReceiverPasses(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "local", Groups: all, Sees: map[int]Tag{0: Local}}
	rep := Check(r, names, tr, tagged(Local, tr[0]...), nil)
	if len(rep.Problems) != 0 || rep.Verified != len(tr[0]) {
		t.Fatalf("verified %d, problems %q", rep.Verified, rep.Problems)
	}
}

func TestObserverPassesWithBothSenders(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10), 1: NSID(11)}}
	// Interleaving between senders is free; the order per sender is not.
	got := append(tagged(NSID(11), tr[1][:1]...), tagged(NSID(10), tr[0]...)...)
	got = append(got, tagged(NSID(11), tr[1][1:]...)...)
	rep := Check(r, names, tr, got, nil)
	if len(rep.Problems) != 0 || rep.Verified != len(tr[0])+len(tr[1]) {
		t.Fatalf("verified %d, problems %q", rep.Verified, rep.Problems)
	}
}

func TestGroupFilter(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "bind", Groups: []uint32{gAddr, gRoute}, Sees: map[int]Tag{0: Local}}
	rep := Check(r, names, tr, tagged(Local, filter(tr[0], map[uint32]bool{gAddr: true, gRoute: true})...), nil)
	if len(rep.Problems) != 0 || rep.Verified != 4 {
		t.Fatalf("verified %d, problems %q", rep.Verified, rep.Problems)
	}
}

func TestDuplicate(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "local", Groups: all, Sees: map[int]Tag{0: Local}}
	got := append([]Msg{}, tr[0][:4]...)
	got = append(got, tr[0][3])
	got = append(got, tr[0][4:]...)
	mustFail(t, Check(r, names, tr, tagged(Local, got...), nil), "local, from sender S0", "expected 6 messages, received 7",
		"duplicate: type 20 seq 2", "received 2 times, sent 1 times", "first difference at #4")
}

func TestLoss(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "local", Groups: all, Sees: map[int]Tag{0: Local}}
	got := append(append([]Msg{}, tr[0][:1]...), tr[0][2:]...)
	mustFail(t, Check(r, names, tr, tagged(Local, got...), nil), "expected 6 messages, received 5",
		"lost: type 24 seq 0 pid 0 group 7 [local 10.1.0.1/32 table 255] sent 1 times (first expected at #1), received 0 times")
}

func TestLossOfOneOfIdenticalMessages(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "local", Groups: all, Sees: map[int]Tag{0: Local}}
	got := tr[0][:len(tr[0])-1] // the second of two identical stats messages
	mustFail(t, Check(r, names, tr, tagged(Local, got...), nil), "lost: type 92", "sent 2 times", "received 1 times")
}

func TestReordering(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "local", Groups: all, Sees: map[int]Tag{0: Local}}
	got := append([]Msg{}, tr[0]...)
	got[0], got[1] = got[1], got[0]
	rep := Check(r, names, tr, tagged(Local, got...), nil)
	mustFail(t, rep, "reordered: first difference at #0: expected type 20 seq 1")
	if strings.Contains(Join(rep.Problems), "duplicate") || strings.Contains(Join(rep.Problems), "lost") {
		t.Errorf("a pure reordering is reported as loss or duplicate: %q", rep.Problems)
	}
}

func TestWrongNSID(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10), 1: NSID(11)}}
	got := append(tagged(NSID(10), tr[0]...), tagged(NSID(12), tr[1]...)...)
	mustFail(t, Check(r, names, tr, got, nil), "observer: message #6 from a namespace it cannot see (nsid 12)",
		"from sender S1 (nsid 11): expected 3 messages, received 0")
}

func TestMissingNSID(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10)}}
	mustFail(t, Check(r, names, tr, tagged(Local, tr[0]...), nil), "cannot see (no nsid)")
}

func TestNSIDOnLocalCopy(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "local-all-nsid", Groups: all, Sees: map[int]Tag{0: Local}}
	mustFail(t, Check(r, names, tr, tagged(NSID(0), tr[0]...), nil), "cannot see (nsid 0)")
}

func TestSwappedSenders(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10), 1: NSID(11)}}
	got := append(tagged(NSID(11), tr[0]...), tagged(NSID(10), tr[1]...)...)
	mustFail(t, Check(r, names, tr, got, nil), "from sender S0 (nsid 10): expected 6 messages, received 3", "never sent")
}

func TestWrongGroup(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "bind", Groups: []uint32{gAddr, gRoute}, Sees: map[int]Tag{0: Local}}
	mustFail(t, Check(r, names, tr, tagged(Local, tr[0]...), nil), "bind: message #2 on group 36, which it never joined")
}

func TestInvisibleNamespaceReceiverGetsNothing(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "foreign-plain", Groups: all}
	if rep := Check(r, names, tr, nil, nil); len(rep.Problems) != 0 {
		t.Fatalf("empty receiver judged wrong: %q", rep.Problems)
	}
	mustFail(t, Check(r, names, tr, tagged(Local, tr[1][0]), nil), "foreign-plain: message #0 from a namespace it cannot see (no nsid)")
}

func TestManyProblemsAreSummarised(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "x", Groups: all}
	rep := Check(r, names, tr, tagged(Local, append(tr[0], tr[0]...)...), nil)
	mustFail(t, rep, "12 messages from namespaces it cannot see in all")
	if len(rep.Problems) > maxShown+1 {
		t.Errorf("%d problem lines for one kind, want at most %d", len(rep.Problems), maxShown+1)
	}
}

func TestAmbiguousTags(t *testing.T) {
	tr := transcripts()
	r := Receiver{Name: "x", Groups: all, Sees: map[int]Tag{0: Local, 1: Local}}
	mustFail(t, Check(r, names, tr, nil, nil), "cannot tell them apart")
}

func bySeq(m Msg) (int, bool) {
	if m.Seq == 0 {
		return 0, false
	}
	return int(m.Seq>>24) - 0, true
}

func TestChurn(t *testing.T) {
	tr := transcripts()
	c := Churn{Name: "churn", EverJoined: map[uint32]bool{gAddr: true, gRoute: true}, LocalSender: 0}
	if p := CheckChurn(c, Got{Msg: tr[0][0]}, bySeq, names); p != "" {
		t.Errorf("allowed message refused: %s", p)
	}
	if p := CheckChurn(c, Got{Msg: tr[0][1]}, bySeq, names); p != "" {
		t.Errorf("allowed seq-0 message refused: %s", p)
	}
	cases := []struct {
		c    Churn
		g    Got
		want string
	}{
		{c, Got{Msg: stats()}, "group 36, which it never joined"},
		{c, Got{Msg: tr[1][0]}, "message of sender S1, which it cannot see (no nsid; it may see S0)"},
		{c, Got{Msg: tr[0][0], Tag: NSID(3)}, "NETLINK_LISTEN_ALL_NSID was never set"},
		{Churn{Name: "c", EverJoined: c.EverJoined, EverAllNSID: true, LocalSender: -1, Mapped: map[int32]int{3: 1}},
			Got{Msg: tr[0][0], Tag: NSID(4)}, "an id its namespace never gave a sender"},
		{Churn{Name: "c", EverJoined: c.EverJoined, EverAllNSID: true, LocalSender: -1, Mapped: map[int32]int{3: 1}},
			Got{Msg: tr[0][0], Tag: NSID(3)}, "message of sender S0, which it cannot see (nsid 3; it may see S1)"},
		{Churn{Name: "c", EverJoined: c.EverJoined, LocalSender: -1}, Got{Msg: tr[0][1]}, "no sender is local and none is visible"},
	}
	for _, tc := range cases {
		p := CheckChurn(tc.c, tc.g, bySeq, names)
		if !strings.Contains(p, tc.want) {
			t.Errorf("CheckChurn(%s) = %q, want %q", tc.g.Msg, p, tc.want)
		}
	}
	// The option cleared after delivery: a mapped sender's copy without nsid.
	cleared := Churn{Name: "c", EverJoined: c.EverJoined, EverAllNSID: true, LocalSender: -1, Mapped: map[int32]int{3: 1}}
	if p := CheckChurn(cleared, Got{Msg: tr[1][0]}, bySeq, names); p != "" {
		t.Errorf("copy of a mapped sender without nsid refused after LISTEN_ALL_NSID was set once: %s", p)
	}
	if p := CheckChurn(cleared, Got{Msg: tr[0][0]}, bySeq, names); !strings.Contains(p, "message of sender S0, which it cannot see (no nsid; it may see S1)") {
		t.Errorf("unmapped sender without nsid: %q", p)
	}
	ok := Churn{Name: "c", EverJoined: c.EverJoined, EverAllNSID: true, LocalSender: -1, Mapped: map[int32]int{3: 1}}
	if p := CheckChurn(ok, Got{Msg: tr[1][0], Tag: NSID(3)}, bySeq, names); p != "" {
		t.Errorf("mapped message refused: %s", p)
	}
}
