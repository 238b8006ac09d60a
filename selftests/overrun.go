package selftests

// ExpectQueued is Expect for a socket that cannot take the sentinel: one
// that overran and is congested (the kernel drops every message to it,
// the sentinel too, until it is drained) or one whose tiny receive buffer
// the transcript already fills. It reads until the queue is empty instead.
// That is exact for synchronous events only, which are queued before their
// request returns. Reading the queue empty also ends the congestion
// (netlink_rcv_wake()), so the socket can be checked with Expect again.
func (e *Env) ExpectQueued(s *Sock, want ...Msg) {
	e.t.Helper()
	got, err := s.queued()
	e.compare(s, want, got, err)
}

// ExpectOverrun proves what a socket holds after a burst overran it: lead
// (e.g. RecvError(unix.ENOBUFS)), then the first k messages of burst in
// the order they were sent, for some 0 < k < len(burst), and nothing else.
// k depends on the size of each message in memory (skb truesize) against
// the socket's receive buffer; it is returned.
func (e *Env) ExpectOverrun(s *Sock, lead, burst []Msg) int {
	e.t.Helper()
	got, err := s.queued()
	k := 0 // the messages after lead
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
	e.compare(s, append(append([]Msg(nil), lead...), burst[:k]...), got, err)
	return k
}

// queued reads s without blocking until its receive queue is empty.
func (s *Sock) queued() ([]Line, error) {
	got, _, err := s.read(nil, nil)
	return got, err
}
