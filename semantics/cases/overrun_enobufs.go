// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// burstGroup carries the bursts (selftests.BurstSize user multicasts: far
// more than a minimal receive buffer holds, far less than 4 MiB). No
// kernel event of the case is on that group.
const burstGroup = unix.RTNLGRP_IPV4_IFADDR

// overrunENOBUFS: a subscriber whose receive buffer overflows loses the
// rest of a burst and is told so once; NETLINK_NO_ENOBUFS hides the error
// but not the loss; a large enough buffer loses nothing; the first loss
// is reported at once, not at the next; a buffer is filled to the byte.
// And with
// NETLINK_BROADCAST_ERROR a congested listener makes the request whose
// notification it drops fail with ENOBUFS, although the request took
// effect: a local listener, or a foreign LISTEN_ALL_NSID one that maps the
// source, does; a foreign plain one, which is never a recipient, does not.
//
// The burst is user multicast, sent synchronously: when the last sendto()
// returns, everything is queued or dropped. v's and vn's transcripts cannot
// end with a sentinel (v is congested and would drop it), so they are read
// until the queue is empty. The kernel decides how many messages fit (skb
// truesize against sk_rcvbuf); the case asserts they are a strict prefix
// of the burst and that the drop counter counts exactly the rest.
//
// Kernel: netlink_broadcast_deliver() (rmem against sk_rcvbuf, the first
// skb always fits), netlink_overrun() (sk_err = ENOBUFS and
// NETLINK_S_CONGESTED unless NETLINK_F_RECV_NO_ENOBUFS; sk_drops_inc()
// always), netlink_rcv_wake() (congestion ends when the queue is empty),
// do_one_broadcast() (p->delivery_failure when the overrun socket has
// NETLINK_F_BROADCAST_SEND_ERROR) -> netlink_broadcast() returns -ENOBUFS
// -> nlmsg_notify() -> tcf_add_notify() -> tcf_action_add() returns it
// after the action was inserted.
func overrunENOBUFS(t selftests.T) {
	s := selftests.NewNS(t, "S")
	overrunBurst(t, s)
	firstLossReported(t, s)
	fullBufferHoldsExactly(t, s)
	broadcastErrorPropagation(t, s)
}

// fullBufferHoldsExactly: a buffer takes broadcasts up to its size to the
// byte. u's buffer is set to exactly k times one message's charge (its
// truesize, read with SO_MEMINFO); k messages fill it to the byte, all
// queued. What comes next depends on the kernel's rule: since "netlink:
// Fix rmem check in netlink_broadcast_deliver()" (6.16, and the stable
// 6.1.y and 6.12.y of mid-2025: 6.1.192 and 6.12.117 have it) a message
// is queued only if the charge with it stays within the buffer, so the
// next one is dropped; before it, the charge before it was compared, so
// the next one was queued and the one after dropped. Either way exactly
// one is dropped, reported with ENOBUFS, and the rest are queued in order.
//
// Kernel: netlink_broadcast_deliver(): rmem =
// atomic_add_return(skb->truesize, &sk->sk_rmem_alloc); if ((rmem ==
// skb->truesize || rmem <= rcvbuf) && !test_bit(NETLINK_S_CONGESTED,
// ...)) queue it, else netlink_overrun() (before: if
// (atomic_read(&sk->sk_rmem_alloc) <= sk->sk_rcvbuf && ...));
// sock_setsockopt(SO_RCVBUF): sk_rcvbuf = max(val * 2, SOCK_MIN_RCVBUF).
func fullBufferHoldsExactly(t selftests.T, s *selftests.NS) {
	u := s.Socket("full", selftests.Join(burstGroup))
	sender := s.Socket("full-sender")
	one := sender.MustMulticast(0, burstGroup)
	charge := receiveMemory(t, u)
	u.Expect(one)
	// Room for at least 8 KiB, above SOCK_MIN_RCVBUF on every kernel.
	k := (8192 + int(charge) - 1) / int(charge)
	setReceiveBuffer(t, u, uint32(k)*charge)
	var sent []selftests.Msg
	for range k {
		sent = append(sent, sender.MustMulticast(0, burstGroup))
	}
	if rmem, rcvbuf, err := u.ReceiveMemory(); err != nil || rmem != rcvbuf {
		t.Fatalf("%s: %d messages of %d bytes hold %d bytes of a %d-byte buffer (%v); want all queued, the buffer full to the byte", u, k, charge, rmem, rcvbuf, err)
	}
	next := sender.MustMulticast(0, burstGroup)
	if drops(t, s, u) == 0 {
		// The rule before 6.16: the charge before the message counted.
		sent = append(sent, next)
		sender.MustMulticast(0, burstGroup)
	}
	expectDrops(t, s, u, 1)
	u.ExpectQueued(append([]selftests.Msg{selftests.RecvError(unix.ENOBUFS)}, sent...)...)
	u.Expect()
}

// firstLossReported: the very first message a subscriber loses is
// reported. Sent one at a time, messages fill u until one is dropped (its
// drop count turns 1); at that moment u has ENOBUFS pending (poll() says
// POLLERR without reading), not only after a later loss, and an epoll
// waiting for EPOLLERR alone has been woken for it; read, u has every
// message but the last, then the error's end lets the next through.
//
// Kernel: netlink_overrun(): if (!test_and_set_bit(NETLINK_S_CONGESTED,
// ...)) { sk_err = ENOBUFS; sk_error_report(sk); }: the drop that sets the
// bit is the one reported, and sock_def_error_report() wakes the waiters
// with EPOLLERR (the data's wake-ups carry EPOLLIN, which an epoll for
// EPOLLERR ignores); datagram_poll(): sk_err -> EPOLLERR.
func firstLossReported(t selftests.T, s *selftests.NS) {
	u := s.Socket("u", selftests.RcvBuf(1), selftests.Join(burstGroup))
	sender := s.Socket("u-sender")
	// An epoll instance that waits for EPOLLERR alone is woken by the
	// error report, not by the data that filled the queue.
	epfd := epollForErrors(t, u)
	var sent []selftests.Msg
	for lost := uint64(0); lost == 0; {
		if len(sent) == selftests.BurstSize {
			t.Fatalf("%s: %d messages sent one at a time to a minimal receive buffer and none dropped", u, len(sent))
		}
		sent = append(sent, sender.MustMulticast(0, burstGroup))
		if lost = drops(t, s, u); lost > 1 {
			t.Fatalf("%s: one message sent and %d dropped", u, lost)
		}
	}
	if ev := pollSocket(t, u); ev&unix.POLLERR == 0 {
		t.Errorf("%s: after its first lost message (message %d): poll() says %s; want POLLERR: ENOBUFS pending at the first loss",
			u, len(sent), pollEvents(ev))
	}
	if !epollErrors(t, epfd) {
		t.Errorf("%s: after its first lost message: epoll for EPOLLERR not woken; want the error reported with a wake-up (sk_error_report())", u)
	}
	if k := u.ExpectOverrun([]selftests.Msg{selftests.RecvError(unix.ENOBUFS)}, sent); k != len(sent)-1 {
		t.Errorf("%s: kept %d of the %d messages sent; want all but the one dropped", u, k, len(sent))
	}
	u.Expect()
}

func overrunBurst(t selftests.T, s *selftests.NS) {
	v := s.Socket("v", selftests.RcvBuf(1), selftests.Join(burstGroup))
	vn := s.Socket("vn", selftests.RcvBuf(1), selftests.With(unix.NETLINK_NO_ENOBUFS),
		selftests.Join(burstGroup))
	h := s.Socket("h", selftests.RcvBufForce(4<<20), selftests.Join(burstGroup))
	sender := s.Socket("sender")

	burst := sender.Burst(burstGroup)

	k := v.ExpectOverrun([]selftests.Msg{selftests.RecvError(unix.ENOBUFS)}, burst)
	kn := vn.ExpectOverrun(nil, burst)
	h.Expect(burst...)
	// Drained, v and vn are no longer congested: the sentinel gets through.
	v.Expect()
	vn.Expect()
	if k != kn {
		t.Errorf("v kept %d messages of the burst and vn %d: same buffer, same messages, want the same count", k, kn)
	}
	expectDrops(t, s, v, uint64(selftests.BurstSize-k))
	expectDrops(t, s, vn, uint64(selftests.BurstSize-kn))
	expectDrops(t, s, h, 0)
}

func expectDrops(t selftests.T, n *selftests.NS, s *selftests.Sock, want uint64) {
	t.Helper()
	if got := drops(t, n, s); got != want {
		t.Errorf("%s: Drops in /proc/thread-self/net/netlink is %d, want %d", s, got, want)
	}
}

// broadcastErrorPropagation: tc actions report a failed notification to
// the requester (tcf_add_notify() returns what rtnetlink_send() returns);
// most other rtnetlink requests ignore it (rtnl_notify() is void).
func broadcastErrorPropagation(t selftests.T, s *selftests.NS) {
	o, f := selftests.NewNS(t, "O"), selftests.NewNS(t, "F")
	id := o.Map(s, 5).ID
	f.Map(s, 6)
	obs := s.Socket("obs", selftests.Join(unix.RTNLGRP_TC))
	pid := s.Ctl.Portid()
	// The notification has the request's header flags
	// (tcf_add_notify() -> tca_get_fill(..., n->nlmsg_flags)) and names
	// the action by kind and index.
	newAction := func(rep rtnl.Reply, index uint32) selftests.Msg {
		return selftests.Msg{Type: unix.RTM_NEWACTION, Flags: rep.Flags, Seq: rep.Seq, Pid: pid, Group: unix.RTNLGRP_TC,
			Detail: fmt.Sprintf("mirred index %d", index)}
	}

	add := s.CreateTC(rtnl.NewMirredAction(1, rtnl.LoopbackIndex), "the overrun part passed; the BROADCAST_ERROR part needs the mirred action (act_mirred), which is")
	obs.Expect(newAction(add, 1))

	// A congested local listener: ENOBUFS, yet the action exists and the
	// healthy listener got its notification.
	w, burst := congested(t, s, "w")
	rep := addActionFailing(t, s, 2)
	obs.Expect(newAction(rep, 2))
	w.ExpectOverrun([]selftests.Msg{selftests.RecvError(unix.ENOBUFS)}, burst)
	// Drained, w takes the next notification and the request succeeds.
	add = s.Do(rtnl.NewMirredAction(3, rtnl.LoopbackIndex))
	w.ExpectQueued(newAction(add, 3))
	obs.Expect(newAction(add, 3))
	closeSock(t, w)

	// A congested foreign LISTEN_ALL_NSID listener that maps S is a
	// recipient like a local one.
	wo, burst := congested(t, o, "wo", selftests.With(unix.NETLINK_LISTEN_ALL_NSID))
	rep = addActionFailing(t, s, 4)
	obs.Expect(newAction(rep, 4))
	wo.ExpectOverrun([]selftests.Msg{selftests.RecvError(unix.ENOBUFS)}, burst)
	add = s.Do(rtnl.NewMirredAction(5, rtnl.LoopbackIndex))
	wo.ExpectQueued(newAction(add, 5).NSID(id))
	obs.Expect(newAction(add, 5))
	closeSock(t, wo)

	// A congested foreign plain listener is not a recipient: no effect,
	// although F maps S.
	wf, burst := congested(t, f, "wf")
	add = s.Do(rtnl.NewMirredAction(6, rtnl.LoopbackIndex))
	obs.Expect(newAction(add, 6))
	wf.ExpectOverrun([]selftests.Msg{selftests.RecvError(unix.ENOBUFS)}, burst)
	wf.Expect()
}

// congested opens a RTNLGRP_TC listener in n with NETLINK_BROADCAST_ERROR
// and a minimal receive buffer, and overruns it with a burst from a sender
// in n: it is then congested and drops every broadcast until drained. It
// returns the socket and the burst.
func congested(t selftests.T, n *selftests.NS, name string, opts ...selftests.Option) (*selftests.Sock, []selftests.Msg) {
	t.Helper()
	opts = append(opts, selftests.RcvBuf(1), selftests.With(unix.NETLINK_BROADCAST_ERROR),
		selftests.Join(unix.RTNLGRP_TC, burstGroup))
	w := n.Socket(name, opts...)
	burst := n.Socket(name + "-sender").Burst(burstGroup)
	return w, burst
}

// addActionFailing adds mirred action index in s, expects ENOBUFS, checks
// that the action exists nevertheless, and returns the request's reply
// (its seq and flags).
func addActionFailing(t selftests.T, s *selftests.NS, index uint32) rtnl.Reply {
	t.Helper()
	add, err := s.Ctl.Do(rtnl.NewMirredAction(index, rtnl.LoopbackIndex))
	if !errors.Is(err, unix.ENOBUFS) {
		t.Errorf("netns %s: adding action %d with a congested NETLINK_BROADCAST_ERROR listener: got %v, want ENOBUFS", s.Name, index, err)
	}
	// tca_action_gd() answers with the request's type, RTM_GETACTION.
	get, err := s.Ctl.Do(rtnl.GetMirredAction(index))
	if err != nil || len(get.Msgs) != 1 || get.Msgs[0].Header.Type != unix.RTM_GETACTION {
		t.Errorf("netns %s: action %d after its ENOBUFS: got %d replies, %v; want the action to exist", s.Name, index, len(get.Msgs), err)
	}
	return add
}

func closeSock(t selftests.T, s *selftests.Sock) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("%v", err)
	}
}
