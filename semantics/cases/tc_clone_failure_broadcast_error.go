// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// tcCloneFailureBroadcastError: when the kernel cannot copy a
// notification for one of its subscribers (the broadcast's skb_clone()
// fails), that subscriber gets ENOBUFS instead, once, and so does every
// subscriber the walk reaches after it, without a copy tried ("Clone
// failed. Notify ALL listeners."): their drop counts rise, and threads
// asleep in ppoll() on them wake with POLLERR; the subscriber before it
// on the walk got the notification. The request that caused the
// notification fails with ENOBUFS exactly when the subscriber whose copy
// failed set NETLINK_BROADCAST_ERROR (the later ones, overrun without a
// copy tried, do not count); tc passes the broadcast's error
// back to its requester, and the action is there all the same. Two
// namespaces, each with three RTNLGRP_TC subscribers and a requester that
// adds a mirred action: in P no subscriber sets NETLINK_BROADCAST_ERROR
// (the ACK has errno 0), in E all do (the ACK has ENOBUFS), so whichever
// the walk reaches second, the rule decides; the first on the walk gets
// the skb itself, the second the first clone.
//
// The failure is made with fail-nth on the requester's thread, as in
// notification_alloc_failure_enobufs: N = 1, 2, ... until a subscriber
// reads ENOBUFS. An earlier N fails the request itself or the
// notification's own allocation (tcf_add_notify_msg(): the request fails
// with ENOBUFS and no one is told), or an allocation whose failure the
// kernel absorbs (netlink_trim()'s, kmemleak's own); after each such try
// the action is deleted again and both queues drained. Unlike an address,
// an action's request does not make the same allocations every time (a
// failed kmemleak allocation turns kmemleak off, the idr keeps a node or
// not), so a pass over N can step over the clone's; the search then
// starts again from 1, up to cloneFailurePasses times.
//
// Kernel: tcf_action_add() -> tcf_add_notify() -> rtnetlink_send(...,
// RTNLGRP_TC, 0) -> nlmsg_notify() -> nlmsg_multicast() ->
// netlink_broadcast(): the first subscriber on the walk gets the skb
// itself (skb_get(): it is not shared yet), each later one a clone:
// skb_clone() fails -> netlink_overrun() (sk_err ENOBUFS,
// sk_error_report(), sk_drops + 1),
// p->failure = 1, and if nlk_test_bit(BROADCAST_SEND_ERROR, sk),
// p->delivery_failure = 1; each later subscriber: if (p->failure) {
// netlink_overrun(sk); return; } -> return -ENOBUFS, which
// tcf_action_add() returns to netlink_rcv_skb() for the ACK.
func tcCloneFailureBroadcastError(t selftests.T) {
	openFailNth(t)
	for _, c := range []struct {
		ns      string
		opts    []selftests.Option
		ackWant int
	}{
		{"P", nil, 0},
		{"E", []selftests.Option{selftests.With(unix.NETLINK_BROADCAST_ERROR)}, int(unix.ENOBUFS)},
	} {
		s := selftests.NewNS(t, c.ns)
		// Only the action is needed. (prepareTC's filter would leave its
		// chain to be deleted, and notified, later, by the classifier's
		// deferred destruction: a message the subscribers could get
		// during the search.)
		s.CreateTC(rtnl.NewMirredAction(tcAction, tcDev), "the mirred action")
		s.Do(rtnl.DelMirredAction(tcAction))
		opts := append([]selftests.Option{selftests.Join(unix.RTNLGRP_TC)}, c.opts...)
		subs := []*selftests.Sock{s.Socket("a", opts...), s.Socket("b", opts...), s.Socket("c", opts...)}
		requester := s.Socket("requester")
		req := newArmedRequest(t, requester, rtnl.NewMirredAction(tcAction, tcDev))
		note := selftests.Msg{Type: unix.RTM_NEWACTION, Seq: req.seq, Pid: requester.Portid(), Group: unix.RTNLGRP_TC,
			Flags:  uint16(netlink.Request | netlink.Acknowledge | netlink.Create | netlink.Excl),
			Detail: fmt.Sprintf("mirred index %d", tcAction)}
		cloneFailure(t, s, req, subs, note, c.ackWant)
	}
}

// cloneFailure searches for the fail-nth that fails the clone for the
// walk's second subscriber and checks what it did: the first subscriber
// the notification, every other ENOBUFS (the failed clone, then
// p->failure), the ACK's errno ackWant, the action there. A fail-nth that
// fails a later clone (the allocations of a try can shift by one, so a
// pass can step over the second's) leaves more than one subscriber with
// the notification; the search goes on past it.
func cloneFailure(t selftests.T, s *selftests.NS, req *armedRequest, subs []*selftests.Sock, note selftests.Msg, ackWant int) {
	t.Helper()
	var tried []string
	pass := 1
	for n := 1; n <= maxFailNth; n++ {
		before := make([]uint64, len(subs))
		pollers := make([]*poller, len(subs))
		for i, k := range subs {
			if ev := pollSocket(t, k); ev != 0 {
				t.Fatalf("%s: before fail-nth %d it holds %s (%s), though it was drained after the try before; tried: %s",
					k, n, pollEvents(ev), queuedLines(k), strings.Join(tried, "; "))
			}
			before[i] = drops(t, s, k)
			pollers[i] = startPoller(t, k)
		}
		a := req.send(t, n)
		// Which subscribers hold an error, seen without taking it: the
		// pollers must see it first.
		failed := map[int]bool{}
		for i, k := range subs {
			if pollSocket(t, k)&unix.POLLERR != 0 {
				failed[i] = true
			}
		}
		whole := len(failed) == len(subs)-1
		if whole {
			checkPollers(t, pollers, subs, failed)
		}
		for _, p := range pollers {
			p.stop(t)
		}
		got := make([][]selftests.Line, len(subs))
		errs := make([]error, len(subs))
		for i, k := range subs {
			got[i], errs[i] = k.Transcript()
		}
		if !whole {
			switch {
			case len(failed) > 0:
				tried = append(tried, fmt.Sprintf("%d: %d of %d subscribers with an error (a later clone failed)", n, len(failed), len(subs)))
			case a.fired:
				tried = append(tried, fmt.Sprintf("%d: %s", n, a))
			default:
				// Every allocation succeeded: the request's effect
				// and notifications are whole, and go like any other
				// try's.
				tried = append(tried, fmt.Sprintf("%d: did not fire", n))
			}
			// Back to no action, the queues empty.
			if _, err := s.Ctl.Do(rtnl.DelMirredAction(tcAction)); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
				t.Fatalf("netns %s: after fail-nth %d: %v", s.Name, n, err)
			}
			for _, k := range subs {
				if _, err := k.Transcript(); err != nil {
					t.Fatalf("netns %s: after fail-nth %d: %v", s.Name, n, err)
				}
			}
			if !a.fired {
				if pass == cloneFailurePasses {
					t.Fatalf("netns %s: in %d passes over fail-nth 1, 2, ... until one did not fire (the RTM_NEWACTION made fewer allocations), no failed clone left all but one of the %d subscribers with an error (the walk's second clone failed, and p->failure for the rest); tried: %s",
						s.Name, pass, len(subs), strings.Join(tried, "; "))
				}
				pass++
				tried = append(tried, fmt.Sprintf("pass %d", pass))
				n = 0
			}
			continue
		}
		if !a.fired {
			t.Fatalf("netns %s: fail-nth %d did not fire, yet %d subscribers hold an error", s.Name, n, len(failed))
		}
		if selftests.Verbose() {
			t.Logf("netns %s: fail-nth %d (pass %d) failed the walk's second clone; before it: %s", s.Name, n, pass, strings.Join(tried, "; "))
		}
		for i, k := range subs {
			if failed[i] {
				k.ExpectLines(got[i], errs[i], selftests.RecvError(unix.ENOBUFS))
				if d := drops(t, s, k); d != before[i]+1 {
					t.Errorf("%s: Drops went from %d to %d; want one more: a failed clone, or a subscriber after it, is an overrun", k, before[i], d)
				}
				continue
			}
			k.ExpectLines(got[i], errs[i], note)
			if d := drops(t, s, k); d != before[i] {
				t.Errorf("%s: Drops went from %d to %d; want no change: it got the notification", k, before[i], d)
			}
		}
		if a.sendErr != nil || a.recvErr != nil || a.ackErrno != ackWant {
			t.Errorf("netns %s: RTM_NEWACTION with fail-nth %d: %s; want an ACK with errno %d (the subscriber whose copy failed had NETLINK_BROADCAST_ERROR: %v)",
				s.Name, n, a, ackWant, ackWant != 0)
		}
		expectMirredAction(t, s, true)
		return
	}
	t.Fatalf("netns %s: no failed clone with fail-nth 1 to %d; tried: %s", s.Name, maxFailNth, strings.Join(tried, "; "))
}

// cloneFailurePasses bounds the passes of the search. A pass takes tens of
// milliseconds; on P-fault (KASAN, kmemleak) the first found the clone in
// most runs.
const cloneFailurePasses = 10

// pollSocket is poll() on k with no wait: what it holds, taking nothing.
func pollSocket(t selftests.T, k *selftests.Sock) int16 {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(k.FD()), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) { // the Go runtime's preemption signal
			continue
		}
		if err != nil {
			t.Fatalf("%s: poll: %v", k, err)
		}
		return fds[0].Revents
	}
}

// checkPollers checks how the threads asleep in ppoll() on subs woke:
// those in failed with POLLERR alone (netlink_overrun() ->
// sk_error_report(): their queues are empty), the other with POLLIN (the
// notification).
func checkPollers(t selftests.T, pollers []*poller, subs []*selftests.Sock, failed map[int]bool) {
	t.Helper()
	for i, p := range pollers {
		r, woken := p.wait(t, pollerDeadline)
		want, not := int16(unix.POLLIN), int16(unix.POLLERR)
		if failed[i] {
			want, not = unix.POLLERR, unix.POLLIN
		}
		switch {
		case !woken:
			t.Errorf("%s: the thread in ppoll() on it was not woken within %v (ppoll then returned %s when stopped); want %s: the failed clone's error came without sk_error_report()",
				subs[i], pollerDeadline, r, pollEvents(want))
		case r.err != nil || r.sock&want == 0 || r.sock&not != 0 || r.stop != 0:
			t.Errorf("%s: ppoll() returned %s; want %s alone on the socket", subs[i], r, pollEvents(want))
		}
	}
}
