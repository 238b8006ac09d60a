// SPDX-License-Identifier: GPL-2.0

package verify

import (
	"fmt"
	"strings"
	"testing"
)

var (
	enobufs = Got{Event: Overrun}
	drained = Got{Event: Drained}
)

// stream builds a receiver's stream from messages (tagged tag) and events.
func stream(tag Tag, items ...any) []Got {
	var out []Got
	for _, it := range items {
		switch v := it.(type) {
		case Msg:
			out = append(out, Got{Msg: v, Tag: tag})
		case Got:
			out = append(out, v)
		}
	}
	return out
}

func noFaults() *Faults { return &Faults{Delivered: map[FromSender]int{}, Unsure: map[Msg]bool{}} }

func mustPass(t *testing.T, rep Report) {
	t.Helper()
	if len(rep.Problems) != 0 {
		t.Fatalf("problems: %s", Join(rep.Problems))
	}
}

var local0 = Receiver{Name: "local", Groups: all, Sees: map[int]Tag{0: Local}}

// Without faults, an ENOBUFS is a failure of the run's design.
func TestOverrunWithoutFaultsFails(t *testing.T) {
	tr := transcripts()
	mustFail(t, Check(local0, names, tr, stream(Local, tr[0][0], enobufs, tr[0][1], tr[0][2], tr[0][3], tr[0][4], tr[0][5]), nil),
		"ENOBUFS at #1", "though no allocation was made to fail")
}

// A message lost to a failed clone: the ENOBUFS comes at the next read,
// after the message before it was queued and before the one after it.
func TestLossCoveredByENOBUFS(t *testing.T) {
	tr := transcripts()
	m := tr[0]
	rep := Check(local0, names, tr, stream(Local, m[0], drained, enobufs, m[2], m[3], m[4], m[5]), noFaults())
	mustPass(t, rep)
	if rep.Covered != 1 || rep.Verified != 5 || rep.Overruns != 1 {
		t.Errorf("covered %d verified %d overruns %d, want 1 5 1", rep.Covered, rep.Verified, rep.Overruns)
	}
	// The ENOBUFS may also come before messages queued before the
	// failure, which are still read after it.
	mustPass(t, Check(local0, names, tr, stream(Local, enobufs, m[0], m[2], m[3], m[4], m[5]), noFaults()))
}

// A loss with no ENOBUFS, or with one from before the queue was drained
// after the message before the loss was queued, is a real loss.
func TestLossWithoutItsENOBUFSFails(t *testing.T) {
	tr := transcripts()
	m := tr[0]
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], m[2], m[3], m[4], m[5]), noFaults()),
		"lost without an ENOBUFS to account for it", "local 10.1.0.1/32 table 255")
	// An old ENOBUFS: the queue was drained, then m[0] was read (so
	// queued after the drain), then m[1] went missing.
	mustFail(t, Check(local0, names, tr, stream(Local, enobufs, drained, m[0], m[2], m[3], m[4], m[5]), noFaults()),
		"lost without an ENOBUFS", "(none between #1 and #3)")
	// An ENOBUFS after the next message was read does not cover it either.
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], drained, m[2], enobufs, m[3], m[4], m[5]), noFaults()),
		"lost without an ENOBUFS")
}

// Under faults a duplicate is still a duplicate, and order still holds.
func TestDuplicateAndReorderUnderFaults(t *testing.T) {
	tr := transcripts()
	m := tr[0]
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], m[1], m[2], m[3], m[3], m[4], m[5]), noFaults()),
		"message #4 is a duplicate, or out of order")
	mustFail(t, Check(local0, names, tr, stream(Local, m[1], m[0], m[2], m[3], m[4], m[5]), noFaults()),
		"is a duplicate, or out of order")
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], m[1], m[2], addr(9, "10.9.0.9"), m[3], m[4], m[5]), noFaults()),
		"is never sent")
}

// A message of copies alike (RTM_NEWSTATS): which copy was lost is not
// known, so the window runs between the messages that occur once. Here
// the first stats was lost (ENOBUFS), the queue drained, the second read.
func TestLossAmongIdenticalMessages(t *testing.T) {
	tr := transcripts()
	m := tr[0] // addr1 local1 stats addr2 local2 stats
	mustPass(t, Check(local0, names, tr, stream(Local, m[0], m[1], enobufs, drained, m[3], m[4], m[5]), noFaults()))
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], m[1], m[3], m[4], m[5]), noFaults()), "lost without an ENOBUFS", "type 92")
}

// A message no receiver got: owed to no one when its request's outcome is
// unknown; owed to a foreign receiver, which netlink_set_err() does not
// reach, only if some receiver got it.
func TestUndeliveredMessages(t *testing.T) {
	tr := transcripts()
	m := tr[0]
	f := noFaults()
	f.Unsure[m[1]] = true
	rep := Check(local0, names, tr, stream(Local, m[0], m[2], m[3], m[4], m[5]), f)
	mustPass(t, rep)
	if rep.Undelivered != 1 {
		t.Errorf("undelivered %d, want 1", rep.Undelivered)
	}
	f.Delivered[FromSender{0, m[1]}] = 1 // someone got it after all
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], m[2], m[3], m[4], m[5]), f), "lost without an ENOBUFS")

	observer := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10)}, SetErrMisses: true}
	f = noFaults()
	mustPass(t, Check(observer, names, tr, stream(NSID(10), m[0], m[2], m[3], m[4], m[5]), f))
	f.Delivered[FromSender{0, m[1]}] = 1
	mustFail(t, Check(observer, names, tr, stream(NSID(10), m[0], m[2], m[3], m[4], m[5]), f), "lost without an ENOBUFS")
	// A local receiver gets the set_err ENOBUFS: its silence is a loss.
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], m[2], m[3], m[4], m[5]), noFaults()), "lost without an ENOBUFS")
}

// The nsid is still checked under faults.
func TestWrongNSIDUnderFaults(t *testing.T) {
	tr := transcripts()
	observer := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10)}, SetErrMisses: true}
	rep := Check(observer, names, tr, stream(NSID(11), tr[0][0]), noFaults())
	if !strings.Contains(Join(rep.Problems), "from a namespace it cannot see (nsid 11)") {
		t.Errorf("problems %q", rep.Problems)
	}
}

// Of two copies alike (RTM_NEWSTATS), one that no receiver got may be
// missing at a receiver netlink_set_err() does not reach; not both, when
// some receiver got one.
func TestUndeliveredAmongIdenticalMessages(t *testing.T) {
	tr := transcripts()
	m := tr[0] // addr1 local1 stats addr2 local2 stats
	observer := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10)}, SetErrMisses: true}
	f := noFaults()
	f.Delivered[FromSender{0, m[2]}] = 1 // the best receiver got one of the two
	// What another sender's receivers got of its own copies alike does
	// not count for this sender's.
	f.Delivered[FromSender{1, m[2]}] = 5
	mustPass(t, Check(observer, names, tr, stream(NSID(10), m[0], m[1], m[3], m[4], m[5]), f))
	mustFail(t, Check(observer, names, tr, stream(NSID(10), m[0], m[1], m[3], m[4]), f), "lost without an ENOBUFS", "type 92")
}

// CountDelivered tells senders apart by their tags, and counts copies.
func TestCountDelivered(t *testing.T) {
	tr := transcripts()
	observer := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10), 1: NSID(11)}}
	f := noFaults()
	f.CountDelivered(observer, append(stream(NSID(10), stats(), enobufs, stats()), stream(NSID(11), stats(), tr[1][0])...))
	if f.Delivered[FromSender{0, stats()}] != 2 || f.Delivered[FromSender{1, stats()}] != 1 || f.Delivered[FromSender{1, tr[1][0]}] != 1 {
		t.Errorf("Delivered = %v", f.Delivered)
	}
}

// A copy an ENOBUFS covers does not spend the excuse a copy that was
// never sent needs: the observer missed two stats copies, the first with
// its ENOBUFS, the second sent to no one (the best receiver got one).
func TestCoveredCopiesDoNotSpendTheExcuse(t *testing.T) {
	tr := transcripts()
	m := tr[0] // addr1 local1 stats addr2 local2 stats
	observer := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10)}, SetErrMisses: true}
	f := noFaults()
	f.Delivered[FromSender{0, m[2]}] = 1
	mustPass(t, Check(observer, names, tr, stream(NSID(10), m[0], m[1], enobufs, drained, m[3], m[4]), f))
}

// One ENOBUFS covers the losses of its own overrun, which the first empty
// read after it ends (netlink_rcv_wake() clears NETLINK_S_CONGESTED), not
// every later loss. A sender broadcasts 400 addresses, one every 10 ticks
// of the run's clock; the receiver reads the first, then an ENOBUFS, then
// finds its queue empty at tick 30, and gets nothing more. Without the
// times, one ENOBUFS excused all 399 losses (the old rule); with them, it
// covers the one broadcast before the empty read, and the other 398 fail.
func TestENOBUFSEndsAtTheFirstEmptyRead(t *testing.T) {
	var tr []Msg
	var sent []Span
	for k := 0; k < 400; k++ {
		tr = append(tr, addr(uint32(k+1), fmt.Sprintf("10.1.%d.%d", k/250, k%250+1)))
		sent = append(sent, Span{int64(10*k + 10), int64(10*k + 15)})
	}
	got := []Got{
		{Msg: tr[0], Tag: Local, At: Span{16, 17}},
		{Event: Overrun, At: Span{18, 19}},
		{Event: Drained, At: Span{28, 30}},
		{Event: Drained, At: Span{5000, 5001}},
	}
	r := Receiver{Name: "local", Groups: all, Sees: map[int]Tag{0: Local}}
	old := Check(r, names, [][]Msg{tr, nil}, got, noFaults())
	if len(old.Problems) != 0 || old.Covered != 399 {
		t.Fatalf("without times: covered %d, problems %q; the old rule excused 399", old.Covered, old.Problems)
	}
	f := noFaults()
	f.Sent = map[int][]Span{0: sent}
	rep := Check(r, names, [][]Msg{tr, nil}, got, f)
	if rep.Covered != 1 {
		t.Errorf("covered %d, want 1 (tr[1], broadcast at 20-25, before the empty read ended at 30)", rep.Covered)
	}
	mustFail(t, rep, "398 messages lost without an ENOBUFS in all", "10.1.0.3/32", "broadcast at 30-35")
	// A loss broadcast before the read that preceded the ENOBUFS began is
	// not that ENOBUFS's either: that read would have returned it
	// (sock_error() comes before the queue). tr[1] is broadcast at 20-21.
	early := []Got{
		{Event: Drained, At: Span{1, 2}},
		{Msg: tr[0], Tag: Local, At: Span{12, 13}},
		{Event: Overrun, At: Span{25, 26}},
		{Msg: tr[2], Tag: Local, At: Span{44, 45}},
		{Event: Drained, At: Span{46, 47}},
	}
	f.Sent = map[int][]Span{0: {{10, 11}, {20, 21}, {30, 31}}}
	mustPass(t, Check(r, names, [][]Msg{tr[:3], nil}, early, f))
	early[1].At, early[2].At = Span{22, 23}, Span{24, 25}
	mustFail(t, Check(r, names, [][]Msg{tr[:3], nil}, early, f), "lost without an ENOBUFS", "broadcast at 20-21")
}

// The sender read the echo of addr2 (NLM_F_ECHO): the walk ran for it.
// The observer (netlink_set_err() does not reach it) misses it with no
// ENOBUFS, and no socket got it: before, that was excused as never sent;
// the echo makes it a loss. An ENOBUFS in its window still covers it.
func TestEchoProvesSent(t *testing.T) {
	tr := transcripts()
	m := tr[0] // addr1 local1 stats addr2 local2 stats
	observer := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10)}, SetErrMisses: true}
	missing := stream(NSID(10), m[0], m[1], m[2], m[4], m[5])
	f := noFaults()
	rep := Check(observer, names, tr, missing, f)
	mustPass(t, rep)
	if rep.Undelivered != 1 {
		t.Fatalf("without the echo: undelivered %d, want 1 (excused as never sent)", rep.Undelivered)
	}
	f.Echoes = map[FromSender]Echo{{0, m[3]}: Echoed}
	mustFail(t, Check(observer, names, tr, missing, f), "lost without an ENOBUFS", "10.1.0.2/32 dev 1", "its sender read its echo: it was sent")
	// Another sender's echo of the same message proves nothing here.
	f.Echoes = map[FromSender]Echo{{1, m[3]}: Echoed}
	mustPass(t, Check(observer, names, tr, missing, f))
	f.Echoes = map[FromSender]Echo{{0, m[3]}: Echoed}
	mustPass(t, Check(observer, names, tr, stream(NSID(10), m[0], m[1], m[2], enobufs, drained, m[4], m[5]), f))

	// A request whose outcome is unknown (its ACK lost): its echo makes
	// its message owed to a local receiver too.
	f = noFaults()
	f.Unsure[m[3]] = true
	mustPass(t, Check(local0, names, tr, stream(Local, m[0], m[1], m[2], m[4], m[5]), f))
	f.Echoes = map[FromSender]Echo{{0, m[3]}: Echoed}
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], m[1], m[2], m[4], m[5]), f), "lost without an ENOBUFS", "its sender read its echo")
}

// A request ACKed with no echo and no ENOBUFS at its sender notified
// nothing: the observer's loss is excused; a local receiver, which
// netlink_set_err() reaches, still owes an ENOBUFS for it.
func TestNoEchoNoReceiptIsExcused(t *testing.T) {
	tr := transcripts()
	m := tr[0]
	observer := Receiver{Name: "observer", Groups: all, Sees: map[int]Tag{0: NSID(10)}, SetErrMisses: true}
	f := noFaults()
	f.Echoes = map[FromSender]Echo{{0, m[3]}: NotEchoed}
	rep := Check(observer, names, tr, stream(NSID(10), m[0], m[1], m[2], m[4], m[5]), f)
	mustPass(t, rep)
	if rep.Undelivered != 1 {
		t.Errorf("undelivered %d, want 1", rep.Undelivered)
	}
	mustFail(t, Check(local0, names, tr, stream(Local, m[0], m[1], m[2], m[4], m[5]), f), "lost without an ENOBUFS")
	mustPass(t, Check(local0, names, tr, stream(Local, m[0], m[1], m[2], enobufs, m[4], m[5]), f))
}

// Proofs counts the proofs, and a message some socket got though its
// sender's echo says it was never sent is a problem.
func TestProofs(t *testing.T) {
	tr := transcripts()
	m := tr[0]
	f := noFaults()
	f.Delivered[FromSender{0, m[0]}] = 1
	f.Delivered[FromSender{0, m[2]}] = 2 // both stats copies
	f.Delivered[FromSender{1, tr[1][0]}] = 1
	f.Echoes = map[FromSender]Echo{{0, m[0]}: Echoed, {0, m[3]}: Echoed, {1, tr[1][0]}: NotEchoed}
	p, problems := f.Proofs(names, tr)
	if want := (Proofs{ByEcho: 2, ByReceipts: 4, ByEchoOnly: 1, NeverSent: 1, Inconsistent: 1}); p != want {
		t.Errorf("proofs %+v, want %+v", p, want)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "sender S1: type 20 seq 16777217 pid 100 group 5 [10.2.0.1/32 dev 1] was received by a socket, though its request was ACKed with no echo") {
		t.Errorf("problems %q", problems)
	}
	delete(f.Delivered, FromSender{1, tr[1][0]})
	if _, problems := f.Proofs(names, tr); len(problems) != 0 {
		t.Errorf("with no receipt of the unechoed message: problems %q", problems)
	}
}
