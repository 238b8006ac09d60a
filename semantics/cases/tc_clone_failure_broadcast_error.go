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
// fails), that subscriber gets ENOBUFS instead, once, and its drop count
// rises, and a thread asleep in ppoll() on it wakes with POLLERR; the
// subscriber before it on the walk got the notification. The
// request that caused the notification fails with ENOBUFS exactly when
// the subscriber whose copy failed set NETLINK_BROADCAST_ERROR; tc passes
// the broadcast's error back to its requester, and the action is there
// all the same. Two namespaces, each with two RTNLGRP_TC subscribers and
// a requester that adds a mirred action: in P neither subscriber sets
// NETLINK_BROADCAST_ERROR (the ACK has errno 0), in E both do (the ACK
// has ENOBUFS), so whichever the walk reaches second, the rule decides.
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
// p->delivery_failure = 1 -> return -ENOBUFS, which tcf_action_add()
// returns to netlink_rcv_skb() for the ACK.
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
		subs := []*selftests.Sock{s.Socket("a", opts...), s.Socket("b", opts...)}
		requester := s.Socket("requester")
		req := newArmedRequest(t, requester, rtnl.NewMirredAction(tcAction, tcDev))
		note := selftests.Msg{Type: unix.RTM_NEWACTION, Seq: req.seq, Pid: requester.Portid(), Group: unix.RTNLGRP_TC,
			Flags:  uint16(netlink.Request | netlink.Acknowledge | netlink.Create | netlink.Excl),
			Detail: fmt.Sprintf("mirred index %d", tcAction)}
		cloneFailure(t, s, req, subs, note, c.ackWant)
	}
}

// cloneFailure searches for the fail-nth that fails the clone for one of
// subs and checks what it did: that subscriber ENOBUFS, the other the
// notification, the ACK's errno ackWant, the action there.
func cloneFailure(t selftests.T, s *selftests.NS, req *armedRequest, subs []*selftests.Sock, note selftests.Msg, ackWant int) {
	t.Helper()
	var tried []string
	pass := 1
	for n := 1; n <= maxFailNth; n++ {
		var before [2]uint64
		var pollers [2]*poller
		for i, k := range subs {
			if ev := pollSocket(t, k); ev != 0 {
				t.Fatalf("%s: before fail-nth %d it holds %s (%s), though it was drained after the try before; tried: %s",
					k, n, pollEvents(ev), queuedLines(k), strings.Join(tried, "; "))
			}
			before[i] = drops(t, s, k)
			pollers[i] = startPoller(t, k)
		}
		a := req.send(t, n)
		// Which subscriber holds an error, seen without taking it: the
		// pollers must see it first.
		failed := -1
		for i, k := range subs {
			if pollSocket(t, k)&unix.POLLERR != 0 {
				if failed >= 0 {
					t.Fatalf("netns %s: fail-nth %d: both %s and %s hold an error; want one failed clone, for the subscriber the walk reaches second",
						s.Name, n, subs[0], subs[1])
				}
				failed = i
			}
		}
		if failed >= 0 {
			checkPollers(t, pollers, subs, failed)
		}
		for _, p := range pollers {
			p.stop(t)
		}
		var got [2][]selftests.Line
		var errs [2]error
		for i, k := range subs {
			got[i], errs[i] = k.Transcript()
		}
		if failed < 0 {
			if a.fired {
				tried = append(tried, fmt.Sprintf("%d: %s", n, a))
			} else {
				// Every allocation succeeded: the request's effect
				// and notifications are whole, and go like any other
				// try's.
				tried = append(tried, fmt.Sprintf("%d: did not fire", n))
			}
			// Back to no action, both queues empty.
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
					t.Fatalf("netns %s: in %d passes over fail-nth 1, 2, ... until one did not fire (the RTM_NEWACTION made fewer allocations), no clone of its notification failed; tried: %s",
						s.Name, pass, strings.Join(tried, "; "))
				}
				pass++
				tried = append(tried, fmt.Sprintf("pass %d", pass))
				n = 0
			}
			continue
		}
		if !a.fired {
			t.Fatalf("netns %s: fail-nth %d did not fire, yet %s holds an error", s.Name, n, subs[failed])
		}
		other := 1 - failed
		if selftests.Verbose() {
			t.Logf("netns %s: fail-nth %d (pass %d) failed the clone for %s; before it: %s", s.Name, n, pass, subs[failed], strings.Join(tried, "; "))
		}
		subs[failed].ExpectLines(got[failed], errs[failed], selftests.RecvError(unix.ENOBUFS))
		subs[other].ExpectLines(got[other], errs[other], note)
		if d := drops(t, s, subs[failed]); d != before[failed]+1 {
			t.Errorf("%s: Drops went from %d to %d; want one more: the failed clone is an overrun", subs[failed], before[failed], d)
		}
		if d := drops(t, s, subs[other]); d != before[other] {
			t.Errorf("%s: Drops went from %d to %d; want no change: it got the notification", subs[other], before[other], d)
		}
		if a.sendErr != nil || a.recvErr != nil || a.ackErrno != ackWant {
			t.Errorf("netns %s: RTM_NEWACTION with fail-nth %d: %s; want an ACK with errno %d (%s had NETLINK_BROADCAST_ERROR: %v)",
				s.Name, n, a, ackWant, subs[failed], ackWant != 0)
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

// checkPollers checks how the threads asleep in ppoll() on subs woke: the
// one whose clone failed with POLLERR alone (netlink_overrun() ->
// sk_error_report(): its queue is empty), the other with POLLIN (the
// notification).
func checkPollers(t selftests.T, pollers [2]*poller, subs []*selftests.Sock, failed int) {
	t.Helper()
	for i, p := range pollers {
		r, woken := p.wait(t, pollerDeadline)
		want, not := int16(unix.POLLIN), int16(unix.POLLERR)
		if i == failed {
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
