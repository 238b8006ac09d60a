// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// socketCloseEndsDump: closing a socket in the middle of a dump ends the
// dump. While it runs, the socket's /proc/net/netlink line says Dump 1 and
// the netns's rtnetlink kernel socket is charged for the request it holds;
// after the close, the kernel socket is charged nothing, and a dump from
// another socket lists every address.
//
// Kernel: __netlink_dump_start(): refcount_inc(&skb->users); cb->skb =
// skb, the request, charged to the kernel socket that received it
// (netlink_unicast_kernel() -> netlink_skb_set_owner_r()); netlink_release():
// if (nlk->cb_running) { if (nlk->cb.done) nlk->cb.done(&nlk->cb);
// module_put(nlk->cb.module); kfree_skb(nlk->cb.skb); }, whose
// netlink_skb_destructor() uncharges it.
func socketCloseEndsDump(t selftests.T) {
	s := selftests.NewNS(t, "S")
	n, want := addressesForTwoParts(t, s)
	if k, err := nlsock.ReadRow(s.NS, unix.NETLINK_ROUTE, 0); err != nil || k.Rmem != 0 {
		t.Fatalf("netns S: the rtnetlink kernel socket before the dump: Rmem %d (%v), want 0: it holds no request between requests", k.Rmem, err)
	}
	d := s.Socket("d")
	req := startDump(t, d)
	first, err := d.Recv()
	if err != nil {
		t.Fatalf("%s: reading the dump's first part: %v", d, err)
	}
	if _, done := dumpPart(t, d, "first part", first, req.Header.Sequence); done {
		t.Skipf("the dump of %d addresses came in one datagram: there is no middle to close it in", n)
	}
	row, err := nlsock.ReadRow(s.NS, unix.NETLINK_ROUTE, d.Portid())
	if err != nil || !row.Dump {
		t.Errorf("%s: /proc/net/netlink during the dump: %+v, %v; want Dump 1", d, row, err)
	}
	k, err := nlsock.ReadRow(s.NS, unix.NETLINK_ROUTE, 0)
	if err != nil || k.Rmem == 0 {
		t.Errorf("netns S: the rtnetlink kernel socket during the dump: Rmem %d (%v), want the request's charge: the dump holds it", k.Rmem, err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	if k, err := nlsock.ReadRow(s.NS, unix.NETLINK_ROUTE, 0); err != nil || k.Rmem != 0 {
		t.Errorf("netns S: the rtnetlink kernel socket after %s was closed mid-dump: Rmem %d (%v), want 0: the dump's request was not freed", d, k.Rmem, err)
	}
	got, err := dumpAddrs(t, dumpConn(t, s, false), nil)
	if err != nil {
		t.Fatalf("netns S: a dump after the close: %v", err)
	}
	if len(got) != len(want) {
		t.Errorf("netns S: a dump after the close lists %d addresses, want %d", len(got), len(want))
	}
}

// socketCloseWakesBlockedSender: a process blocked sending to a socket
// whose receive buffer is full is woken when that socket closes, and its
// sendto() fails with ECONNREFUSED at once, not when its SO_SNDTIMEO runs
// out.
//
// Kernel: netlink_attachskb(): a full receiver (sk_rmem_alloc > sk_rcvbuf)
// makes a blocking sender sleep on nlk->wait; netlink_release():
// netlink_remove(), then wake_up_interruptible_all(&nlk->wait); the woken
// sender's netlink_unicast() retries, and netlink_getsockbyportid() finds
// nobody: -ECONNREFUSED.
func socketCloseWakesBlockedSender(t selftests.T) {
	s := selftests.NewNS(t, "S")
	r := s.Socket("r", selftests.RcvBuf(1))
	u := s.Socket("u")
	m := netlink.Message{Header: netlink.Header{Type: netlink.Noop, PID: u.Portid()}}
	// Fill r: the first message always fits, the rest until EAGAIN.
	for i := 0; ; i++ {
		m.Header.Sequence = rtnl.NextSeq()
		err := u.SendTo(m, r.Portid(), 0)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil || i == selftests.BurstSize {
			t.Fatalf("%s: filling %s with unicasts: message %d: %v, want EAGAIN by message %d", u, r, i+1, err, selftests.BurstSize)
		}
	}
	sent, _ := startBlockedSend(t, u, r)
	if err := r.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	if err, woken := awaitWoken(t, sent, fmt.Sprintf("%s: the sendto() blocked on full %s, after its close", u, r)); woken && !errors.Is(err, unix.ECONNREFUSED) {
		t.Errorf("%s: the blocked sendto() to %s, woken by its close: %v, want ECONNREFUSED", u, r, err)
	}
}

// awaitWoken waits for the result of a sendto() started by
// startBlockedSend whose wake-up the case has just caused; what names it.
// A sendto() still asleep after wokenDeadline fails the case, naming what
// it returned at its SO_SNDTIMEO, and woken is false.
func awaitWoken(t selftests.T, sent <-chan error, what string) (err error, woken bool) {
	t.Helper()
	select {
	case err := <-sent:
		return err, true
	case <-time.After(wokenDeadline):
		err := <-sent
		t.Errorf("%s: not woken within %v (it returned %v at its SO_SNDTIMEO of %v)", what, wokenDeadline, err, blockedSendTimeout)
		return err, false
	}
}

// blockedSendTimeout is the SO_SNDTIMEO of a blocked sender: far longer
// than a wake-up takes, so that one that never comes shows.
const blockedSendTimeout = 20 * time.Second

// wokenDeadline bounds the wait for a woken sender's sendto() to return:
// the wake-up comes from the receiver's own system call; the deadline is
// only for the woken thread to run again.
const wokenDeadline = 10 * time.Second

// startBlockedSend makes u blocking, with SO_SNDTIMEO blockedSendTimeout,
// starts a sendto() of an NLMSG_NOOP from u to dst on a thread of its
// own, and returns once /proc shows that thread asleep in it (dst must
// have no room for it, or be congested). The sendto()'s result comes on
// the channel; the message is returned as dst sees it.
func startBlockedSend(t selftests.T, u, dst *selftests.Sock) (<-chan error, selftests.Msg) {
	t.Helper()
	if err := u.SetBlocking(true); err != nil {
		t.Fatalf("%v", err)
	}
	if err := u.SetSendTimeout(blockedSendTimeout); err != nil {
		t.Fatalf("%v", err)
	}
	m := netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: rtnl.NextSeq(), PID: u.Portid(), Length: unix.NLMSG_HDRLEN}}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatalf("%v", err)
	}
	tids := make(chan int, 1)
	sent := make(chan error, 1)
	go func() {
		// The thread ends with the goroutine: it is not handed back.
		runtime.LockOSThread()
		tids <- unix.Gettid()
		sent <- u.Bare().SendTo(b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Pid: dst.Portid()})
	}()
	tid := <-tids
	awaitAsleep(t, tid, unix.SYS_SENDTO, u.String(), func(block bool) {
		var err error
		if block {
			err = <-sent
		} else {
			select {
			case err = <-sent:
			default:
				return
			}
		}
		t.Fatalf("%s: the blocking sendto() to %s returned before anything happened: %v", u, dst, err)
	})
	return sent, selftests.Msg{Type: unix.NLMSG_NOOP, Seq: m.Header.Sequence, Pid: u.Portid(), FromPid: u.Portid()}.Payload(nil)
}

// noENOBUFSEndsCongestion: a socket that overran is congested: every
// broadcast to it is dropped and every unicast sender blocks, even when
// its buffer has room again, until it is read empty. Setting
// NETLINK_NO_ENOBUFS ends that at once: the blocked sender is woken and
// delivers, and the next broadcast is queued. Room is made by raising the
// receive buffer, which does not end the congestion; nothing is read
// until the end.
//
// Kernel: netlink_overrun(): set_bit(NETLINK_S_CONGESTED) (unless
// NO_ENOBUFS); netlink_broadcast_deliver() and netlink_attachskb() refuse
// or wait while it is set; netlink_setsockopt(NETLINK_NO_ENOBUFS): if
// (val) { clear_bit(NETLINK_S_CONGESTED, &nlk->state);
// wake_up_interruptible(&nlk->wait); }.
func noENOBUFSEndsCongestion(t selftests.T) {
	s := selftests.NewNS(t, "S")
	r := s.Socket("r", selftests.RcvBuf(1), selftests.Join(burstGroup))
	sender := s.Socket("sender")
	burst := sender.Burst(burstGroup)
	if err := r.SetReceiveBuffer(1 << 20); err != nil {
		t.Fatalf("%v", err)
	}
	dropped := sender.MustMulticast(0, burstGroup)
	u := s.Socket("u")
	sent, unicast := startBlockedSend(t, u, r)
	r.SetFlag(unix.NETLINK_NO_ENOBUFS, true)
	if err, woken := awaitWoken(t, sent, fmt.Sprintf("%s: the sendto() blocked on congested %s, after its NETLINK_NO_ENOBUFS", u, r)); woken && err != nil {
		t.Errorf("%s: the sendto() blocked on congested %s, woken by NETLINK_NO_ENOBUFS: %v, want success", u, r, err)
	}
	after := sender.MustMulticast(0, burstGroup)
	got, err := r.Transcript()
	// The overrun (the error, then what was kept of the burst), then the
	// two that came after.
	want, _ := selftests.Overrun(got[:max(0, len(got)-2)], []selftests.Msg{selftests.RecvError(unix.ENOBUFS)}, burst)
	r.ExpectLines(got, err, append(want, unicast, after)...)
	if slices.ContainsFunc(got, func(l selftests.Line) bool { return l.Seq == dropped.Seq }) {
		t.Errorf("%s: the multicast sent while it was congested (seq %d) was queued although congestion drops it", r, dropped.Seq)
	}
}
