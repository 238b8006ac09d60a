// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"fmt"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// midwalkSubscribers are the subscribers walked after the first: the
// longer the walk, the likelier its first recipient frees its copy in the
// middle of it.
const midwalkSubscribers = 128

// midwalkRounds is how many notifications the case sends, each with the
// first recipient's reader asleep on another CPU.
const midwalkRounds = 16

// firstCopyFreedMidwalk: a notification whose first recipient reads and
// frees its copy while the broadcast is still walking the subscribers is
// delivered once to every subscriber and charged to each alone. The
// kernel's notification is not shared, so the walk hands its first
// recipient the skb itself; once that recipient's reader has freed its
// reference (on another CPU), the skb is unshared again and the walk
// takes it again for the next subscriber, orphaning it from the first,
// whose receive memory is given back. So, with the first-walked socket's
// reader asleep in recvfrom() on one CPU and RTM_NEWADDRs requested from
// another, 16 times: the reader gets each once, every one of 128
// subscribers walked after it gets each once, and every socket's
// /proc/net/netlink Rmem is 0 once it is read empty. The timing is the
// machine's: the case states what holds whether or not the reader won
// the race, and on one CPU it SKIPs.
//
// Kernel: nlmsg_notify() without NLM_F_ECHO: the skb's one reference;
// do_one_broadcast(): if (skb_shared(p->skb)) p->skb2 =
// skb_clone(p->skb, p->allocation); else { p->skb2 = skb_get(p->skb);
// skb_orphan(p->skb2); }; netlink_skb_set_owner_r(): WARN_ON(skb->sk !=
// NULL); the mc_list and the per-netns list add a new subscriber at their
// head (sk_add_bind_node(), hlist_add_head()), so the last to subscribe is
// walked first.
func firstCopyFreedMidwalk(t selftests.T) {
	reader, sender, ok := twoCPUs()
	if !ok {
		t.Skipf("needs two CPUs to run on: the first recipient's reader must free its copy while the walk goes on elsewhere")
	}
	s := selftests.NewNS(t, "S")
	subs := make([]*selftests.Sock, midwalkSubscribers)
	for i := range subs {
		subs[i] = s.Socket(fmt.Sprintf("w%d", i), selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	}
	first := s.Socket("first", selftests.Join(unix.RTNLGRP_IPV4_IFADDR)) // walked first
	if err := first.SetBlocking(true); err != nil {
		t.Fatalf("%v", err)
	}
	// A reader left asleep by a failed case wakes by itself: closing the
	// socket would not end its recvfrom().
	if err := first.SetReceiveTimeout(blockedSendTimeout); err != nil {
		t.Fatalf("%v", err)
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	restore := pinThread(t, sender)
	defer restore()

	var want []selftests.Msg
	for round := range midwalkRounds {
		got, tid := startPinnedRecv(first, reader)
		awaitAsleep(t, <-tid, unix.SYS_RECVFROM, first.String(), func(block bool) {
			select {
			case r := <-got:
				t.Fatalf("%s: recvfrom() returned before the notification was sent: %d bytes, %v", first, r.n, r.err)
			default:
				if block {
					t.Fatalf("%s: the reader's thread is gone before the notification was sent", first)
				}
			}
		})
		e := s.AddAddr() // its ACK: the walk is over
		r := <-got
		if r.err != nil {
			t.Fatalf("%s: round %d: recvfrom(): %v", first, round+1, r.err)
		}
		msgs, err := syscall.ParseNetlinkMessage(r.b)
		if err != nil || len(msgs) != 1 || msgs[0].Header.Type != unix.RTM_NEWADDR || msgs[0].Header.Seq != e.Seq {
			t.Fatalf("%s: round %d: read %d bytes (%v), want the RTM_NEWADDR of seq %d alone", first, round+1, len(r.b), err, e.Seq)
		}
		want = append(want, e.NewAddr())
	}
	if err := first.SetBlocking(false); err != nil {
		t.Fatalf("%v", err)
	}
	first.Expect()
	for _, k := range subs {
		k.Expect(want...)
	}
	for _, k := range append([]*selftests.Sock{first}, subs...) {
		if row, err := nlsock.ReadRow(s.NS, unix.NETLINK_ROUTE, k.Portid()); err != nil || row.Rmem != 0 {
			t.Errorf("%s: /proc/net/netlink once read empty: Rmem %d (%v), want 0: a copy charged to it was not given back", k, row.Rmem, err)
		}
	}
}

// recvResult is what a pinned recvfrom() read.
type recvResult struct {
	b   []byte
	n   int
	err error
}

// startPinnedRecv starts a blocking recvfrom() on k from a thread pinned to
// cpu; the thread's id comes first, then the result.
func startPinnedRecv(k *selftests.Sock, cpu int) (<-chan recvResult, <-chan int) {
	got := make(chan recvResult, 1)
	tid := make(chan int, 1)
	go func() {
		// The thread ends with the goroutine, pinned as it is.
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			tid <- unix.Gettid()
			got <- recvResult{err: fmt.Errorf("pin the reader to CPU %d: %w", cpu, err)}
			return
		}
		tid <- unix.Gettid()
		b := make([]byte, 1<<16)
		n, err := k.Bare().RecvFrom(b, 0)
		if err != nil {
			got <- recvResult{err: err}
			return
		}
		got <- recvResult{b: b[:n], n: n}
	}()
	return got, tid
}

// twoCPUs picks two of the CPUs the program may run on, or says there are
// fewer.
func twoCPUs() (a, b int, ok bool) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, 0, false
	}
	var cpus []int
	for i := 0; i < 1024 && len(cpus) < 2; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) < 2 {
		return 0, 0, false
	}
	return cpus[0], cpus[1], true
}

// pinThread pins the calling (locked) thread to cpu and returns what puts
// its CPUs back.
func pinThread(t selftests.T, cpu int) (restore func()) {
	t.Helper()
	var was, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Fatalf("sched_getaffinity: %v", err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		t.Fatalf("pin the sender to CPU %d: %v", cpu, err)
	}
	return func() {
		if err := unix.SchedSetaffinity(0, &was); err != nil {
			t.Errorf("put the sender's CPUs back: %v", err)
		}
	}
}
