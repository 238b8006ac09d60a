// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// Expect proves that s has received exactly want since the last check,
// in order, and nothing else. A sentinel is unicast to s from a socket in
// s's own namespace; everything queued before it is the transcript. All
// events the cases trigger are queued before the ACK of their request (or
// before sendmsg returns), so when the sentinel arrives, every message the
// kernel was going to deliver for them is already there: no sleep, no
// timeout. Expect reports a mismatch as a side-by-side diff.
func (s *Sock) Expect(want ...Msg) {
	s.ns.t.Helper()
	got, err := s.transcript(nil)
	s.compare(want, got, err)
}

// ExpectEventually is Expect for events the kernel makes asynchronous (the
// death of a namespace): it polls until len(want) lines have arrived or
// the deadline passes, then proves with the sentinel that nothing else
// came.
func (s *Sock) ExpectEventually(deadline time.Duration, want ...Msg) {
	s.ns.t.Helper()
	got, err := s.transcript(s.await(deadline, len(want)))
	s.compare(want, got, err)
}

// ExpectEventuallyInAnyOrder is ExpectEventually for asynchronous events
// whose relative order the kernel does not fix, such as the deaths of
// several namespaces released together (cleanup_net() takes them in
// batches, each in reverse order of the last reference going). The
// transcript must hold exactly the messages want, each once, in any order,
// and nothing else.
func (s *Sock) ExpectEventuallyInAnyOrder(deadline time.Duration, want ...Msg) {
	s.ns.t.Helper()
	got, err := s.transcript(s.await(deadline, len(want)))
	s.compare(want, inOrderOf(s.Socket, want, got), err)
}

// ExpectQueued is Expect for a socket that cannot take the sentinel: one
// that overran and is congested (the kernel drops every message to it,
// the sentinel too, until it is drained) or one whose tiny receive buffer
// the transcript already fills. It reads until the queue is empty instead.
// That is exact for synchronous events only, which are queued before their
// request returns. Reading the queue empty also ends the congestion
// (netlink_rcv_wake()), so the socket can be checked with Expect again.
func (s *Sock) ExpectQueued(want ...Msg) {
	s.ns.t.Helper()
	got, err := s.queued()
	s.compare(want, got, err)
}

// ExpectOverrun proves what s holds after a burst overran it: lead (e.g.
// RecvError(unix.ENOBUFS)), then the first k messages of burst in the
// order they were sent, for some 0 < k < len(burst), and nothing else. It
// reads the queue empty, as ExpectQueued does, and returns k.
func (s *Sock) ExpectOverrun(lead, burst []Msg) int {
	s.ns.t.Helper()
	got, err := s.queued()
	want, k := Overrun(got, lead, burst)
	s.compare(want, got, err)
	return k
}

// Overrun is the expectation for a socket that holds got after burst
// overran it: lead, then the first k messages of burst. k depends on the
// size of each message in memory (skb truesize) against the receive
// buffer, so it is taken from got: the messages after lead, but at least 1
// (the first always fits) and at most len(burst)-1 (else there was no
// overrun), so that a count out of range shows in the diff.
func Overrun(got []Line, lead, burst []Msg) (want []Msg, k int) {
	for _, l := range got {
		if l.Err == nil {
			k++
		}
	}
	for _, m := range lead {
		if m.err == nil {
			k--
		}
	}
	k = max(1, min(k, len(burst)-1))
	return append(append([]Msg(nil), lead...), burst[:k]...), k
}

// Transcript reads what s has received since the last check and returns it
// without judging it, for a case that compares two runs or works out part
// of its expectation from what arrived (how much of a burst an overrun
// socket kept). It reads the queue empty first, like ExpectQueued, so it
// also works on a congested socket or one whose tiny buffer is full; then
// a sentinel proves, like Expect, that nothing else was on its way.
func (s *Sock) Transcript() ([]Line, error) {
	got, err := s.queued()
	if err != nil {
		return got, err
	}
	return s.transcript(got)
}

// ExpectLines judges a transcript returned by Transcript as Expect does:
// exactly want, in order, shown side by side on a mismatch. A read error
// (err) fails the case too.
func (s *Sock) ExpectLines(got []Line, err error, want ...Msg) {
	s.ns.t.Helper()
	s.compare(want, got, err)
}

// DiffLines compares two transcripts returned by Transcript line by line,
// a as the reference, with the rule Expect uses (every field must be
// equal; the payload of a type rtnl.Describe does not know byte for byte;
// a Detail that a leaves empty is not compared, and Describe leaves it
// empty only where a payload lacks what it summarises). It renders
// them side by side with '!' on each row that differs, or returns "" when
// they are equal.
func DiffLines(a, b []Line) string { return diff(a, b) }

// compare fails the case unless got (read with err) is want. With -v it
// also logs a transcript that matches.
func (s *Sock) compare(want []Msg, got []Line, err error) {
	t := s.ns.t
	t.Helper()
	wl := make([]Line, len(want))
	for i, m := range want {
		wl[i] = m.line(s.Socket)
		if wl[i].invalid != "" {
			t.Errorf("%s: expected message %d of %d: %s", s, i+1, len(want), wl[i].invalid)
		}
	}
	d := diff(wl, got)
	switch {
	case err != nil && d != "":
		t.Errorf("%s (portid %d): %v; transcript so far:\n%s", s, s.Portid(), err, d)
	case err != nil:
		t.Errorf("%s (portid %d): %v", s, s.Portid(), err)
	case d != "":
		t.Errorf("%s (portid %d): unexpected transcript\n%s", s, s.Portid(), d)
	case Verbose():
		t.Logf("%s (portid %d): as expected:\n%s", s, s.Portid(), indent(render(got)))
	}
}

// await reads s until n transcript lines have arrived, the deadline
// passes or the case is told to stop (Done), and returns them.
func (s *Sock) await(deadline time.Duration, n int) []Line {
	t := s.ns.t
	t.Helper()
	var early []Line
	end := time.Now().Add(deadline)
	for len(early) < n && !stopped(t) {
		got, empty, err := s.readOne(early)
		if err != nil {
			t.Fatalf("%v", err)
		}
		early = got
		if !empty {
			continue
		}
		left := time.Until(end)
		if left <= 0 {
			break
		}
		if _, err := s.Wait(min(left, 100*time.Millisecond)); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return early
}

// transcript reads s up to a fresh sentinel and returns what came before,
// appended to got.
func (s *Sock) transcript(got []Line) ([]Line, error) {
	snt, err := s.ns.sentinelSocket(s.Proto)
	if err != nil {
		return got, err
	}
	seq, from := rtnl.NextSeq(), snt.Portid()
	if err := snt.SendTo(sentinel(seq, from), s.Portid(), 0); err != nil {
		return got, fmt.Errorf("sentinel: %w", err)
	}
	got, found, err := s.read(got, func(l Line) bool {
		return l.Type == unix.NLMSG_NOOP && l.Seq == seq && l.FromPid == from
	})
	if err == nil && !found {
		err = errors.New("receive queue ended without the sentinel (dropped by a full or congested socket?)")
	}
	return got, err
}

// sentinelSocket returns n's socket that sends sentinels of protocol
// proto, opening it the first time.
func (n *NS) sentinelSocket(proto int) (*nlsock.Socket, error) {
	if s, ok := n.sentinels[proto]; ok {
		return s, nil
	}
	s, err := nlsock.Open(n.NS, proto, "sentinel")
	if err != nil {
		return nil, err
	}
	if err := s.Bind(0, 0); err != nil {
		s.Close()
		return nil, err
	}
	n.sentinels[proto] = s
	return s, nil
}

// queued reads s without blocking until its receive queue is empty.
func (s *Sock) queued() ([]Line, error) {
	got, _, err := s.read(nil, nil)
	return got, err
}

// read appends to got what s has queued, without blocking, until the queue
// is empty or a line satisfies stop (that line is not appended; found
// reports it).
func (s *Sock) read(got []Line, stop func(Line) bool) (_ []Line, found bool, err error) {
	for {
		n := len(got)
		var empty bool
		got, empty, err = s.readOne(got)
		if err != nil || empty {
			return got, false, err
		}
		for i := n; stop != nil && i < len(got); i++ {
			if stop(got[i]) {
				return got[:i], true, nil
			}
		}
	}
}

// readOne appends the lines of one datagram of s to got, or reports an
// empty queue. A recvmsg error with an errno (ENOBUFS after an overrun) is
// a line of its own, in the order the kernel reported it; any other error
// (a truncated or malformed datagram) is returned.
func (s *Sock) readOne(got []Line) (_ []Line, empty bool, err error) {
	d, err := s.Recv()
	var errno unix.Errno
	switch {
	case errors.Is(err, nlsock.ErrEmpty):
		return got, true, nil
	case errors.As(err, &errno):
		return append(got, Line{Err: errno}), false, nil
	case err != nil:
		return got, false, err
	}
	return append(got, lines(d)...), false, nil
}

// inOrderOf reorders got after want: row i holds the first unused line of
// got that matches want[i], or, if none does, the next line that matches
// nothing; the lines left over follow. So the result equals want row by
// row exactly when got is a permutation of want (the wanted lines must be
// distinguishable, which they are when each has its own Detail), and a
// mismatch shows in the diff next to the row it failed.
func inOrderOf(s *nlsock.Socket, want []Msg, got []Line) []Line {
	used := make([]bool, len(got))
	match := make([]int, len(want))
	for i, m := range want {
		match[i] = -1
		wl := m.line(s)
		for j, l := range got {
			if !used[j] && l.matches(wl) {
				match[i], used[j] = j, true
				break
			}
		}
	}
	var rest []Line
	for j, l := range got {
		if !used[j] {
			rest = append(rest, l)
		}
	}
	out := make([]Line, 0, len(got))
	for _, j := range match {
		switch {
		case j >= 0:
			out = append(out, got[j])
		case len(rest) > 0:
			out, rest = append(out, rest[0]), rest[1:]
		}
	}
	return append(out, rest...)
}
